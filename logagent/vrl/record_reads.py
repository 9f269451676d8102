"""Reading a record where it lives: the event paths of a read-only program (a condition).

A condition's program runs with the record itself as ``frame.event``: a
``LogEvent``, a ``FileContext`` (the memo of a condition that reads only
context fields) or a plain dict. All three answer ``get(top_level_key)``
(``LogEvent.get`` handles the context's fields, per-record fields,
``msgspec.Raw``, ``MERGED_MESSAGE``) and, for ``exists`` of a field whose
value is null, ``has`` (a dict: ``in``; see ``condition_compiler``). Below the top level, values are plain JSON
values, read with VRL's path semantics (``runtime.get_path``). No record is
turned into a dict unless the program reads the whole record (``.``).

A ``LogEvent``'s ``timestamp`` is RFC 3339 text; a program sees it as a VRL
timestamp, as in Vector and in the remap transform.

A condition without local variables and metadata runs with the record in place
of its frame (``condition_compiler``): these functions of the record are then
its compiled reads as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logagent.event import LogEvent

from .runtime import get_path
from .timestamps import to_timestamp

Segments = tuple[str | int, ...]
Reader = Callable[[Any], Any]


def record_value(record: Any, key: str) -> Any:
    """The top-level field ``key`` of a record as a program sees it."""
    value = record.get(key)
    if key == "timestamp" and type(value) is str and type(record) is LogEvent:
        return to_timestamp(value)
    return value


def whole_record(record: Any) -> dict[str, Any]:
    """The record as one object (``.``): a dict is itself, an event its ``to_dict``, a context its fields."""
    if type(record) is dict:
        return record
    if type(record) is LogEvent:
        target = record.to_dict()
        stamp = target.get("timestamp")
        if type(stamp) is str:
            target["timestamp"] = to_timestamp(stamp)
        return target
    return dict(record.fields)


def record_reader(segments: Segments, timestamps: bool = False) -> Reader:
    """A function of a record giving the value at ``segments`` (null where a step does not exist).

    ``timestamps``: a ``LogEvent``'s ``timestamp`` is a VRL timestamp, as a program sees it (else its
    text, as stored: ``parse_json`` reads fields this way).
    """
    if not segments:
        return whole_record
    first, rest = segments[0], segments[1:]
    if type(first) is int:  # an index on the record object names nothing
        return lambda record: None
    if first == "timestamp" and timestamps:
        if not rest:
            return lambda record: record_value(record, "timestamp")
        return lambda record: get_path(record_value(record, "timestamp"), rest)
    if not rest:
        return lambda record: record.get(first)
    if len(rest) == 1 and type(rest[0]) is str:
        second = rest[0]

        def get2(record: Any) -> Any:
            value = record.get(first)
            return value.get(second) if type(value) is dict else None

        return get2
    if len(rest) == 2 and type(rest[0]) is str and type(rest[1]) is str:
        second, third = rest

        def get3(record: Any) -> Any:  # .kubernetes.pod_labels.app
            value = record.get(first)
            if type(value) is dict:
                value = value.get(second)
                if type(value) is dict:
                    return value.get(third)
            return None

        return get3
    return lambda record: get_path(record.get(first), rest)
