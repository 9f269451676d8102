"""Values as VRL prints them: Rust's float formatting, RFC 3339 timestamps, VRL's ``Display``."""

from __future__ import annotations

import datetime
import unicodedata
from decimal import Decimal
from typing import Any

from ..value import Timestamp

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_NANOS = 1_000_000_000


def float_to_string(value: float) -> str:
    """Rust's ``Display`` for f64: the shortest digits that read back, never an exponent."""
    if value != value or value in (float("inf"), float("-inf")):
        return "NaN" if value != value else ("inf" if value > 0 else "-inf")
    text = repr(value)
    if "e" in text:
        text = format(Decimal(text), "f")
    if text.endswith(".0"):
        text = text[:-2]
    return text


def utc_datetime(ts: Timestamp) -> tuple[datetime.datetime, int]:
    """The instant as an aware UTC datetime (to the second) and its nanoseconds."""
    seconds, nanos = divmod(ts.nanos, _NANOS)
    return _EPOCH + datetime.timedelta(seconds=seconds), nanos


def fraction_auto(nanos: int) -> str:
    """chrono's ``%.f`` / ``AutoSi``: nothing, or 3, 6 or 9 digits, whichever is exact."""
    if nanos == 0:
        return ""
    if nanos % 1_000_000 == 0:
        return f".{nanos // 1_000_000:03d}"
    if nanos % 1_000 == 0:
        return f".{nanos // 1_000:06d}"
    return f".{nanos:09d}"


def rfc3339(ts: Timestamp) -> str:
    """chrono's ``to_rfc3339_opts(SecondsFormat::AutoSi, true)``: ``2020-01-01T00:00:00.100Z``."""
    moment, nanos = utc_datetime(ts)
    return f"{_year(moment.year)}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}{fraction_auto(nanos)}Z"


def _year(year: int) -> str:
    return f"{year:04d}" if 0 <= year <= 9999 else f"{year:+05d}"


def rust_debug_str(text: str) -> str:
    """Rust's ``{:?}`` of a string: quoted, with ``\\``, ``"`` and unprintable characters escaped."""
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\r":
            out.append("\\r")
        elif char == "\t":
            out.append("\\t")
        elif char == "\0":
            out.append("\\0")
        elif char.isprintable() or char == " " or unicodedata.category(char) == "Zs":
            out.append(char)
        else:
            out.append(f"\\u{{{ord(char):x}}}")
    out.append('"')
    return "".join(out)


def display(value: Any) -> str:
    """VRL's ``Display`` of a value (assert_eq's message, log's message)."""
    kind = type(value)
    if kind is str:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return float_to_string(value)
    if value is None:
        return "null"
    if kind is dict:
        return "{ " + ", ".join(f'"{key}": {display(value[key])}' for key in sorted(value)) + " }"
    if kind is list:
        return "[" + ", ".join(display(item) for item in value) + "]"
    if kind is Timestamp:
        return f"t'{rfc3339(value)}'"
    return f"r'{value.pattern}'"


def to_string(value: Any) -> str:
    """``to_string`` of a scalar (the caller has excluded arrays, objects and regexes)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        return float_to_string(value)
    if value is None:
        return ""
    return rfc3339(value)


_PLAIN_FIELD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_0123456789@")
_SCALAR_KIND_NAMES = {str: "string", int: "integer", float: "float", bool: "boolean", Timestamp: "timestamp", type(None): "null"}


def path_field(name: str) -> str:
    """A field name as VRL prints it in a path: bare, or quoted when it is not ``[A-Za-z0-9_@]+``."""
    if name and all(char in _PLAIN_FIELD for char in name):
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def value_kind(value: Any) -> str:
    """VRL's display of a value's exact kind (``Kind::from(&value)``), as in "expected string, got [integer]"."""
    name = _SCALAR_KIND_NAMES.get(type(value))
    if name is not None:
        return name
    if type(value) is list:
        return "[" + ", ".join(value_kind(item) for item in value) + "]" if value else "array"
    if type(value) is dict:
        if not value:
            return "object"
        return "{ " + ", ".join(f"{path_field(key)}: {value_kind(value[key])}" for key in sorted(value)) + " }"
    return "regex"
