"""The contract between the VRL compiler and the functions of ``stdlib/``.

A function is declared once, as data: its parameters (name, accepted kinds,
required or not), how its result's type and fallibility follow from the
arguments' types (``type_def``), an optional compile-time check of constant
arguments, and its implementation on plain values (see ``value.py``).

The compiler type-checks a call against this declaration: an unknown
function, a missing required or an unknown named argument is a compile
error; an argument whose possible kinds are not all among the parameter's
kinds makes the call fallible (VRL's "at least one argument's type cannot be
verified"), and so does ``type_def(...).fallible``. At run time the
implementation is called with the argument values positionally, in
``params`` order (None for an absent optional argument), after the compiler
has checked each value's kind against the parameter's kinds; it returns a
value or raises ``FunctionError`` with VRL's message (the compiler adds the
``function call error for "name" at (a:b):`` prefix).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from msgspec import Struct, field

from .value import Kind


class FunctionError(Exception):
    """A function's runtime error, worded as VRL words it."""


class ArgumentError(Exception):
    """A constant argument that can never be valid (a compile-time error)."""


class Param(Struct, frozen=True):
    name: str
    kinds: Kind
    required: bool = True
    #: kinds VRL's type check refuses (E110, or a fallible call) but the function takes at run time
    #: without an error (``redact`` returns them as they are)
    tolerated: Kind = Kind(0)

    @property
    def runtime_kinds(self) -> Kind:
        """The kinds a call checks its argument against at run time."""
        return self.kinds | self.tolerated


class ArgInfo(Struct, frozen=True):
    """What the compiler knows of one argument: its kinds, and its value if constant."""

    kinds: Kind
    constant: bool = False
    value: Any = None


class TypeDef(Struct, frozen=True):
    """A call's result: its kinds, whether it can fail, and known object fields.

    ``fields`` lists fields known to be present in an object result with
    their kinds (``parse_regex`` knows its named groups); ``None`` when
    nothing is known.
    """

    kinds: Kind
    fallible: bool
    fields: Mapping[str, Kind] | None = None
    #: for array fields of ``fields``: the kinds of every item
    items: Mapping[str, Kind] | None = None
    #: for an array result: the kinds of every item (``split`` gives strings)
    element: Kind | None = None


#: (arguments in ``params`` order, None where absent) -> result type
TypeDefFn = Callable[[tuple[ArgInfo | None, ...]], TypeDef]


class Function(Struct, frozen=True):
    name: str
    params: tuple[Param, ...]
    type_def: TypeDefFn
    implementation: Callable[..., Any]
    #: raises ArgumentError for constant arguments that can never be valid
    check: Callable[[tuple[ArgInfo | None, ...]], None] | None = None
    #: the function reads or writes outside its arguments (now, uuid_v4, log, get_env_var)
    pure: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: called once at compile time with the arguments' infos; a callable it returns
    #: replaces ``implementation`` for that call (same positional arguments), e.g. with
    #: constant filters, patterns or formats parsed once; None keeps ``implementation``
    specialize: Callable[[tuple[ArgInfo | None, ...]], Callable[..., Any] | None] | None = None


def fixed(kinds: Kind, fallible: bool = False) -> TypeDefFn:
    """A ``type_def`` for functions whose result does not depend on their arguments."""
    result = TypeDef(kinds, fallible)
    return lambda args: result
