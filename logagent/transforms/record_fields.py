"""Writing a record's fields without changing shared data: the one set of rules every transform follows.

An event's record is its context's fields, its per-line keys and its own
``fields`` (see :class:`logagent.event.LogEvent`). A context key that changes
for one record moves into that record's ``fields`` and the record gets a
context derived without it: :func:`context_without`, made once per context and
key set (in the context's memo), whoever asks. :func:`record_event` makes the
new event (its ``fields`` None when empty and the message is a string).

Two ways in: a :class:`Draft` (``parse_json``, ``sample``) is edited path by
path, nested dicts copied along the changed path only; the remap transform
gives a whole new record (``remap_records.target_to_event``), compared with
the context key by key. Both make their event with :func:`record_event`; the
remap transform's batch run (``remap_batch``) makes a batch's events in one
pass instead, its ``remap_fields.own_fields`` following the same rule.

:func:`value_at` reads one field by path (``dedupe``, ``sample``).
"""

from __future__ import annotations

from typing import Any

from logagent.event import PER_LINE_KEYS, SOURCE_KEYS, FileContext, LogEvent, resolved
from logagent.sinks.templates import FieldPath

Path = tuple[str, ...]

#: a path that runs through a value other than an object (or null)
CONFLICT = object()
_ABSENT = object()


class Draft:
    """A record being edited: becomes a new event with :meth:`event`."""

    __slots__ = ("message", "ctx", "fields")

    def __init__(self, event: LogEvent) -> None:
        self.message = event.message
        self.ctx = event.ctx
        self.fields: dict[str, Any] = dict(resolved(event.fields, event.message)) if event.fields else {}

    def event(self, like: LogEvent) -> LogEvent:
        """The edited record with ``like``'s stream, timestamp and truncation, made by :func:`record_event`."""
        return record_event(self.message, like.stream, like.timestamp, self.ctx, like.truncated, self.fields)

    def _own(self, key: str) -> bool:
        """Make top-level ``key`` editable in ``fields``; False when the record has no such key."""
        if key in self.fields:
            return True
        ctx = self.ctx
        if key in ctx.fields:
            self.ctx = context_without(ctx, _ONE_KEY.get(key) or _one_key(key))
            self.fields[key] = ctx.fields[key]
            return True
        return False

    def remove(self, path: Path) -> None:
        """Remove the field at ``path`` if it is there."""
        top = path[0]
        if top == "message" and self.message is not None:
            if len(path) == 1:
                self.message = None
            return  # a path below a string message names nothing
        if top in SOURCE_KEYS or not self._own(top):
            return
        if len(path) == 1:
            del self.fields[top]
        else:
            self.fields[top] = _copy_without(self.fields[top], path[1:])

    def assign(self, path: Path, value: Any) -> bool:
        """Set ``path`` to ``value``, creating objects on the way; False (nothing changed) on a conflict."""
        top = path[0]
        current = self.fields[top] if self._own(top) else _ABSENT
        new = _with_value(current, path[1:], value)
        if new is CONFLICT:
            return False
        self.fields[top] = new
        return True

    def merge(self, obj: dict[str, Any]) -> None:
        """Add ``obj``'s keys at the top level, never overwriting a key the record has.

        ``stream``, ``timestamp`` and ``truncated`` are the source's and never
        taken; ``message`` only when the record has none (a string becomes the
        message itself).
        """
        fields = self.fields
        ctx_fields = self.ctx.fields
        for key, value in obj.items():
            if key in fields or key in ctx_fields or key in SOURCE_KEYS:
                continue
            if key == "message":
                if self.message is not None:
                    continue
                if type(value) is str:
                    self.message = value
                    continue
            fields[key] = value


#: one-key sets, made once per key (a key set is hashed for each memo lookup; these keep their hash)
_ONE_KEY: dict[str, frozenset[str]] = {}


def _one_key(key: str) -> frozenset[str]:
    keys = _ONE_KEY.get(key)
    if keys is None:
        keys = frozenset((key,))
        if len(_ONE_KEY) < 4096:
            _ONE_KEY[key] = keys
    return keys


def blocked_keys(ctx: FileContext) -> frozenset[str]:
    """Keys a merge into a record of ``ctx`` (with no per-record fields) must not add."""
    blocked = ctx.memo.get(_BLOCKED)
    if blocked is None:
        blocked = ctx.memo[_BLOCKED] = frozenset(ctx.fields) | PER_LINE_KEYS
    return blocked


_BLOCKED = ("record_fields.blocked",)


def context_without(ctx: FileContext, keys: frozenset[str]) -> FileContext:
    """``ctx`` without the top-level ``keys``, made once per context and key set."""
    memo_key = ("record_fields.without", keys)
    derived = ctx.memo.get(memo_key)
    if derived is None:
        derived = ctx.memo[memo_key] = FileContext({k: v for k, v in ctx.fields.items() if k not in keys})
    return derived


def record_event(message: str | None, stream: str | None, timestamp: str | None, ctx: FileContext,
                 truncated: bool, own: dict[str, Any]) -> LogEvent:
    """The event of a record: ``own`` (keys of this record alone, none of ``ctx``) None when it may be.

    A record without a string message keeps ``own`` even when empty (its ``message`` key, when it has
    one, is there).
    """
    return LogEvent(message, stream, timestamp, ctx, truncated, None if not own and message is not None else own)


def _copy_without(value: Any, rest: Path) -> Any:
    if not isinstance(value, dict) or rest[0] not in value:
        return value
    copy = dict(value)
    if len(rest) == 1:
        del copy[rest[0]]
    else:
        copy[rest[0]] = _copy_without(value[rest[0]], rest[1:])
    return copy


def _with_value(current: Any, rest: Path, value: Any) -> Any:
    if not rest:
        return value
    if current is _ABSENT or current is None:
        copy: dict[str, Any] = {}
    elif isinstance(current, dict):
        copy = dict(current)
    else:
        return CONFLICT
    inner = _with_value(copy.get(rest[0], _ABSENT), rest[1:], value)
    if inner is CONFLICT:
        return CONFLICT
    copy[rest[0]] = inner
    return copy


def value_at(event: LogEvent, path: FieldPath, missing: Any) -> Any:
    """The value at ``path`` in a record, or ``missing`` when it has none (a null value is a value)."""
    top = path[0]
    value = event.message if top == "message" and event.message is not None else event.get(top)
    if value is None and not event.has(top):
        return missing
    for segment in path[1:]:
        if not isinstance(value, dict) or segment not in value:
            return missing
        value = value[segment]
    return value
