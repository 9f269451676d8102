"""Encoders and hashes: encode_json, encode_key_value, encode_logfmt, md5, sha1, sha2, uuid_v4."""

from __future__ import annotations

import base64
import hashlib
import uuid
from typing import Any

import msgspec

from ..function import ArgumentError, FunctionError, TypeDef
from ..value import Timestamp
from .declare import ANY, ARR, BOOL, OBJ, Args, B, always, function, opt, req
from .display import float_to_string, rfc3339, value_kind


def _json_hook(value: Any) -> Any:
    if type(value) is Timestamp:
        return rfc3339(value)
    if getattr(value, "is_vrl_regex", False):
        return value.pattern
    raise TypeError(f"not a VRL value: {type(value).__name__}")


_ENCODER = msgspec.json.Encoder(enc_hook=_json_hook, order="sorted")


def encode_json(value: Any, pretty: bool | None) -> str:
    encoded = _ENCODER.encode(value)
    if pretty:
        encoded = msgspec.json.format(encoded, indent=2)
    return encoded.decode("utf-8")


def _kv_flatten(value: Any, key: str, into: dict[str, Any]) -> None:
    if type(value) is dict:
        for child in value:
            _kv_flatten(value[child], f"{key}.{child}", into)
    elif type(value) is list:
        for index, item in enumerate(value):
            _kv_flatten(item, f"{key}.{index}", into)
    else:
        into[key] = value


def _kv_text(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return value
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is float:
        return float_to_string(value)
    if kind is Timestamp:
        return rfc3339(value)
    if kind is int:
        return str(value)
    return value.pattern


def _kv_quote(text: str) -> str:
    quote = any(char.isspace() or char in '"=' for char in text)
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\\\n")
    return f'"{escaped}"' if quote else escaped


def encode_key_value(
    value: dict[str, Any],
    fields_ordering: list[Any] | None,
    key_value_delimiter: str | None,
    field_delimiter: str | None,
    flatten_boolean: bool | None,
) -> str:
    kvd = "=" if key_value_delimiter is None else key_value_delimiter
    fd = " " if field_delimiter is None else field_delimiter
    ordering = []
    for index, field in enumerate(fields_ordering or ()):
        if type(field) is not str:
            raise FunctionError(f"invalid field value type at index {index}: expected string, got {value_kind(field)}")
        ordering.append(field)
    flat: dict[str, Any] = {}
    for key in sorted(value):
        _kv_flatten(value[key], key, flat)
    flat = dict(sorted(flat.items()))
    out: list[str] = []

    def emit(key: str, item: Any) -> None:
        if flatten_boolean and type(item) is bool:
            if item:
                out.append(_kv_quote(key))
            return
        out.append(f"{_kv_quote(key)}{kvd}{_kv_quote(_kv_text(item))}")

    for field in ordering:
        if field in flat:
            emit(field, flat.pop(field))
    for key, item in flat.items():
        emit(key, item)
    return fd.join(out)


def encode_logfmt(value: dict[str, Any], fields_ordering: list[Any] | None) -> str:
    return encode_key_value(value, fields_ordering, "=", " ", True)


def _fields_type(args: Args) -> TypeDef:
    return TypeDef(B, args[1] is not None)


def md5(value: Any) -> str:
    if type(value) is not str:
        raise FunctionError(f"expected string, got {value_kind(value)}")
    return hashlib.md5(value.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


def sha1(value: str) -> str:
    return hashlib.sha1(value.encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


SHA2_VARIANTS = {
    "SHA-224": "sha224",
    "SHA-256": "sha256",
    "SHA-384": "sha384",
    "SHA-512": "sha512",
    "SHA-512/224": "sha512_224",
    "SHA-512/256": "sha512_256",
}


def sha2(value: str, variant: str | None) -> str:
    return hashlib.new(SHA2_VARIANTS[variant or "SHA-512/256"], value.encode("utf-8", "surrogatepass")).hexdigest()


def _check_sha2_variant(args: Args) -> None:
    arg = args[1]
    if arg is not None and (not arg.constant or arg.value not in SHA2_VARIANTS):
        names = ", ".join(f'"{name}"' for name in SHA2_VARIANTS)
        raise ArgumentError(f'invalid enum variant for argument "variant"; expected one of: {names}')


_BASE64_CHARSETS = ("standard", "url_safe")


def encode_base64(value: str, padding: bool | None, charset: str | None) -> str:
    if charset not in (None,) + _BASE64_CHARSETS:
        raise FunctionError("unknown charset")
    data = value.encode("utf-8", "surrogatepass")
    text = (base64.urlsafe_b64encode(data) if charset == "url_safe" else base64.b64encode(data)).decode("ascii")
    return text if padding is not False else text.rstrip("=")


def encode_base64_bytes(data: bytes, charset: str | None) -> str:
    encoded = base64.urlsafe_b64encode(data) if charset == "url_safe" else base64.b64encode(data)
    return encoded.decode("ascii").rstrip("=")


def decode_base64(value: str, charset: str | None) -> str:
    if charset not in (None,) + _BASE64_CHARSETS:
        raise FunctionError("unknown charset")
    text = value.rstrip("=")
    alphabet = _URL_SAFE if charset == "url_safe" else _STANDARD
    if len(text) % 4 == 1 or text.strip(alphabet):
        raise FunctionError("unable to decode value from base64")
    data = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_" if charset == "url_safe" else None)
    if encode_base64_bytes(data, charset) != text:  # bits set past the last byte: not canonical, refused as VRL does
        raise FunctionError("unable to decode value from base64")
    return data.decode("utf-8", "replace")


_STANDARD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_URL_SAFE = _STANDARD[:-2] + "-_"


def _charset_type(fallible: bool) -> Any:
    """Fallible when ``charset`` is given and not a constant VRL knows (VRL checks it at run time)."""
    def type_def(args: Args) -> TypeDef:
        charset = args[-1]
        unsure = charset is not None and not (charset.constant and charset.value in _BASE64_CHARSETS)
        return TypeDef(B, fallible or unsure)

    return type_def


def uuid_v4() -> str:
    return str(uuid.uuid4())


FUNCTIONS = [
    function("encode_json", (req("value", ANY), opt("pretty", BOOL)), always(B), encode_json),
    function(
        "encode_key_value",
        (req("value", OBJ), opt("fields_ordering", ARR), opt("key_value_delimiter", B), opt("field_delimiter", B), opt("flatten_boolean", BOOL)),
        _fields_type,
        encode_key_value,
    ),
    function("encode_logfmt", (req("value", OBJ), opt("fields_ordering", ARR)), _fields_type, encode_logfmt),
    function("md5", (req("value", ANY),), always(B), md5),
    function("sha1", (req("value", B),), always(B), sha1),
    function("sha2", (req("value", B), opt("variant", B)), always(B), sha2, check=_check_sha2_variant),
    function("uuid_v4", (), always(B), uuid_v4, pure=False),
    function("encode_base64", (req("value", B), opt("padding", BOOL), opt("charset", B)), _charset_type(False),
             encode_base64),
    function("decode_base64", (req("value", B), opt("charset", B)), _charset_type(True), decode_base64),
]
