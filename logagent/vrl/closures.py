"""Functions that take a closure: ``for_each``, ``map_values``, ``map_keys``, ``filter``.

``f(value) -> |key, value| { ... }``: the body runs once per item of an object
(keys in sorted order, as VRL's maps are ordered) or an array (index, item),
with the two parameters as variables of the body's own scope (shadowing any
outer variable of the same name); variables of the enclosing scopes can be
read and assigned. The body may run zero times, so after the call every
variable it assigns has the union of its types before and after.
With ``recursive: true``, map_keys renames the keys of nested objects too
(each key, then those inside its value, arrays included), and map_values maps
each value and then the items of what the closure returned.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .ast import Call
from .calls import compile_arguments
from .expressions import Compiled, Evaluator
from .function import FunctionError, Param
from .runtime import CallError, Frame
from .stdlib.display import value_kind
from .types import item_type, BYTES, NULL, Type
from .value import Kind, kind_names

#: name -> (accepted kinds of the value, the closure's parameters, what the body must give, or None)
CLOSURE_FUNCTIONS: dict[str, tuple[Kind, tuple[str, ...], Kind | None]] = {
    "for_each": (Kind.OBJECT | Kind.ARRAY, ("key", "value"), None),
    "map_values": (Kind.OBJECT | Kind.ARRAY, ("value",), None),
    "map_keys": (Kind.OBJECT, ("key",), Kind.BYTES),
    "filter": (Kind.OBJECT | Kind.ARRAY, ("key", "value"), Kind.BOOLEAN),
}


def compile_closure_call(compiler: Any, node: Call) -> Compiled:
    diagnostics = compiler.diagnostics
    closure = node.closure
    assert closure is not None
    spec = CLOSURE_FUNCTIONS.get(node.name)
    if spec is None:
        raise diagnostics.error("E109", "unexpected closure", closure.offset, closure.end, (
            f'function "{node.name}" does not accept a closure',))
    accepted, params, body_kind = spec
    arguments = node.arguments
    if not arguments or len(arguments) > 2 or (len(arguments) == 2 and arguments[1].name not in (None, "recursive")):
        raise diagnostics.error("E106", "wrong number of function arguments", node.offset, node.end, (
            "this function takes a value and a closure",))
    recursive = _recursive(compiler, node) if len(arguments) == 2 else None
    value = compiler.compile(arguments[0].value)
    if value.fallible:
        raise diagnostics.error("E630", "fallible argument", arguments[0].value.offset, arguments[0].value.end, (
            "this expression can fail", "handle the error before passing it in as an argument"))
    if not value.type.kinds or value.type.kinds & ~accepted:
        raise diagnostics.error("E121", "type mismatch in closure parameter", node.offset, node.end, (
            "the closure tied to this function call expects a different input value",
            f"expression has an inferred type of {kind_names(value.type.kinds)} where "
            f"{kind_names(accepted).replace('array or object', 'an array or object')} was expected"))
    if len(closure.params) != len(params):
        raise diagnostics.error("E120", "invalid closure arity", node.offset, node.name_end, (
            f"this function requires a closure with {len(params)} argument(s)",
            f"but {len(closure.params)} argument(s) are supplied"))
    body, slots = _compile_body(compiler, closure, value.type, params, recursive is not None)
    if body_kind is not None and body.type.kinds != body_kind:
        raise diagnostics.error("E122", "type mismatch in closure return type", closure.body.offset,
                                closure.body.end, (f"block returns invalid value type, expected {kind_names(body_kind)}",))
    run = _RUNNERS[node.name](value.run, body.run, slots)
    result = NULL if node.name == "for_each" else Type(Kind.OBJECT) if node.name == "map_keys" else value.type
    if recursive is None:
        return Compiled(run, Type(result.kinds))
    flag, failure = recursive
    deep = _DEEP_RUNNERS[node.name](value.run, body.run, slots)
    return Compiled(_choose(flag.run, run, deep, failure is not None, compiler, node), Type(result.kinds),
                    failure is not None and not node.bang, failure=failure)


_RECURSIVE = (Param("recursive", Kind.BOOLEAN),)


def _recursive(compiler: Any, node: Call) -> tuple[Compiled, Any]:
    """``recursive:`` of map_keys / map_values compiled: (the flag, the E110 to report if its type is not sure)."""
    diagnostics = compiler.diagnostics
    argument = node.arguments[1]
    if node.name not in ("map_keys", "map_values"):
        raise diagnostics.error("E106", "wrong number of function arguments", node.arguments[0].offset, argument.end, (
            "too many function arguments", "this function takes a maximum of 1 argument"))
    (flag,), checks, _ = compile_arguments(compiler, _RECURSIVE, [argument])  # E630, E110
    if not checks:
        return flag, None
    kinds = flag.type.kinds  # type: ignore[union-attr]
    return flag, diagnostics.error("E110", "invalid argument type", argument.value.offset, argument.value.end, (
        "this expression resolves to any" if kinds == Kind.ANY else
        f"this expression resolves to one of {kind_names(kinds)}",
        'but the parameter "recursive" expects the exact type boolean'))


def _choose(flag: Evaluator, shallow: Evaluator, deep: Evaluator, checked: bool, compiler: Any,
            node: Call) -> Evaluator:
    """The call with ``recursive:`` read when it runs (a flag whose type is not sure is checked then)."""
    prefix = f'function call error for "{node.name}" at ({compiler.diagnostics.byte_span(node.offset, node.end)}): '

    def call(frame: Frame) -> Any:
        recursive = flag(frame)
        if checked and type(recursive) is not bool:
            raise CallError(prefix, FunctionError(f"expected boolean, got {value_kind(recursive)}"))
        return deep(frame) if recursive else shallow(frame)

    return call


def _compile_body(compiler: Any, closure: Any, value: Type, params: tuple[str, ...],
                  recursive: bool = False) -> tuple[Compiled, tuple[int, int]]:
    """The closure's body, and the slots of (key or index, value): -1 for one the closure does not take."""
    types = compiler.types
    kinds = value.kinds
    item = item_type(value) if kinds == Kind.ARRAY and not recursive else Type(Kind.ANY)
    before = types.snapshot()
    types.enter()
    try:
        key_type = BYTES if kinds == Kind.OBJECT else Type(Kind.INTEGER) if kinds == Kind.ARRAY else \
            Type(Kind.BYTES | Kind.INTEGER)
        declared = {role: types.declare(name, key_type if role == "key" else item)
                    for role, name in zip(params, closure.params)}
        body = compiler.compile_statements(closure.body.statements)
    finally:
        types.leave()
    after = types.snapshot()
    types.join([before, after])
    return body, (declared.get("key", -1), declared.get("value", -1))


