"""Short ways to declare functions per ``vrl.function`` (shared by every family module)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..function import ArgInfo, Function, Param, TypeDef, TypeDefFn
from ..value import Kind

Args = tuple[ArgInfo | None, ...]

B, I, F, BOOL, TS, RE, NULL, ARR, OBJ, ANY = (
    Kind.BYTES,
    Kind.INTEGER,
    Kind.FLOAT,
    Kind.BOOLEAN,
    Kind.TIMESTAMP,
    Kind.REGEX,
    Kind.NULL,
    Kind.ARRAY,
    Kind.OBJECT,
    Kind.ANY,
)
#: what JSON can hold (parse_json's result)
JSON = B | I | F | BOOL | NULL | ARR | OBJ


def req(name: str, kinds: Kind) -> Param:
    return Param(name, kinds, True)


def opt(name: str, kinds: Kind) -> Param:
    return Param(name, kinds, False)


def function(
    name: str,
    params: tuple[Param, ...],
    type_def: TypeDefFn,
    implementation: Callable[..., Any],
    *,
    check: Callable[[Args], None] | None = None,
    pure: bool = True,
    extra: Mapping[str, Any] | None = None,
    specialize: Callable[[Args], Callable[..., Any] | None] | None = None,
) -> Function:
    return Function(name, params, type_def, implementation, check, pure, extra or {}, specialize)


def always(kinds: Kind, fallible: bool = False) -> TypeDefFn:
    result = TypeDef(kinds, fallible)
    return lambda args: result


def fallible_if(kinds: Kind, bad: Kind, index: int = 0) -> TypeDefFn:
    """Result ``kinds``, fallible when argument ``index`` may be of a ``bad`` kind."""
    fallible, infallible = TypeDef(kinds, True), TypeDef(kinds, False)

    def type_def(args: Args) -> TypeDef:
        arg = args[index]
        return fallible if arg is not None and arg.kinds & bad else infallible

    return type_def


def fallible_unless(kinds: Kind, index: int = 0) -> TypeDefFn:
    """Result ``kinds``, fallible unless argument ``index`` is surely of ``kinds``."""
    return fallible_if(kinds, Kind.ANY & ~kinds, index)


def constant(args: Args, index: int) -> tuple[bool, Any]:
    """(True, value) when argument ``index`` is a constant, else (False, None); absent is (True, None)."""
    arg = args[index] if index < len(args) else None
    if arg is None:
        return True, None
    return arg.constant, arg.value
