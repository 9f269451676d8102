"""Parsing functions on text: JSON, numbers, regexes, durations, key/value pairs."""

from __future__ import annotations

import re
import urllib.parse
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec

from ..function import FunctionError, TypeDef
from ..value import Kind
from .declare import ANY, ARR, BOOL, JSON, OBJ, RE, Args, B, F, I, always, function, opt, req
from .regex import Regex
from .types import _string_to_float, could_be_json

_decode = msgspec.json.decode
# an integer outside i64 has at least 19 digits: found by mapping digits to "0", the rest to " "
# ... and, for the depth check, "[" and "{" to "["
_MARKS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x5B if byte in b"[{" else 0x20 for byte in range(256))
_NINETEEN_DIGITS = b"0" * 19
_I64_MAX, _I64_MIN = 2**63 - 1, -(2**63)
_RAW_OBJECT = dict[str, msgspec.Raw]
_RAW_ARRAY = list[msgspec.Raw]


class JsonError(FunctionError):
    """parse_json's error; serde_json's wording of the problem is worked out when the message is read.

    Most malformed texts are plain log lines handled with ``??``, where the
    message is never read; ``str(error)`` is the message.
    """

    def __init__(self, prefix: str, text: str) -> None:
        super().__init__(prefix)
        self._prefix, self._text, self._message = prefix, text, None

    def __str__(self) -> str:
        if self._message is None:
            from .json_errors import serde_json_error  # noqa: PLC0415  (loaded with the first message read)

            self._message = self._prefix + serde_json_error(self._text)
            self.args = (self._message,)
        return self._message


def _fix_big_ints(value: Any) -> Any:
    """serde_json reads integers outside i64 as floats."""
    kind = type(value)
    if kind is int:
        return float(value) if value > _I64_MAX or value < _I64_MIN else value
    if kind is list:
        return [_fix_big_ints(item) for item in value]
    if kind is dict:
        return {key: _fix_big_ints(item) for key, item in value.items()}
    return value


def _depth_exceeds(text: str, limit: int) -> int | None:
    depth, in_string, escaped = 0, False, False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return index
        elif char in "]}":
            depth -= 1
    return None


def parse_json(value: str, max_depth: int | None, lossy: bool | None) -> Any:
    if value.startswith("\ufeff"):
        value = value[1:]
    if max_depth is not None:
        return _parse_json_depth(value, max_depth)
    if not could_be_json(value):
        raise JsonError("unable to parse json: ", value)
    data = value.encode("utf-8", "surrogatepass")
    try:
        parsed = _decode(data)
    except msgspec.DecodeError:
        raise JsonError("unable to parse json: ", value) from None
    if type(parsed) is dict and _flat_within_i64(parsed):
        return parsed  # depth 1, no integer to read as a float: nothing to check in the text
    if len(data) < 19:
        return parsed
    marks = data.translate(_MARKS)
    if _NINETEEN_DIGITS in marks:
        parsed = _fix_big_ints(parsed)
    if len(data) > 255 and marks.count(b"[") > 127:
        too_deep = _depth_exceeds(value, 127)
        if too_deep is not None:
            line = value.count("\n", 0, too_deep) + 1
            column = too_deep - (value.rfind("\n", 0, too_deep) + 1) + 1
            raise FunctionError(f"unable to parse json: recursion limit exceeded at line {line} column {column}")
    return parsed


def _flat_within_i64(parsed: dict[str, Any]) -> bool:
    """Whether an object holds no object or array and no integer outside i64."""
    for item in parsed.values():
        kind = type(item)
        if kind is int:
            if not _I64_MIN <= item <= _I64_MAX:
                return False
        elif kind is dict or kind is list:
            return False
    return True


def _parse_json_depth(value: str, max_depth: int) -> Any:
    if not 0 <= max_depth <= 255:
        raise FunctionError("out of range integral type conversion attempted")
    if not 1 <= max_depth <= 128:
        raise FunctionError(f"max_depth value should be greater than 0 and less than 128, got {max_depth}")
    try:
        _decode(value)
        return _fix_big_ints(_layer(value.strip().encode(), max_depth))
    except (msgspec.DecodeError, UnicodeEncodeError) as error:
        raise JsonError("unable to read json: ", value) from None


def _layer(raw: bytes, remaining: int) -> Any:
    if raw.startswith(b"{"):
        if remaining == 0:
            return raw.decode()
        return {key: _layer(bytes(item).strip(), remaining - 1) for key, item in _decode(raw, type=_RAW_OBJECT).items()}
    if raw.startswith(b"["):
        if remaining == 0:
            return raw.decode()
        return [_layer(bytes(item).strip(), remaining - 1) for item in _decode(raw, type=_RAW_ARRAY)]
    return _decode(raw)