def _items(value: Any) -> Any:
    return sorted(value.items()) if type(value) is dict else enumerate(value)


def _each(frame: Frame, value: Any, body: Evaluator, slots: tuple[int, int]) -> Iterator[tuple[Any, Any, Any]]:
    """(key or index, item, the body's value) for each item, the parameters bound for the body."""
    key_slot, value_slot = slots
    variables = frame.variables
    for key, item in _items(value):
        if key_slot >= 0:
            variables[key_slot] = key
        if value_slot >= 0:
            variables[value_slot] = item
        yield key, item, body(frame)


def _rebuilt(value: Any, pairs: list[tuple[Any, Any]]) -> Any:
    return dict(pairs) if type(value) is dict else [item for _, item in pairs]


def _for_each(value_run: Evaluator, body: Evaluator, slots: tuple[int, int]) -> Evaluator:
    def for_each(frame: Frame) -> Any:
        for _ in _each(frame, value_run(frame), body, slots):
            pass
        return None

    return for_each


def _map_values(value_run: Evaluator, body: Evaluator, slots: tuple[int, int]) -> Evaluator:
    def map_values(frame: Frame) -> Any:
        value = value_run(frame)
        return _rebuilt(value, [(key, result) for key, _, result in _each(frame, value, body, slots)])

    return map_values


def _map_keys(value_run: Evaluator, body: Evaluator, slots: tuple[int, int]) -> Evaluator:
    def map_keys(frame: Frame) -> Any:
        return {result: item for _, item, result in _each(frame, value_run(frame), body, slots)}

    return map_keys


def _filter(value_run: Evaluator, body: Evaluator, slots: tuple[int, int]) -> Evaluator:
    def filter_items(frame: Frame) -> Any:
        value = value_run(frame)
        return _rebuilt(value, [(key, item) for key, item, keep in _each(frame, value, body, slots) if keep is True])

    return filter_items


_RUNNERS = {"for_each": _for_each, "map_values": _map_values, "map_keys": _map_keys, "filter": _filter}


def _deep_map_keys(value_run: Evaluator, body: Evaluator, slots: tuple[int, int]) -> Evaluator:
    """map_keys with ``recursive: true``: each key renamed, then the objects in its value (in arrays too)."""
    def renamed(frame: Frame, value: Any) -> Any:
        if type(value) is dict:
            return {result: renamed(frame, item) for _, item, result in _each(frame, value, body, slots)}
        if type(value) is list:
            return [renamed(frame, item) for item in value]
        return value

    return lambda frame: renamed(frame, value_run(frame))


def _deep_map_values(value_run: Evaluator, body: Evaluator, slots: tuple[int, int]) -> Evaluator:
    """map_values with ``recursive: true``: each value mapped, then the items of what the closure gave."""
    def mapped(frame: Frame, value: Any) -> Any:
        pairs = []
        for key, _, result in _each(frame, value, body, slots):
            pairs.append((key, mapped(frame, result) if type(result) in (dict, list) else result))
        return _rebuilt(value, pairs)

    return lambda frame: mapped(frame, value_run(frame))


_DEEP_RUNNERS = {"map_values": _deep_map_values, "map_keys": _deep_map_keys}


__all__ = ["CLOSURE_FUNCTIONS", "compile_closure_call"]
