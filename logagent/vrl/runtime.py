"""What compiled programs run on: the frame, the errors, and reading and writing paths.

Values follow ``value.py``. Containers reachable from the frame are never
changed in place except the event's top-level object, which belongs to the
run: writing a nested path copies the objects and arrays along it, so
values shared with variables, with other records or with a ``FileContext``
never change under them (VRL's values are values, not references).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .value import Kind, Timestamp, kind_of


class VrlRuntimeError(Exception):
    """A runtime error, worded as VRL words it (``function call error for ...``)."""


class CallError(VrlRuntimeError):
    """A function call's runtime error: ``prefix`` and its cause's message, joined when it is read.

    Most errors are handled with ``??`` and never read; some causes (parse_json's)
    take longer to word than to raise.
    """

    def __init__(self, prefix: str, cause: Exception) -> None:
        super().__init__(prefix)
        self._prefix, self._cause, self._message = prefix, cause, None

    def __str__(self) -> str:
        if self._message is None:
            self._message = self._prefix + str(self._cause)
            self.args = (self._message,)
        return self._message


class Aborted(Exception):
    """``abort``: the program stops and the record is dropped (or kept, per config)."""


class Returned(Exception):
    """``return value``: the program stops with that result."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class Frame(msgspec.Struct, gc=False):
    """One run of a program: the event (a dict), its metadata and the local variables.

    A msgspec Struct: made in C, once per record (a frame is never part of a cycle).
    """

    event: Any
    metadata: dict[str, Any]
    variables: list[Any]


_NAMES = {type(None): "null", bool: "boolean", int: "integer", float: "float", str: "string",
          Timestamp: "timestamp", list: "array", dict: "object"}


def kind_name(value: Any) -> str:
    """VRL's name of a value's type in runtime messages."""
    name = _NAMES.get(type(value))
    if name is None:
        return "regex" if getattr(value, "is_vrl_regex", False) else type(value).__name__
    return name


def kind_or_none(value: Any) -> Kind:
    try:
        return kind_of(value)
    except TypeError:
        return Kind.REGEX


#: each runtime type's kind as a plain int (IntFlag operations cost microseconds)
KIND_BITS: dict[type, int] = {kind: int(kind_of(sample)) for kind, sample in (
    (type(None), None), (bool, True), (int, 0), (float, 0.0), (str, ""), (Timestamp, Timestamp(0)), (list, []),
    (dict, {}))}
_REGEX_BIT = int(Kind.REGEX)


def kind_bits(value: Any) -> int:
    """``int(kind_or_none(value))``, fast."""
    return KIND_BITS.get(type(value), _REGEX_BIT)


def get_path(value: Any, segments: tuple[str | int, ...]) -> Any:
    """The value at ``segments`` below ``value``; null where a step does not exist."""
    for segment in segments:
        if type(segment) is str:
            if type(value) is not dict:
                return None
            value = value.get(segment)
        else:
            if type(value) is not list:
                return None
            try:
                value = value[segment] if segment >= -len(value) else None
            except IndexError:
                return None
    return value


def has_path(value: Any, segments: tuple[str | int, ...]) -> bool:
    """Whether the path exists (a null value at the end counts, as in VRL's ``exists``)."""
    for segment in segments:
        if type(segment) is str:
            if type(value) is not dict or segment not in value:
                return False
            value = value[segment]
        else:
            if type(value) is not list or not -len(value) <= segment < len(value):
                return False
            value = value[segment]
    return True


def set_path(container: Any, segments: tuple[str | int, ...], value: Any) -> Any:
    """``container`` with ``value`` at ``segments``: a new container, copied along the path.

    Objects are created where the path has a field and arrays (null-padded)
    where it has an index, replacing a value of another kind, as VRL does.
    """
    if not segments:
        return value
    segment = segments[0]
    if type(segment) is str:
        copy = dict(container) if type(container) is dict else {}
        copy[segment] = set_path(copy.get(segment), segments[1:], value)
        return copy
    items = list(container) if type(container) is list else []
    if segment < 0:
        segment += len(items)
        if segment < 0:
            items[0:0] = [None] * -segment
            segment = 0
    if segment >= len(items):
        items.extend([None] * (segment - len(items) + 1))
    items[segment] = set_path(items[segment], segments[1:], value)
    return items


def delete_path(container: Any, segments: tuple[str | int, ...]) -> tuple[Any, Any]:
    """(``container`` without the value at ``segments``, that value or null): copied along the path."""
    segment = segments[0]
    if type(segment) is str:
        if type(container) is not dict or segment not in container:
            return container, None
        copy = dict(container)
        if len(segments) == 1:
            return copy, copy.pop(segment)
        inner, removed = delete_path(copy[segment], segments[1:])
        copy[segment] = inner
        return copy, removed
    if type(container) is not list or not -len(container) <= segment < len(container):
        return container, None
    items = list(container)
    if len(segments) == 1:
        return items, items.pop(segment)
    inner, removed = delete_path(items[segment], segments[1:])
    items[segment] = inner
    return items, removed


def default_of(kind: Kind) -> Any:
    """The value ``x`` gets in ``x, err = ...`` when the expression fails: its type's default."""
    if kind == Kind.BYTES:
        return ""
    if kind == Kind.INTEGER:
        return 0
    if kind == Kind.FLOAT:
        return 0.0
    if kind == Kind.BOOLEAN:
        return False
    if kind == Kind.OBJECT:
        return {}
    if kind == Kind.ARRAY:
        return []
    if kind == Kind.TIMESTAMP:
        return Timestamp(0)
    if kind == Kind.REGEX:
        from .regexes import compile_regex_literal  # the stdlib's regexes import this module

        return compile_regex_literal("")
    return None
