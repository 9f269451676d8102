"""Function calls in batch programs: the declaration's implementation over a selection's values.

Arguments are matched and their types checked as ``calls.py`` does (the same
declarations, the same constant specialisation, the same error prefix). The
run-time kind check of an argument the compiler could not verify looks at the
distinct types of the values once, not at each value; records whose value
fails it leave with VRL's error and the call goes on for the others. The
function then runs over the records' values (``batch_functions.batch_form``
where it has one; once for all when every argument is uniform and the
function is pure).
"""

from __future__ import annotations

from typing import Any

from .ast import Call
from .batch_expressions import SIDE_EFFECTS, BatchEvaluator, Unsupported
from .batch_functions import batch_form
from .batch_run import BatchRun
from .batch_values import NULL, BatchErrors, Uniform, Values, apply
from .bound_calls import kind_error as _kind_error
from .calls import match_arguments
from .function import ArgInfo
from .runtime import KIND_BITS, CallError
from .stdlib import FUNCTIONS
from .value import Kind

_REGEX_BIT = int(Kind.REGEX)


def compile_batch_call(compiler: Any, node: Call) -> BatchEvaluator:
    function = FUNCTIONS.get(node.name)
    if function is None or node.name in SIDE_EFFECTS:
        raise Unsupported(f"function {node.name}")
    slots = match_arguments(compiler.diagnostics, node, function.params)
    args: list[BatchEvaluator | None] = []
    infos: list[ArgInfo | None] = []
    masks: list[tuple[int, int]] = []
    for index, (param, argument) in enumerate(zip(function.params, slots)):
        if argument is None:
            args.append(None)
            infos.append(None)
            continue
        compiled = compiler.compiled(argument.value)
        args.append(compiler.expression(argument.value))
        kinds = compiled.type.kinds
        if kinds & ~param.runtime_kinds:
            masks.append((index, int(param.runtime_kinds)))
        infos.append(ArgInfo(kinds, compiled.constant, compiled.value))
    implementation = function.implementation
    if function.specialize is not None:
        implementation = function.specialize(tuple(infos)) or implementation
    prefix = f'function call error for "{node.name}" at ({compiler.diagnostics.byte_span(node.offset, node.end)}): '
    pure = function.pure

    def wrap(error: Exception) -> Exception:
        return CallError(prefix, error)

    form = batch_form(node.name, implementation, tuple(infos), compiler.names)
    if form is None:
        def form(run: BatchRun, sel: list[int], values: list[Values], wrap: Any, source: Any) -> Values:
            return apply(implementation, sel, values, wrap, pure, source)

    if not masks:
        def call(run: BatchRun, sel: list[int]) -> Values:
            return form(run, sel, [NULL if arg is None else arg(run, sel) for arg in args], wrap, call)

        return call
    checks = tuple(masks)

    def checked_call(run: BatchRun, sel: list[int]) -> Values:
        values = [NULL if arg is None else arg(run, sel) for arg in args]
        bad = _kind_failures(run, values, checks, sel, wrap)
        if not bad:
            return form(run, sel, values, wrap, checked_call)
        keep = [p for p, i in enumerate(sel) if i not in bad]
        if not keep:
            raise BatchErrors(bad, [], [], checked_call)
        sel = [sel[p] for p in keep]
        values = [v if type(v) is Uniform else [v[p] for p in keep] for v in values]
        try:
            result = form(run, sel, values, wrap, checked_call)
        except BatchErrors as failure:
            failure.errors.update(bad)
            raise
        raise BatchErrors(bad, result, sel, checked_call)

    return checked_call


def _kind_failures(run: BatchRun, values: list[Values], checks: tuple[tuple[int, int], ...], sel: list[int],
                   wrap: Any) -> dict[int, Exception]:
    """Records whose argument is of a kind its parameter does not take: record -> VRL's error."""
    bad: dict[int, Exception] = {}
    for index, mask in checks:
        value = values[index]
        if type(value) is Uniform:
            if not KIND_BITS.get(type(value.value), _REGEX_BIT) & mask:
                error = wrap(_kind_error(value.value, mask))
                for i in sel:
                    bad.setdefault(i, error)
            continue
        for kind in run.types(value):
            if not KIND_BITS.get(kind, _REGEX_BIT) & mask:
                for i, v in zip(sel, value):
                    if type(v) is kind and i not in bad:
                        bad[i] = wrap(_kind_error(v, mask))
    return bad
