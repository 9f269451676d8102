"""``unnest(path)``: one copy of the path's root per item of the array at the path, holding that item.

Like ``del`` and ``exists``, ``unnest`` takes a path, not a value: the root it
copies is the event (``.a``), the metadata (``%a``) or a variable (``x.a``).
Its argument is checked as any call's (E106/E107/E108, E630, E110 for a path
that cannot be an array; fallible when it may not be one); anything but such
a path is VRL's E610 (E400, "unexpected expression type"). In a remap program
``. = unnest!(.messages)`` makes the event an array, which the transform emits
as one record per item, as Vector does.
"""

from __future__ import annotations

from typing import Any

from .ast import Call, Query, Variable
from .calls import match_arguments, unverified_argument
from .expressions import Compiled
from .function import FunctionError, Param
from .runtime import CallError, Frame
from .stdlib.paths import unnest
from .types import Type, item_type, with_field
from .value import Kind, kind_names

_PARAMS = (Param("path", Kind.ARRAY),)


def compile_unnest(compiler: Any, node: Call) -> Compiled:
    diagnostics = compiler.diagnostics
    slots = match_arguments(diagnostics, node, _PARAMS)
    value = slots[0].value
    compiled = compiler.compile(value)
    if compiled.fallible:
        raise diagnostics.error("E630", "fallible argument", value.offset, value.end, (
            "this expression can fail", "handle the error before passing it in as an argument"))
    kinds = compiled.type.kinds
    if not kinds & Kind.ARRAY:
        raise diagnostics.error("E110", "invalid argument type", value.offset, value.end, (
            f"this expression resolves to the exact type {kind_names(kinds)}",
            'but the parameter "path" expects the exact type array'))
    if not isinstance(value, Query) or not isinstance(value.base, (str, Variable)):
        raise diagnostics.error("E610", "function compilation error: error[E400] unexpected expression type",
                                node.offset, node.end, ('unexpected expression for argument "path"', "expected: query"))
    root = compiler.compile(Query(value.base, (), value.offset, value.end) if isinstance(value.base, str)
                            else value.base)
    get_root, segments = root.run, value.segments
    prefix = f'function call error for "unnest" at ({diagnostics.byte_span(node.offset, node.end)}): '

    def run(frame: Frame) -> Any:
        try:
            return unnest(get_root(frame), segments)
        except ValueError as exc:
            raise CallError(prefix, FunctionError(str(exc))) from None

    checked = bool(kinds & ~Kind.ARRAY)
    failure = unverified_argument(compiler, node, _PARAMS, slots, [compiled], (0, Kind.ARRAY)) \
        if checked and not node.bang else None
    return Compiled(run, Type(Kind.ARRAY, element=with_field(root.type, segments, item_type(compiled.type))),
                    checked and not node.bang, failure=failure)
