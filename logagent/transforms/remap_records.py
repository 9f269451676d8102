"""Records as VRL targets and back, keeping what the file context shares.

A record becomes a plain dict (``LogEvent.to_dict``, its ``timestamp`` a VRL
``Timestamp``); after the program, the dict becomes a new event whose
context keeps every context key the program left as it was (the same object),
so most records still share their ``FileContext`` and its pre-encoded head.
A context key the program changed or removed makes a context derived without
it (``record_fields.context_without``: once per context and key set, in
``ctx.memo``, as for every transform); the changed value becomes the record's own.
"""

from __future__ import annotations

from typing import Any

from logagent.event import FileContext, LogEvent
from logagent.transforms.record_fields import context_without, record_event
from logagent.vrl.timestamps import format_rfc3339, to_timestamp
from logagent.vrl.value import Timestamp

_LINE_KEYS = frozenset(("message", "stream", "timestamp", "truncated"))
_ABSENT = object()


def event_to_target(event: LogEvent, timestamp_seen: bool = True) -> tuple[dict[str, Any], Any]:
    """(the record as a VRL target, the value put under ``timestamp``).

    ``timestamp_seen`` False (the program can observe neither ``.timestamp`` nor
    the root): the text stays, unparsed, and is known again by identity.
    """
    target = event.to_dict()
    stamp = event.timestamp
    if timestamp_seen and type(stamp) is str:
        stamp = target["timestamp"] = to_timestamp(stamp)
    return target, stamp


def target_to_event(target: dict[str, Any], event: LogEvent, stamp: Any = None,
                    written: frozenset[str] | None = None) -> LogEvent:
    """The event a program's ``target`` makes of ``event``; ``stamp``: what ``event_to_target`` put in.

    ``written``: the top-level keys the program can write (or delete), when it
    writes no root; for an event without ``fields`` every other key is the same
    object as before, so only those are looked at.
    """
    ctx = event.ctx
    shared = ctx.fields
    changed: list[str] | None = None
    own: dict[str, Any] = {}
    if written is not None and event.fields is None:
        for key in written:
            value = target.get(key, _ABSENT)
            if key in shared:
                if value is shared[key]:
                    continue
                changed = [key] if changed is None else changed + [key]
            if value is not _ABSENT and key not in _LINE_KEYS:
                own[key] = value if type(value) in _LEAVES else plain(value)
    else:
        for key, value in shared.items():
            if target.get(key, _ABSENT) is not value:
                changed = [key] if changed is None else changed + [key]
        for key, value in target.items():
            if key in shared:
                if changed is None or key not in changed:
                    continue
            elif key in _LINE_KEYS:
                continue
            own[key] = value if type(value) in _LEAVES else plain(value)
    new_ctx = context_without(ctx, frozenset(changed)) if changed else ctx
    message = target.get("message")
    if type(message) is not str:
        if "message" in target:
            own["message"] = plain(message)
        message = None
    value = target.get("timestamp", _ABSENT)
    if value is stamp and stamp is not None:
        timestamp = event.timestamp
    elif type(value) is Timestamp:
        timestamp = _timestamp_text(value, event.timestamp)
    else:
        timestamp = _line_value(value, "timestamp", own)
    stream = _line_value(target.get("stream", _ABSENT), "stream", own)
    truncated = target.get("truncated", _ABSENT)
    if truncated is not True and truncated is not _ABSENT:
        own["truncated"] = plain(truncated)
    return record_event(message, stream, timestamp, new_ctx, truncated is True, own)


def _line_value(value: Any, key: str, own: dict[str, Any]) -> str | None:
    """A string stream or timestamp for the event itself; any other value (Vector keeps it) goes to ``own``."""
    if type(value) is str or value is _ABSENT:
        return None if value is _ABSENT else value
    own[key] = plain(value)
    return None


def _timestamp_text(value: Timestamp, original: str | None) -> str:
    if original is not None:
        before = to_timestamp(original)
        if before == value:
            return original
    return format_rfc3339(value)


def vector_records(root: Any) -> list[dict[str, Any]]:
    """The records Vector's remap makes of a program's event when it is not an object (legacy namespace).

    An array gives one record per item (an item that is not an object becomes
    ``{"message": item}``); any other value gives ``{"message": value}``.
    """
    if type(root) is list:
        return [item if type(item) is dict else {"message": item} for item in root]
    return [{"message": root}]


def plain(value: Any) -> Any:
    """``value`` with every Timestamp as RFC 3339 text and regexes as their pattern (copied only where needed)."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    if kind is Timestamp:
        return format_rfc3339(value)
    if kind is dict:
        for item in value.values():
            if type(item) not in _LEAVES and plain(item) is not item:
                return {k: plain(v) for k, v in value.items()}
        return value
    if kind is list:
        for item in value:
            if type(item) not in _LEAVES and plain(item) is not item:
                return [plain(v) for v in value]
        return value
    if getattr(value, "is_vrl_regex", False):
        return value.pattern
    return value


#: values that are the same in a record as in a program
_LEAVES = frozenset({str, int, float, bool, type(None)})


def derived_context(ctx: FileContext, fields: dict[str, Any]) -> FileContext:
    """A context whose fields are a program's result on ``ctx.fields``."""
    if fields.keys() == ctx.fields.keys() and all(fields[k] is v for k, v in ctx.fields.items()):
        return ctx
    return FileContext({key: plain(value) for key, value in fields.items()})