def parse_int(value: str, base: int | None) -> int:
    digits = value
    if base is not None:
        if not 2 <= base <= 36:
            raise FunctionError(f'invalid base "{value}": must be be between 2 and 36 (inclusive)')
    elif not value:
        raise FunctionError("value is empty")
    elif value[0] == "0" and value[1:2] in ("b", "o", "x"):
        base, digits = {"b": 2, "o": 8, "x": 16}[value[1]], value[2:]
    else:
        base = 8 if value[0] == "0" else 10
    return _from_str_radix(digits, base)


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _from_str_radix(text: str, base: int) -> int:
    """Rust's ``i64::from_str_radix``."""
    if not text:
        raise FunctionError("could not parse integer: cannot parse integer from empty string")
    sign, body = (-1, text[1:]) if text[0] == "-" else (1, text[1:] if text[0] == "+" else text)
    if not body or any(_DIGITS.find(char.lower()) not in range(base) or not char.isascii() for char in body):
        raise FunctionError("could not parse integer: invalid digit found in string")
    number = sign * int(body, base)
    if number > _I64_MAX:
        raise FunctionError("could not parse integer: number too large to fit in target type")
    if number < _I64_MIN:
        raise FunctionError("could not parse integer: number too small to fit in target type")
    return number


def parse_float(value: str) -> float:
    return _string_to_float(value)


def _groups_to_object(pattern: Regex, groups: list[str | None], numeric: bool) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if numeric:
        for index, text in enumerate(group for group in groups if group is not None):
            result[str(index)] = text
    for name, index in pattern.names.items():
        result[name] = groups[index]
    return result


def parse_regex(value: str, pattern: Regex, numeric_groups: bool | None) -> dict[str, Any]:
    if not numeric_groups:
        named = pattern.named_captures(value)
        if named is None:
            raise FunctionError("could not find any pattern matches")
        return named
    groups = pattern.captures(value)
    if groups is None:
        raise FunctionError("could not find any pattern matches")
    return _groups_to_object(pattern, groups, True)


def parse_regex_all(value: Any, pattern: Regex, numeric_groups: bool | None) -> list[dict[str, Any]]:
    if type(value) is not str:
        from .display import value_kind

        raise FunctionError(f"expected string, got {value_kind(value)}")
    return [_groups_to_object(pattern, groups, bool(numeric_groups)) for groups in pattern.find_all(value)]


def _regex_fields(args: Args) -> dict[str, Kind] | None:
    pattern = args[1]
    if pattern is None or not pattern.constant:
        return None
    fields = {str(index): Kind.BYTES | Kind.NULL for index in range(pattern.value.group_count + 1)}
    fields.update({name: Kind.BYTES for name in pattern.value.names})
    return fields


def _parse_regex_type(args: Args) -> TypeDef:
    return TypeDef(OBJ, True, _regex_fields(args))


_DURATION = re.compile(r"(?P<value>[0-9]*\.?[0-9]+)\s?(?P<unit>[µa-z]{1,2})", re.IGNORECASE)
_UNITS = {
    "ns": Decimal("1e-9"), "us": Decimal("1e-6"), "µs": Decimal("1e-6"), "ms": Decimal("0.001"), "cs": Decimal("0.01"),
    "ds": Decimal("0.1"), "s": Decimal(1), "m": Decimal(60), "h": Decimal(3600), "d": Decimal(86400), "w": Decimal(604800),
}


def parse_duration(value: str, unit: str) -> float:
    factor = _UNITS.get(unit)
    if factor is None:
        raise FunctionError(f"unknown unit format: '{unit}'")
    total, rest = 0.0, value
    while rest:
        found = _DURATION.search(rest)
        if found is None:
            raise FunctionError(f"unable to parse duration: '{rest}'")
        multiplier = _UNITS.get(found.group("unit"))
        if multiplier is None:
            raise FunctionError(f"unknown duration unit: '{found.group('unit')}'")
        try:
            total += _decimal_to_f64(Decimal(found.group("value")) * multiplier / factor)
        except InvalidOperation as error:
            raise FunctionError(f"unable to parse number: {error}") from None
        rest = rest[found.end() :]
    return total


def _decimal_to_f64(number: Decimal) -> float:
    """rust_decimal's ``to_f64``: at most 28 decimal places, the mantissa as a float over the power of ten."""
    if number.as_tuple().exponent < -28:
        number = number.quantize(_SCALE_28)
    sign, digits, exponent = number.as_tuple()
    mantissa = float(int("".join(map(str, digits)) or "0") * (-1 if sign else 1))
    return mantissa * 10.0**exponent if exponent >= 0 else mantissa / 10.0**-exponent


_SCALE_28 = Decimal("1e-28")


def parse_query_string(value: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    query = value[1:] if value.startswith("?") else value
    for key, item in urllib.parse.parse_qsl(query, keep_blank_values=True, errors="replace"):
        if key not in result:
            result[key] = item
        elif type(result[key]) is list:
            result[key].append(item)
        else:
            result[key] = [result[key], item]
    return result


FUNCTIONS = [
    function("parse_json", (req("value", B), opt("max_depth", I), opt("lossy", BOOL)), always(JSON, True), parse_json),
    function("parse_int", (req("value", B), opt("base", I)), always(I, True), parse_int),
    function("parse_float", (req("value", B),), always(F, True), parse_float),
    function("parse_regex", (req("value", B), req("pattern", RE), opt("numeric_groups", BOOL)), _parse_regex_type, parse_regex),
    function("parse_regex_all", (req("value", ANY), req("pattern", RE), opt("numeric_groups", BOOL)), always(ARR, True), parse_regex_all),
    function("parse_duration", (req("value", B), req("unit", B)), always(F, True), parse_duration),
    function("parse_query_string", (req("value", B),), always(OBJ), parse_query_string),
]
