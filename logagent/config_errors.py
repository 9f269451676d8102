"""Config errors: one per bad key, all of a config at once, in the user's words.

``convert_all`` turns raw data into a Struct the way ``msgspec.convert`` does,
but does not stop at the first problem: it explains the error, takes the bad
key out of a copy of the data (or fills a missing one) and converts again, so
every bad key of a component is reported in one run.
"""

from __future__ import annotations

import copy
import difflib
import re
import types
import typing
from collections.abc import Iterable
from typing import Any, Literal, Union

import msgspec


class ConfigError(Exception):
    """A config problem; the message starts with the dotted path of the key."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        #: the reason, without the path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)

    @property
    def errors(self) -> list[ConfigError]:
        return [self]


class ConfigErrors(ConfigError):
    """Every problem of a config; ``str()`` is all of them, one a line."""

    def __init__(self, errors: Iterable[ConfigError]) -> None:
        flat: list[ConfigError] = []
        for error in errors:
            flat.extend(error.errors)
        self._errors = flat
        Exception.__init__(self, "\n".join(str(e) for e in flat))
        self.path = flat[0].path if flat else ""
        self.message = str(self)

    @property
    def errors(self) -> list[ConfigError]:
        return list(self._errors)


class KeyErrors(ValueError):
    """What a component's ``validate`` raises for several of its keys at once: ``"<key>: <reason>"`` each."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        super().__init__("\n".join(messages))


def raise_all(errors: list[ConfigError]) -> None:
    """Raise the one error, or all of them together; nothing if the list is empty."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ConfigErrors(errors)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``' (did you mean `x`?)'`` for the closest choice, else ``''``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


# ---------------------------------------------------------------- converting

#: a component with more bad keys than this is reported with the first ones only
_MAX_ERRORS_PER_STRUCT = 50


def convert_all(data: Any, struct_type: type, prefix: str) -> tuple[Any, list[ConfigError]]:
    """``(value, [])`` on success, else ``(None, every error found)``."""
    errors: list[ConfigError] = []
    work = data
    copied = False
    taken_out: set[str] = set()
    for _ in range(_MAX_ERRORS_PER_STRUCT):
        try:
            value = msgspec.convert(work, struct_type, strict=False)
        except msgspec.ValidationError as exc:
            error, segments, missing = _explain(str(exc), work, struct_type, prefix)
            if error.path not in taken_out:  # a required key taken out for its bad value is not also "missing"
                errors.append(error)
            taken_out.add(error.path)
            if not copied:
                work, copied = copy.deepcopy(work), True
            if not _repair(work, struct_type, segments, missing):
                break
            continue
        return (value, []) if not errors else (None, errors)
    return None, errors


def convert(data: Any, struct_type: type, prefix: str) -> Any:
    """As ``convert_all``, raising the errors."""
    value, errors = convert_all(data, struct_type, prefix)
    raise_all(errors)
    return value


_PLACEHOLDERS: dict[Any, Any] = {str: "", int: 0, float: 0.0, bool: False, list: [], dict: {}}


def _repair(data: Any, struct_type: type, segments: list[str | int], missing: str | None) -> bool:
    """Take the bad key out of ``data`` (or fill a missing one); False if that cannot be done."""
    if missing is not None:
        parent = _value_at(data, segments)
        tp = _type_at(struct_type, [*segments, missing])
        origin = typing.get_origin(tp) or tp
        if not isinstance(parent, dict) or origin not in _PLACEHOLDERS:
            return False
        parent[missing] = copy.copy(_PLACEHOLDERS[origin])
        return True
    if not segments:
        return False
    parent = _value_at(data, segments[:-1])
    last = segments[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
        return True
    if isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        del parent[last]
        return True
    return False


_AT = re.compile(r"^(?P<msg>.*) - at `\$(?P<path>[^`]*)`$", re.S)


def _explain(message: str, data: Any, struct_type: type, prefix: str) -> tuple[ConfigError, list[str | int], str | None]:
    """The error in the user's words, the segments of the bad key, and the missing key's name."""
    match = _AT.match(message)
    msg, raw_path = (match["msg"], match["path"]) if match else (message, "")
    segments = _split_path(raw_path)
    base = _join_path(prefix, segments)
    value = _value_at(data, segments)
    tp = _type_at(struct_type, segments)
    if msg.startswith("Object contains unknown field"):
        field = _quoted(msg)
        allowed = field_names(tp)
        hint = did_you_mean(field, allowed) + (f"; expected one of {', '.join(allowed)}" if allowed else "")
        return ConfigError(f"unknown key{hint}", _join_path(base, [field])), [*segments, field], None
    if msg.startswith("Object missing required field"):
        field = _quoted(msg)
        return ConfigError("missing required key", _join_path(base, [field])), segments, field
    choices = _literal_choices(tp)
    if msg.startswith(("Invalid enum value", "Invalid value")) and choices:
        return ConfigError(f"expected one of {', '.join(map(str, choices))}, got {show(value)}", base), segments, None
    expected = re.match(r"Expected `([^`]*)`, got `([^`]*)`", msg)
    if expected:
        if choices:
            return ConfigError(f"expected one of {', '.join(map(str, choices))}, got {show(value)}", base), segments, None
        return ConfigError(f"expected {_describe(expected.group(1))}, got {show(value)}", base), segments, None
    text = msg.strip("`")
    return ConfigError(text[:1].lower() + text[1:], base), segments, None


def _quoted(msg: str) -> str:
    name = re.search(r"`([^`]*)`", msg)
    return name.group(1) if name else "?"


def _split_path(raw: str) -> list[str | int]:
    segments: list[str | int] = []
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]", raw):
        if name:
            segments.append(name)
        elif index != "...":
            segments.append(int(index))
    return segments


def _join_path(prefix: str, segments: list[str | int]) -> str:
    path = prefix
    for seg in segments:
        if isinstance(seg, int):
            path += f"[{seg}]"
        else:
            path = f"{path}.{seg}" if path else seg
    return path


def _value_at(data: Any, segments: list[str | int]) -> Any:
    for seg in segments:
        try:
            data = data[seg]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def unwrap_type(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return unwrap_type(args[0])
    return tp


def _type_at(tp: Any, segments: list[str | int]) -> Any:
    tp = unwrap_type(tp)
    for seg in segments:
        if isinstance(seg, int):
            args = typing.get_args(tp)
            tp = unwrap_type(args[0]) if args else Any
        elif isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            hints = typing.get_type_hints(tp)
            tp = unwrap_type(hints.get(seg, Any))
        elif typing.get_origin(tp) is dict:
            tp = unwrap_type(typing.get_args(tp)[1])
        else:
            return Any
    return tp


def _literal_choices(tp: Any) -> tuple[Any, ...]:
    tp = unwrap_type(tp)
    if typing.get_origin(tp) is Literal:
        return typing.get_args(tp)
    if typing.get_origin(tp) in (Union, types.UnionType):  # a short form beside a mapping (encoding: json)
        return tuple(c for arg in typing.get_args(tp) for c in _literal_choices(arg))
    return ()


def field_names(tp: Any) -> list[str]:
    """The keys a Struct type accepts (its tag field first)."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        names = list(tp.__struct_fields__)
        tag_field = tp.__struct_config__.tag_field
        return ([tag_field] if tag_field else []) + names
    return []


_DESCRIPTIONS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}


def _describe(expected: str) -> str:
    parts = [p.strip() for p in expected.split("|")]
    return " or ".join(_DESCRIPTIONS.get(p, p) for p in parts)


def show(value: Any) -> str:
    """A value as the error shows it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)
