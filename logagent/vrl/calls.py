"""Compiling a function call against its declaration (``vrl/function.py``).

Arguments are matched to parameters (E106 too many, E107 missing, E108
unknown keyword), each argument's kinds are checked against its parameter's:
disjoint is E110, a partial overlap makes the call fallible and the value is
checked at run time (VRL's "at least one argument's type cannot be
verified"). A fallible argument is E630, ``f!`` on an infallible call E620.
"""

from __future__ import annotations

import difflib
from typing import Any

from .ast import Call
from .bound_calls import bound_call
from .bound_calls import kind_error as _kind_error
from .expressions import Compiled, Evaluator
from .function import ArgInfo, ArgumentError, FunctionError, Param
from .runtime import CallError, Frame, VrlRuntimeError, kind_bits
from .stdlib import FUNCTIONS, VRL_FUNCTION_NAMES
from .stdlib.display import value_kind
from .types import Type
from .value import Kind, kind_names


def compile_call(compiler: Any, node: Call) -> Compiled:
    diagnostics = compiler.diagnostics
    function = FUNCTIONS.get(node.name)
    if function is None:
        if node.name in VRL_FUNCTION_NAMES:
            raise diagnostics.error("E105", "call to undefined function", node.offset, node.name_end, (
                f'VRL function "{node.name}" is not implemented by logagent',))
        close = difflib.get_close_matches(node.name, sorted(FUNCTIONS), n=1)
        raise diagnostics.error("E105", "call to undefined function", node.offset, node.name_end,
                                ("undefined function",) + ((f'did you mean "{close[0]}"?',) if close else ()))
    shadowed: list[tuple[int, Any]] = []
    slots = match_arguments(diagnostics, node, function.params, shadowed)
    compiled, checks, arg_infos = compile_arguments(compiler, function.params, slots)
    for position, argument in shadowed:  # as VRL, an argument a later one replaced is checked too
        compile_arguments(compiler, function.params,
                           [argument if i == position else None for i in range(len(function.params))])
    if function.check is not None:
        try:
            function.check(arg_infos)
        except ArgumentError as exc:
            raise diagnostics.error("E610", "function compilation error", node.offset, node.end, (str(exc),)) from None
    type_def = function.type_def(arg_infos)
    implementation = function.implementation
    if function.specialize is not None:
        implementation = function.specialize(arg_infos) or implementation
    if not function.pure:
        compiler.impure = True
    fallible = type_def.fallible or bool(checks)
    # VRL accepts f!(...) on a call that cannot fail (no E620 in current VRL)
    items = type_def.items or {}
    fields = {key: Type(kind, element=Type(items[key]) if key in items else None)
              for key, kind in type_def.fields.items()} if type_def.fields is not None else None
    element = Type(type_def.element) if type_def.element is not None and type_def.kinds == Kind.ARRAY else None
    result = Type(type_def.kinds, fields if type_def.kinds == Kind.OBJECT else None, element=element)
    prefix = f'function call error for "{node.name}" at ({diagnostics.byte_span(node.offset, node.end)}): '
    runs = tuple(item.run if item is not None else None for item in compiled)
    params = function.params
    runtime_checks = tuple((index, params[index].runtime_kinds) for index, _ in checks
                           if compiled[index].type.kinds & ~params[index].runtime_kinds)  # type: ignore[union-attr]
    masks = tuple((index, int(kinds)) for index, kinds in runtime_checks)
    run = bound_call(implementation, compiled, masks, prefix)
    if run is not None:
        bare = bound_call(implementation, compiled, masks, None)
    else:
        run, bare = _caller(implementation, runs, runtime_checks, prefix)
    failure = unverified_argument(compiler, node, function.params, slots, compiled, checks[0]) \
        if checks and not node.bang else None
    return Compiled(run, result, fallible and not node.bang, bare=bare, failure=failure)


#: the assertion that makes a value of one kind a valid argument (VRL's suggested fix)
_GUARDS = {Kind.BYTES: "string", Kind.INTEGER: "int", Kind.FLOAT: "float", Kind.BOOLEAN: "bool",
           Kind.OBJECT: "object", Kind.ARRAY: "array", Kind.TIMESTAMP: "timestamp"}


def unverified_argument(compiler: Any, node: Call, params: tuple[Param, ...], slots: list[Any],
                         compiled: list[Compiled | None], check: tuple[int, Kind]) -> Any:
    """E110, as VRL reports a call whose argument's type cannot be verified and whose error is not handled.

    The fix puts VRL's type assertion around the argument (VRL suggests assigning it first, which a
    condition may not do).
    """
    index, kinds = check
    argument = slots[index].value
    got = compiled[index].type.kinds  # type: ignore[union-attr]
    text = compiler.text(argument)
    guard = _GUARDS.get(kinds)
    call = compiler.text(node)
    fix = (call[:argument.offset - node.offset] + f"{guard}!({text})" + call[argument.end - node.offset:]
           if guard is not None else f"{node.name}!({', '.join(compiler.text(a) for a in node.arguments)})")
    return compiler.diagnostics.error("E110", "invalid argument type", argument.offset, argument.end, (
        f"this expression resolves to {_kinds_text(got)}",
        f'but the parameter "{params[index].name}" expects {_kinds_text(kinds)}'), fix=fix)


def _kinds_text(kinds: Kind) -> str:
    if kinds == Kind.ANY:
        return "any"
    if kinds in _SINGLE_KINDS:
        return f"the exact type {kind_names(kinds)}"
    return f"one of {kind_names(kinds)}"


_SINGLE_KINDS = frozenset(Kind(1 << bit) for bit in range(9))


