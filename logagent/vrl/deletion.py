"""``del(path, compact)``: the arguments of ``del``/``exists`` and VRL's compacting delete.

With ``compact`` true, a ``del`` that removed something also removes the
containers on the path that it left empty, from the innermost outwards, up to
but not including the root (VRL's behaviour: siblings are never touched, and a
delete that found nothing prunes nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ast import Argument, Call, Query, Variable
from .calls import match_arguments
from .expressions import Compiled, Evaluator
from .function import Param
from .runtime import Frame
from .value import Kind, kind_names

_PARAMS = {
    "del": (Param("target", Kind.ANY), Param("compact", Kind.BOOLEAN, False)),
    "exists": (Param("field", Kind.ANY),),
}


def path_arguments(compiler: Any, node: Call) -> tuple[Argument, Argument | None]:
    """(the path argument, the ``compact`` argument or None); E106/E107/E108 as for any call."""
    slots = match_arguments(compiler.diagnostics, node, _PARAMS[node.name])
    return slots[0], slots[1] if len(slots) > 1 else None


def compile_compact(compiler: Any, argument: Argument) -> Evaluator:
    """The ``compact`` argument: an infallible boolean (E630, E110 as VRL)."""
    value = argument.value
    compiled: Compiled = compiler.compile(value)
    if compiled.fallible:
        raise compiler.diagnostics.error("E630", "fallible argument", value.offset, value.end, (
            "this expression can fail", "handle the error before passing it in as an argument"))
    kinds = compiled.type.kinds
    if kinds != Kind.BOOLEAN:
        resolves = "any" if kinds == Kind.ANY else f"the exact type {kind_names(kinds)}"
        raise compiler.diagnostics.error("E110", "invalid argument type", value.offset, value.end, (
            f"this expression resolves to {resolves}",
            'but the parameter "compact" expects the exact type boolean'))
    return compiled.run


def deleter(compiler: Any, target: Any, compact_argument: Argument | None,
            make_deleter: Callable[[tuple[str | int, ...]], Evaluator]) -> Evaluator:
    """``del(target)``, or ``del(target, compact)``: when ``compact`` is true and the path was there, the
    containers the deletion emptied along the path are removed too."""
    root, _, segments = compiler.target_of(target)
    delete = make_deleter(segments)
    if compact_argument is None:
        return delete
    compact = compile_compact(compiler, compact_argument)
    if not segments:
        return delete
    present = compiler.compile_exists(target, root, segments).run
    base = target if isinstance(target, Variable) else target.base
    prefixes = [(compiler.compile(Query(base, segments[:depth], target.offset, target.end)).run,
                 make_deleter(segments[:depth])) for depth in range(len(segments) - 1, 0, -1)]

    def delete_compact(frame: Frame) -> Any:
        if not compact(frame) or not present(frame):
            return delete(frame)
        removed = delete(frame)
        for get, remove in prefixes:
            container = get(frame)
            if type(container) not in (dict, list) or container:
                break
            remove(frame)
        return removed

    return delete_compact
