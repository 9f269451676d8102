"""Vector's encoding options on a record: ``only_fields``, ``except_fields``, ``timestamp_format``.

A :class:`Shaper` turns a record into the record the sink writes: only the
listed field paths kept (``only_fields``), the listed ones removed
(``except_fields``, plus what a sink removes itself, such as Loki's label
fields), and ``timestamp`` written as Unix seconds, milliseconds,
microseconds, nanoseconds or fractional seconds instead of RFC 3339 text.
Only the encoded record changes: a sink's templates (index names, labels)
still read the record as it came. Shaping takes the record apart
(``to_dict``), so a sink using these options encodes record by record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from logagent.event import FileContext, LogEvent
from logagent.sinks.common_config import FieldsOptions
from logagent.sinks.templates import FieldPath, parse_field_path
from logagent.sinks.timestamps import unix_nanos

#: a context without fields: a shaped record carries all its fields itself
_BARE = FileContext({})

_UNITS = {"unix": 10**9, "unix_ms": 10**6, "unix_us": 10**3, "unix_ns": 1}


class Shaper:
    """Makes the record a sink writes from the record that reached it."""

    def __init__(self, only: Iterable[FieldPath] = (), remove: Iterable[FieldPath] = (), timestamp_format: str | None = None) -> None:
        self.only = tuple(only)
        self.remove = tuple(remove)
        self.timestamp_format = None if timestamp_format == "rfc3339" else timestamp_format

    def __bool__(self) -> bool:
        return bool(self.only or self.remove or self.timestamp_format)

    def record(self, event: LogEvent) -> dict[str, Any]:
        """The shaped record as a plain dict."""
        record = event.to_dict()
        if self.only:
            record = _keep(record, self.only)
        for path in self.remove:
            _remove(record, path)
        if self.timestamp_format is not None and "timestamp" in record:
            record["timestamp"] = convert_timestamp(record["timestamp"], self.timestamp_format)
        return record

    def __call__(self, event: LogEvent) -> LogEvent:
        """The shaped record as an event (its fields its own, so every encoder writes it as it is)."""
        record = self.record(event)
        message = record.pop("message", None)
        stream = record.pop("stream", None)
        timestamp = record.pop("timestamp", None)
        truncated = record.pop("truncated", False) is True
        if message is not None and type(message) is not str:
            record["message"] = message
            message = None
        fields = record if record or message is None else None
        return LogEvent(message, stream, timestamp, _BARE, truncated, fields)

    def each(self, events: list[LogEvent]) -> list[LogEvent]:
        return [self(event) for event in events] if self else events


def shaper_for(options: FieldsOptions | None, remove: Iterable[FieldPath] = (), keep_timestamp: bool = False) -> Shaper:
    """The shaper of a sink's encoding options (validated by ``common_config.check_fields``), plus paths the sink removes."""
    if options is None:
        return Shaper(remove=remove)
    only = [parse_field_path(text) for text in options.only_fields or ()]
    removed = [parse_field_path(text) for text in options.except_fields or ()]
    return Shaper(only, [*removed, *remove], None if keep_timestamp else options.timestamp_format)


def convert_timestamp(value: Any, timestamp_format: str) -> Any:
    """An RFC 3339 ``timestamp`` as Vector writes it in ``timestamp_format``; other values as they are."""
    nanos = unix_nanos(value) if type(value) is str else None
    if nanos is None:
        return value
    if timestamp_format == "unix_float":
        return nanos / 10**9
    return nanos // _UNITS[timestamp_format]


def _keep(record: dict[str, Any], paths: tuple[FieldPath, ...]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for path in paths:
        value: Any = record
        for segment in path:
            if type(value) is not dict or segment not in value:
                break
            value = value[segment]
        else:
            target = kept
            for segment in path[:-1]:
                target = target.setdefault(segment, {})
            target[path[-1]] = value
    return kept


def _remove(record: dict[str, Any], path: FieldPath) -> None:
    """Remove ``path``, copying the dicts along it (nested values are shared with the event)."""
    target = record
    for segment in path[:-1]:
        inner = target.get(segment)
        if type(inner) is not dict:
            return
        target[segment] = inner = dict(inner)
        target = inner
    target.pop(path[-1], None)
