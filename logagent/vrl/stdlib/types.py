"""Type assertions (``string``, ``int``, ...), type predicates (``is_*``) and coercions (``to_*``)."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from ..function import ArgumentError, FunctionError, TypeDef
from ..value import Kind, Timestamp, kind_names, kind_of
from .declare import ANY, ARR, BOOL, OBJ, RE, TS, Args, B, F, I, NULL, always, fallible_if, fallible_unless, function, opt, req
from .display import rust_debug_str, to_string, value_kind
from .regex import Regex, RegexError

_I64_MAX, _I64_MIN = 2**63 - 1, -(2**63)
_RUST_INT = re.compile(r"[+-]?[0-9]+\Z")
_RUST_FLOAT = re.compile(r"[+-]?(?:(?i:inf|infinity|nan)|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\Z")
_TRUE = frozenset(("true", "t", "yes", "y"))
_FALSE = frozenset(("false", "f", "no", "n"))


def _assertion(name: str, kind: Kind, python_type: type) -> Any:
    message = f"expected {kind_names(kind)}, got "

    def assert_kind(value: Any) -> Any:
        if type(value) is python_type:
            return value
        raise FunctionError(message + value_kind(value))

    assert_kind.asserted_type = python_type  # type: ignore[attr-defined]  (a call checks it inline: bound_calls)
    return function(name, (req("value", ANY),), fallible_unless(kind), assert_kind)


def rust_parse_int(text: str) -> int:
    """Rust's ``str::parse::<i64>``; ValueError with Rust's message."""
    if not text:
        raise ValueError("cannot parse integer from empty string")
    if not _RUST_INT.match(text) or not text.isascii():
        raise ValueError("invalid digit found in string")
    number = int(text)
    if number > _I64_MAX:
        raise ValueError("number too large to fit in target type")
    if number < _I64_MIN:
        raise ValueError("number too small to fit in target type")
    return number


def rust_parse_float(text: str) -> float:
    """Rust's ``str::parse::<f64>`` (NaN included); ValueError with Rust's message."""
    if not text:
        raise ValueError("cannot parse float from empty string")
    if not _RUST_FLOAT.match(text) or not text.isascii():
        raise ValueError("invalid float literal")
    return float(text)


def _string_to_int(text: str) -> int:
    try:
        return rust_parse_int(text)
    except ValueError as error:
        raise FunctionError(f"Invalid integer {rust_debug_str(text)}: {error}") from None


def _string_to_float(text: str) -> float:
    try:
        number = rust_parse_float(text)
    except ValueError as error:
        raise FunctionError(f"Invalid floating point number {rust_debug_str(text)}: {error}") from None
    if number != number:
        raise FunctionError(f"NaN number not supported {rust_debug_str(text)}")
    return number


def _string_to_bool(text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE or text == "0":
        return False
    try:
        return rust_parse_int(text) != 0
    except ValueError:
        lower = text.lower()
        if lower in _TRUE:
            return True
        if lower in _FALSE:
            return False
    raise FunctionError(f"Invalid boolean value {rust_debug_str(text)}")


def _coerce_error(value: Any, into: str) -> FunctionError:
    return FunctionError(f"unable to coerce {value_kind(value)} into {into}")


def to_string_value(value: Any) -> str:
    if type(value) is str:
        return value
    if type(value) in (list, dict) or isinstance(value, Regex):
        raise _coerce_error(value, "string")
    return to_string(value)


def to_int(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return value
    if kind is str:
        return _string_to_int(value)
    if kind is float:
        if value != value:
            return 0
        return _I64_MAX if value >= 2**63 else _I64_MIN if value < -(2**63) else int(value)
    if kind is bool:
        return int(value)
    if value is None:
        return 0
    if kind is Timestamp:
        return value.nanos // 1_000_000_000
    raise _coerce_error(value, "integer")


def to_float(value: Any) -> float:
    kind = type(value)
    if kind is float:
        return value
    if kind is str:
        return _string_to_float(value)
    if kind is int or kind is bool:
        return float(value)
    if value is None:
        return 0.0
    if kind is Timestamp:
        return value.nanos / 1e9
    raise _coerce_error(value, "float")


def to_bool(value: Any) -> bool:
    kind = type(value)
    if kind is bool:
        return value
    if kind is str:
        return _string_to_bool(value)
    if kind is int or kind is float:
        return value != 0
    if value is None:
        return False
    raise _coerce_error(value, "boolean")


def to_regex(value: str) -> Regex:
    try:
        return Regex(value)
    except RegexError as error:
        raise FunctionError(f"could not create regex: {error}") from None


_JSON_VALIDATOR = msgspec.json.Decoder(msgspec.Raw)  # validates without building values (as serde's IgnoredAny)
_JSON_VARIANTS = {"{": "object", "[": "array", "t": "bool", "f": "bool", '"': "string", "n": "null"}
_JSON_WHITESPACE = " \n\t\r"
_JSON_STARTS = frozenset('{["-0123456789tfn')
_JSON_ENDS = frozenset('}]"0123456789el')


def could_be_json(text: str) -> bool:
    """False for most texts that are not JSON (their first or last character says so), cheaply."""
    first, last = text[:1], text[-1:]
    if first in _JSON_WHITESPACE or last in _JSON_WHITESPACE:
        text = text.strip(_JSON_WHITESPACE)
        first, last = text[:1], text[-1:]
    return first in _JSON_STARTS and last in _JSON_ENDS


def is_json(value: str, variant: str | None) -> bool:
    if not could_be_json(value):
        return False
    try:
        _JSON_VALIDATOR.decode(value)
    except (msgspec.DecodeError, UnicodeEncodeError):
        return False
    if variant is None:
        return True
    first = value.lstrip(_JSON_WHITESPACE)[:1]
    found = "number" if first == "-" or first.isdigit() else _JSON_VARIANTS.get(first)
    return found == variant


def _check_json_variant(args: Args) -> None:
    variant = args[1]
    if variant is not None and (not variant.constant or variant.value not in _JSON_VARIANT_NAMES):
        raise ArgumentError('invalid enum variant for argument "variant"; expected one of: "object", "array", "bool", "number", "string", "null"')


_JSON_VARIANT_NAMES = ("object", "array", "bool", "number", "string", "null")


def is_nullish(value: Any) -> bool:
    if value is None:
        return True
    if type(value) is not str:
        return False
    return value == "" or value == "-" or value.isspace() or _all_whitespace(value)


def _all_whitespace(text: str) -> bool:
    # Rust's char::is_whitespace (White_Space) also counts U+0085 and the separators str.isspace misses
    return all(char.isspace() or char in "\x85\u200e\u200f\u2028\u2029" for char in text)


def is_empty(value: Any) -> bool:
    return len(value) == 0


def _predicate(name: str, test: Any) -> Any:
    return function(name, (req("value", ANY),), always(BOOL), test)


FUNCTIONS = [
    _assertion("string", B, str),
    _assertion("int", I, int),
    _assertion("float", F, float),
    _assertion("bool", BOOL, bool),
    _assertion("object", OBJ, dict),
    _assertion("array", ARR, list),
    _assertion("timestamp", TS, Timestamp),
    function("to_string", (req("value", ANY),), fallible_if(B, ARR | OBJ | RE), to_string_value),
    function("to_int", (req("value", ANY),), fallible_if(I, B | ARR | OBJ | RE), to_int),
    function("to_float", (req("value", ANY),), fallible_if(F, B | ARR | OBJ | RE), to_float),
    function("to_bool", (req("value", ANY),), fallible_if(BOOL, B | TS | ARR | OBJ | RE), to_bool),
    function("to_regex", (req("value", B),), always(RE, True), to_regex),
    _predicate("is_string", lambda value: type(value) is str),
    _predicate("is_integer", lambda value: type(value) is int),
    _predicate("is_float", lambda value: type(value) is float),
    _predicate("is_boolean", lambda value: type(value) is bool),
    _predicate("is_timestamp", lambda value: type(value) is Timestamp),
    _predicate("is_array", lambda value: type(value) is list),
    _predicate("is_object", lambda value: type(value) is dict),
    _predicate("is_null", lambda value: value is None),
    _predicate("is_regex", lambda value: isinstance(value, Regex)),
    _predicate("is_nullish", is_nullish),
    function("is_json", (req("value", B), opt("variant", B)), always(BOOL), is_json, check=_check_json_variant),
    function("is_empty", (req("value", OBJ | ARR | B),), always(BOOL), is_empty),
]