def match_arguments(diagnostics: Any, node: Call, params: tuple[Param, ...],
                    shadowed: list[tuple[int, Any]] | None = None) -> list[Any]:
    """The call's arguments in parameter order (None where absent): E106, E107, E108.

    VRL's binding: a positional argument takes the parameter at the positional index, which a keyword
    argument naming the parameter at that index also moves on (so a positional argument may follow
    keywords: ``replace("foo", pattern: "o", with: "bar", 1)`` gives ``count`` 1). A parameter given
    twice takes the last; the earlier ones go to ``shadowed`` (checked, never run).
    """
    arguments = node.arguments
    if len(arguments) > len(params):
        raise diagnostics.error("E106", "wrong number of function arguments", arguments[0].offset,
                                arguments[-1].end, (
            "too many function arguments",
            f"this function takes a maximum of {len(params)} argument{'s' if len(params) != 1 else ''}"))
    slots: list[Any] = [None] * len(params)
    index = 0
    names = [param.name for param in params]
    for argument in arguments:
        if argument.name is None:
            position = index
            index += 1
        elif argument.name in names:
            position = names.index(argument.name)
            if position == index:
                index += 1
        else:
            raise diagnostics.error("E108", "unknown function argument keyword", argument.offset, argument.end, (
                "unknown keyword", "this function accepts the following keywords: "
                + ", ".join(f'"{name}"' for name in names)))
        if slots[position] is not None and shadowed is not None:
            shadowed.append((position, slots[position]))
        slots[position] = argument
    for position, param in enumerate(params):
        if param.required and slots[position] is None:
            raise diagnostics.error("E107", "missing function argument", node.offset, node.end, (
                f'required argument missing: "{param.name}" (position {position})',))
    return slots


def compile_arguments(compiler: Any, params: tuple[Param, ...], slots: list[Any]) -> tuple[
        list[Compiled | None], list[tuple[int, Kind]], tuple[ArgInfo | None, ...]]:
    """Each argument compiled and checked against its parameter's kinds (E630, E110)."""
    diagnostics = compiler.diagnostics
    compiled: list[Compiled | None] = []
    checks: list[tuple[int, Kind]] = []
    infos: list[ArgInfo | None] = []
    for index, (param, argument) in enumerate(zip(params, slots)):
        if argument is None:
            compiled.append(None)
            infos.append(None)
            continue
        item = compiler.compile(argument.value)
        if item.fallible:
            raise diagnostics.error("E630", "fallible argument", argument.value.offset, argument.value.end, (
                "this expression can fail", "handle the error before passing it in as an argument"))
        kinds = item.type.kinds
        if not kinds & param.kinds:
            raise diagnostics.error("E110", "invalid argument type", argument.value.offset, argument.value.end, (
                f"this expression resolves to the exact type {kind_names(kinds)}",
                f'but the parameter "{param.name}" expects the exact type {kind_names(param.kinds)}'))
        if kinds & ~param.kinds:
            checks.append((index, param.kinds))
        compiled.append(item)
        infos.append(ArgInfo(kinds, item.constant, item.value))
    return compiled, checks, tuple(infos)


def _caller(implementation: Any, runs: tuple[Evaluator | None, ...], checks: tuple[tuple[int, Kind], ...],
            prefix: str) -> tuple[Evaluator, Evaluator | None]:
    """(the call, the same call raising its function's error unwrapped, when it has a fast form)."""
    masks = tuple((index, int(kinds)) for index, kinds in checks)
    present = runs
    while present and present[-1] is None:
        present = present[:-1]
    if 1 <= len(present) <= 2 and all(run is not None for run in present) and len(masks) <= 1:
        tail = (None,) * (len(runs) - len(present))
        return _small_call(implementation, present, tail, masks, prefix), \
            _small_call(implementation, present, tail, masks, None)

    def call(frame: Frame) -> Any:
        try:
            values = [None if run is None else run(frame) for run in runs]
            for index, mask in masks:
                if not kind_bits(values[index]) & mask:
                    raise _kind_error(values[index], mask)
            return implementation(*values)
        except (FunctionError, VrlRuntimeError) as exc:
            raise CallError(prefix, exc) from None

    return call, None


def _small_call(implementation: Any, runs: tuple[Evaluator, ...], tail: tuple[None, ...],
                masks: tuple[tuple[int, int], ...], prefix: str | None) -> Evaluator:
    """A call of one or two arguments, all present, at most one checked at run time.

    ``prefix`` None: the function's error goes out unwrapped (for ``??``).
    """
    index, mask = masks[0] if masks else (-1, 0)
    if len(runs) == 1:
        only = runs[0]
        if index < 0 and prefix is None:
            return (lambda frame: implementation(only(frame), *tail)) if tail else \
                (lambda frame: implementation(only(frame)))

        def call1(frame: Frame) -> Any:
            try:
                value = only(frame)
                if index == 0 and not kind_bits(value) & mask:
                    raise _kind_error(value, mask)
                return implementation(value, *tail)
            except (FunctionError, VrlRuntimeError) as exc:
                if prefix is None:
                    raise
                raise CallError(prefix, exc) from None

        return call1
    first, second = runs

    def call2(frame: Frame) -> Any:
        try:
            a, b = first(frame), second(frame)
            if index >= 0 and not kind_bits(b if index else a) & mask:
                raise _kind_error(b if index else a, mask)
            return implementation(a, b, *tail)
        except (FunctionError, VrlRuntimeError) as exc:
            if prefix is None:
                raise
            raise CallError(prefix, exc) from None

    return call2
