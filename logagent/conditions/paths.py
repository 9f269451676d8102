"""Field lookup closures: ``record.get(first)`` then plain dict/list indexing.

A missing field, a key on a non-object and an index on a non-array (or out of
range) all read as ``None``, as in VRL. Negative indexes count from the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import ConditionRuntimeError

Evaluator = Callable[[Any], Any]
Segments = tuple[str | int, ...]


def whole_record(record: Any) -> Any:
    """The record as a plain dict, for the root path ``.``."""
    if isinstance(record, dict):
        return record
    to_dict = getattr(record, "to_dict", None)
    if to_dict is None:
        raise ConditionRuntimeError(f"the whole record '.' cannot be read from a {type(record).__name__}")
    return to_dict()


def step(value: Any, segment: str | int) -> Any:
    """One lookup step below the top level."""
    if type(segment) is str:
        return value.get(segment) if isinstance(value, dict) else None
    if isinstance(value, (list, tuple)):
        try:
            return value[segment]
        except IndexError:
            return None
    return None


def make_getter(segments: Segments) -> Evaluator:
    """A closure returning the value at ``segments`` in a record."""
    if not segments:
        return whole_record
    first = segments[0]
    rest = segments[1:]
    if type(first) is int:  # an index on the record object itself is always null
        return lambda record: None
    if not rest:

        def get1(record: Any) -> Any:
            return record.get(first)

        return get1
    if len(rest) == 1 and type(rest[0]) is str:
        second = rest[0]

        def get2(record: Any) -> Any:
            value = record.get(first)
            return value.get(second) if isinstance(value, dict) else None

        return get2
    if len(rest) == 2 and type(rest[0]) is str and type(rest[1]) is str:
        second, third = rest

        def get3(record: Any) -> Any:
            value = record.get(first)
            if isinstance(value, dict):
                value = value.get(second)
                if isinstance(value, dict):
                    return value.get(third)
            return None

        return get3

    def get_n(record: Any) -> Any:
        value = record.get(first)
        for segment in rest:
            if value is None:
                return None
            value = step(value, segment)
        return value

    return get_n


def make_exists(segments: Segments) -> Evaluator:
    """A closure telling whether the field at ``segments`` is present (even if null).

    As VRL's ``exists``, a field whose value is null is present. A record
    other than a plain dict (a LogEvent, a FileContext) is asked with ``get``
    first, and only when that gives null with ``has``, so the common case
    (the field holds a value) costs one lookup.
    """
    if not segments:
        return lambda record: True
    first = segments[0]
    if type(first) is int:
        return lambda record: False
    if len(segments) == 1:

        def exists_top(record: Any) -> bool:
            if type(record) is dict:
                return first in record
            if record.get(first) is not None:
                return True
            has = getattr(record, "has", None)
            return has is not None and has(first)

        return exists_top
    parent = make_getter(segments[:-1])
    last = segments[-1]
    if type(last) is str:

        def exists_key(record: Any) -> bool:
            container = parent(record)
            return isinstance(container, dict) and last in container

        return exists_key

    def exists_index(record: Any) -> bool:
        container = parent(record)
        return isinstance(container, (list, tuple)) and -len(container) <= last < len(container)

    return exists_index
