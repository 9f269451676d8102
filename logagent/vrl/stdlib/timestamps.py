"""Timestamp functions: format_timestamp, parse_timestamp, to_unix_timestamp, from_unix_timestamp."""

from __future__ import annotations

import datetime
from functools import lru_cache
from typing import Any

from ..function import ArgumentError, FunctionError
from ..value import Timestamp
from .chrono import FormatError, format_timestamp as chrono_format, timezone_named
from .chrono_parse import ParseError, parse, resolve
from .declare import Args, B, I, TS, always, function, opt, req
from .display import rust_debug_str

_UNITS = {"seconds": 1_000_000_000, "milliseconds": 1_000_000, "microseconds": 1_000, "nanoseconds": 1}
_ZONE_DIRECTIVES = ("%Z", "%z", "%:z", "%#z", "%+")


@lru_cache(maxsize=256)
def _timezone(name: str) -> datetime.tzinfo:
    zone = timezone_named(name)
    if zone is None:
        raise FunctionError(f"unable to parse timezone: {name}")
    return zone


def format_timestamp(value: Timestamp, format_: str, timezone: str | None) -> str:
    try:
        if timezone is None:
            return chrono_format(value, format_, None)
        zone = timezone_named(timezone)
        if zone is None:
            chrono_format(value, format_, None)  # chrono reports a bad format first
            raise FunctionError(f"unable to parse timezone: {timezone}")
        return chrono_format(value, format_, zone)
    except FormatError:
        raise FunctionError("invalid format") from None


def parse_timestamp(value: Any, format_: str, timezone: str | None) -> Timestamp:
    if type(value) is Timestamp:
        return value
    zone = _timezone(timezone) if timezone is not None else None
    has_zone = any(directive in format_ for directive in _ZONE_DIRECTIVES)
    try:
        return resolve(parse(value, format_), None if has_zone else zone, has_zone)
    except ParseError as error:
        raise FunctionError(f"Invalid timestamp {rust_debug_str(value)}: {error}") from None


def to_unix_timestamp(value: Timestamp, unit: str | None) -> int:
    if unit == "nanoseconds" and not -(2**63) <= value.nanos < 2**63:
        raise FunctionError("can't convert out of range timestamp")
    return value.nanos // _UNITS[unit or "seconds"]


def from_unix_timestamp(value: int, unit: str | None) -> Timestamp:
    return Timestamp(value * _UNITS[unit or "seconds"])


def _check_unit(args: Args) -> None:
    arg = args[1]
    if arg is not None and (not arg.constant or arg.value not in _UNITS):
        names = ", ".join(f'"{name}"' for name in _UNITS)
        raise ArgumentError(f'invalid enum variant for argument "unit"; expected one of: {names}')


FUNCTIONS = [
    function("format_timestamp", (req("value", TS), req("format", B), opt("timezone", B)), always(B, True), format_timestamp),
    function("parse_timestamp", (req("value", B | TS), req("format", B), opt("timezone", B)), always(TS, True), parse_timestamp),
    function("to_unix_timestamp", (req("value", TS), opt("unit", B)), always(I), to_unix_timestamp, check=_check_unit),
    function("from_unix_timestamp", (req("value", I), opt("unit", B)), always(TS, True), from_unix_timestamp, check=_check_unit),
]
