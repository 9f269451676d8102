"""``redact``: replace what constant filters match in strings, recursively through arrays and objects.

Filters and the redactor are constants (VRL requires it), so they are read
once per call site through ``Function.specialize``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any

from ..function import ArgumentError, Param
from .declare import ANY, ARR, OBJ, Args, B, function, opt, req
from .regex import LazyRegex, Regex
from ..function import TypeDef

REDACTED = "[REDACTED]"
# area 001-899 except 666, group 01-99, serial 0001-9999 (VRL's us_social_security_number filter)
_SSN = LazyRegex(
    "(?:00[1-9]|0[1-9][0-9]|[1-578][0-9]{2}|6[0-57-9][0-9]|66[0-57-9])-"
    "(?:0[1-9]|[1-9]0|[1-9][1-9])-"
    "(?:000[1-9]|00[1-9]0|0[1-9]00|[1-9]000|[1-9]{4})"
)
_SHA2 = {"SHA-224": "sha224", "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512",
         "SHA-512/224": "sha512_224", "SHA-512/256": "sha512_256"}
_SHA3 = {"SHA3-224": "sha3_224", "SHA3-256": "sha3_256", "SHA3-384": "sha3_384", "SHA3-512": "sha3_512"}

Replacer = Callable[[str], str]
Filter = list[Regex | str]


def _filters(value: Any) -> list[Filter]:
    if type(value) is not list:
        raise ArgumentError('expected static expression for argument "filters"')
    return [_filter(item) for item in value]


def _filter(item: Any) -> Filter:
    if isinstance(item, Regex):
        return [item]
    if type(item) is str:
        if item == "us_social_security_number":
            return [_SSN]
        raise ArgumentError("pattern cannot be used without arguments" if item == "pattern" else "unknown filter name")
    if type(item) is dict:
        kind = item.get("type")
        if kind is None:
            raise ArgumentError("filters specified as objects must have type parameter")
        if kind == "us_social_security_number":
            return [_SSN]
        if kind != "pattern":
            raise ArgumentError("type key in filters must be a string" if type(kind) is not str else "unknown filter name")
        patterns = item.get("patterns")
        if type(patterns) is not list:
            raise ArgumentError("pattern filter must have `patterns` specified")
        if any(not isinstance(p, Regex) and type(p) is not str for p in patterns):
            raise ArgumentError("`patterns` must be regular expressions")
        return list(patterns)
    raise ArgumentError("unknown literal for filter, must be a regex, filter name, or object")


def _hasher(algorithm: str, encoding: Any) -> Replacer:
    if encoding not in (None, "base64", "base16", "hex"):
        raise ArgumentError("unexpected encoding")

    def replace(original: str) -> str:
        digest = hashlib.new(algorithm, original.encode("utf-8", "surrogatepass")).digest()
        return digest.hex() if encoding in ("base16", "hex") else base64.b64encode(digest).decode("ascii")

    return replace


def _redactor(value: Any) -> Replacer:
    if value is None or value == "full":
        return lambda original: REDACTED
    if value == "sha2":
        return _hasher("sha512_256", None)
    if value == "sha3":
        return _hasher("sha3_512", None)
    if type(value) is str:
        raise ArgumentError("unknown name of redactor")
    if type(value) is not dict:
        raise ArgumentError("unknown literal for redactor, must be redactor name or object")
    kind = value.get("type")
    if kind == "full":
        return lambda original: REDACTED
    if kind == "text":
        text = value.get("replacement")
        if type(text) is not str:
            raise ArgumentError("`replacement` must be a string")
        return lambda original: text
    if kind in ("sha2", "sha3"):
        table, default = (_SHA2, "sha512_256") if kind == "sha2" else (_SHA3, "sha3_512")
        variant = value.get("variant")
        if variant is not None and variant not in table:
            raise ArgumentError("invalid sha2 variant")
        return _hasher(table[variant] if variant is not None else default, value.get("encoding"))
    raise ArgumentError("unknown `type` for `redactor`")


def _redact_text(text: str, filters: list[Filter], replacer: Replacer) -> str:
    for patterns in filters:
        for pattern in patterns:
            if type(pattern) is str:
                if pattern:
                    text = replacer(pattern).join(text.split(pattern))
            else:
                text = pattern.replace_with(text, replacer)
    return text


def _redact(value: Any, filters: list[Filter], replacer: Replacer) -> Any:
    kind = type(value)
    if kind is str:
        return _redact_text(value, filters, replacer)
    if kind is list:
        return [_redact(item, filters, replacer) for item in value]
    if kind is dict:
        return {key: _redact(item, filters, replacer) for key, item in value.items()}
    return value


def redact(value: Any, filters: list[Any], redactor: Any) -> Any:
    return _redact(value, _filters(filters), _redactor(redactor))


def _check(args: Args) -> None:
    for index in (1, 2):
        arg = args[index]
        if arg is not None and not arg.constant:
            raise ArgumentError(f'expected static expression for argument "{("filters", "redactor")[index - 1]}"')
    _filters(args[1].value if args[1] is not None else None)
    _redactor(args[2].value if args[2] is not None else None)


def _specialize(args: Args) -> Callable[..., Any]:
    filters = _filters(args[1].value)  # type: ignore[union-attr]
    replacer = _redactor(args[2].value if args[2] is not None else None)
    return lambda value, _filters_arg, _redactor_arg: _redact(value, filters, replacer)


def _type(args: Args) -> TypeDef:
    return TypeDef(args[0].kinds if args[0] is not None else B | OBJ | ARR, False)


FUNCTIONS = [
    # as VRL, a value of another kind is refused when known, and returned as it is at run time
    function("redact", (Param("value", B | OBJ | ARR, True, ANY & ~(B | OBJ | ARR)), req("filters", ARR),
                        opt("redactor", OBJ | B)), _type, redact,
             check=_check, specialize=_specialize),
]
