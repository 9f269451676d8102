"""The post-processing filters of a grok capture (``%{notSpace:code:integer}``), as VRL's Datadog grok has them.

``make_filter(name, args)`` returns a function of the captured value; it
returns the new value, ``None`` for null (the field is left out) or raises
``FilterFailed`` (the field is left out too: VRL counts it and goes on).
A filter VRL has that this module lacks is refused by name.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from typing import Any

from ..function import ArgumentError

Filter = Callable[[Any], Any]
_I64_MAX, _I64_MIN = 2**63 - 1, -(2**63)
#: Rust's ``str::parse::<i64>`` and ``str::parse::<f64>`` accept these texts (ASCII digits only)
_RUST_INT = re.compile(r"[+-]?[0-9]+")
_RUST_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.IGNORECASE)
#: filters of VRL's grok not implemented here
_NOT_IMPLEMENTED = frozenset({"json", "rubyhash", "querystring", "xml", "array", "keyvalue"})


class FilterFailed(Exception):
    """The filter cannot apply to this value."""


def _as_i64(number: float) -> int:
    """Rust's ``f64 as i64`` (saturating, NaN is 0)."""
    if number != number:
        return 0
    if number >= 2.0**63:
        return _I64_MAX
    if number <= -(2.0**63):
        return _I64_MIN
    return int(number)


def _integral(number: float) -> int | float:
    """A float that survives a round trip through i64 as an integer, as VRL's number filters give it."""
    whole = _as_i64(number)
    return whole if float(whole) == number else number


def _to_float(value: Any) -> float:
    if type(value) is not str or _RUST_FLOAT.fullmatch(value) is None:
        raise FilterFailed
    return float(value)


def _integer(value: Any) -> int:
    if type(value) is not str or _RUST_INT.fullmatch(value) is None:
        raise FilterFailed
    number = int(value)
    if not _I64_MIN <= number <= _I64_MAX:
        raise FilterFailed
    return number


def _integer_ext(value: Any) -> int:
    return _as_i64(_to_float(value))


def _number(value: Any) -> int | float:
    number = _to_float(value)
    return _integral(0.0 if number != number else number)


def _text(change: Callable[[str], Any]) -> Filter:
    def apply(value: Any) -> Any:
        if type(value) is not str:
            raise FilterFailed
        return change(value)

    return apply


def _scale(factor: float) -> Filter:
    def apply(value: Any) -> Any:
        kind = type(value)
        if kind is int or kind is float:
            number = float(value)
        else:
            number = _to_float(value)
        return _integral(number * factor)

    return apply


def _null_if(null: str) -> Filter:
    def apply(value: Any) -> Any:
        if type(value) is not str:
            raise FilterFailed
        return None if value == null else value

    return apply


def _boolean(value: str) -> bool:
    return len(value) == 4 and value.isascii() and value.lower() == "true"


_SIMPLE: dict[str, Filter] = {
    "integer": _integer,
    "integerExt": _integer_ext,
    "number": _number,
    "numberExt": _number,
    "lowercase": _text(str.lower),
    "uppercase": _text(str.upper),
    "boolean": _text(_boolean),
    "decodeuricomponent": _text(lambda text: urllib.parse.unquote(text, errors="replace")),
}


def make_filter(name: str, args: list[Any] | None) -> Filter:
    """The filter ``name(args)``; ArgumentError (worded as VRL's) when it cannot be built."""
    if name == "scale":
        factor = args[0] if args else None
        if type(factor) not in (int, float):
            raise ArgumentError(f"invalid arguments for the function '{name}'")
        return _scale(float(factor))
    if name == "nullIf":
        null = args[0] if args else None
        if type(null) is not str:
            raise ArgumentError(f"invalid arguments for the function '{name}'")
        return _null_if(null)
    simple = _SIMPLE.get(name)
    if simple is not None:
        return simple
    if name in _NOT_IMPLEMENTED:
        raise ArgumentError(f"grok filter '{name}' is not implemented by logagent")
    raise ArgumentError(f"unknown filter '{name}'")
