"""VRL values as Python values, and their kinds.

A VRL value is one of: ``None`` (null), ``bool`` (boolean), ``int``
(integer, within i64), ``float`` (float, never NaN), ``str`` (string: VRL's
strings are bytes, ours are text; functions that count or cut bytes in VRL
do so on the UTF-8 encoding), ``Timestamp`` (nanoseconds since the Unix
epoch, UTC), ``Regex`` (a compiled pattern, only from regex literals),
``list`` (array) and ``dict`` (object, string keys). Values passed to a
function are never changed by it: a function that returns a changed
collection returns a new one.
"""

from __future__ import annotations

import enum
from typing import Any


class Kind(enum.IntFlag):
    """The set of kinds an expression may have, as VRL's type checker sees it."""

    BYTES = 1
    INTEGER = 2
    FLOAT = 4
    BOOLEAN = 8
    TIMESTAMP = 16
    REGEX = 32
    NULL = 64
    ARRAY = 128
    OBJECT = 256
    ANY = 511
    SCALAR = BYTES | INTEGER | FLOAT | BOOLEAN | TIMESTAMP | REGEX | NULL


class Timestamp:
    """An instant with nanosecond precision (VRL's timestamp), immutable."""

    __slots__ = ("nanos",)

    def __init__(self, nanos: int) -> None:
        object.__setattr__(self, "nanos", nanos)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Timestamp is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is Timestamp and other.nanos == self.nanos

    def __lt__(self, other: Timestamp) -> bool:
        return self.nanos < other.nanos

    def __le__(self, other: Timestamp) -> bool:
        return self.nanos <= other.nanos

    def __hash__(self) -> int:
        return hash(("ts", self.nanos))

    def __repr__(self) -> str:
        return f"Timestamp({self.nanos})"


_KINDS: dict[type, Kind] = {
    type(None): Kind.NULL,
    bool: Kind.BOOLEAN,
    int: Kind.INTEGER,
    float: Kind.FLOAT,
    str: Kind.BYTES,
    Timestamp: Kind.TIMESTAMP,
    list: Kind.ARRAY,
    dict: Kind.OBJECT,
}

_NAMES: dict[Kind, str] = {
    Kind.BYTES: "string",
    Kind.INTEGER: "integer",
    Kind.FLOAT: "float",
    Kind.BOOLEAN: "boolean",
    Kind.TIMESTAMP: "timestamp",
    Kind.REGEX: "regex",
    Kind.NULL: "null",
    Kind.ARRAY: "array",
    Kind.OBJECT: "object",
}


def kind_of(value: Any) -> Kind:
    """The kind of a runtime value (a ``Regex`` is anything with ``is_vrl_regex``)."""
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind
    if getattr(value, "is_vrl_regex", False):
        return Kind.REGEX
    raise TypeError(f"not a VRL value: {type(value).__name__}")


def kind_names(kind: Kind) -> str:
    """VRL's wording of a kind set in messages: ``string or integer``, ``any``."""
    if kind == Kind.ANY:
        return "any"
    names = [name for flag, name in _NAMES.items() if kind & flag]
    if len(names) <= 1:
        return names[0] if names else "never"
    return ", ".join(names[:-1]) + " or " + names[-1]
