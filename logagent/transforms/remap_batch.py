"""A batch of records of one file context through a batch program (``vrl/batch_compiler.py``), and back.

``EventsSource`` gives the program the records' fields as columns without
making a dict per record: a context field is one uniform value for the whole
batch, a per-line field one list. After the run, ``BatchEvents.events``
makes each record's new event from the columns the program wrote:

- a top-level field the program gave every record the same value (a
  rename of a context field, a constant, ``.app = .kubernetes.container_name``)
  goes into a context derived once (and kept in ``ctx.memo`` while the
  values stay the same), so it is encoded once per file, not per record;
- a field with a value per record goes into the record's own ``fields``;
  objects there are kept encoded (``msgspec.Raw``, which ``LogEvent``
  allows): a record waiting for its sink then holds its JSON text, not a
  tree of Python objects;
- records whose program failed or aborted come out as (reason, message).

The records are those of ``remap_records.target_to_event``: the same
fields and values; only which of them live in the context differs.
"""

from __future__ import annotations

from itertools import repeat
from operator import is_
from typing import Any

from logagent.event import PER_LINE_KEYS, FileContext, LogEvent
from logagent.transforms.remap_fields import LEAVES as _LEAVES, encode_value as _encode, own_fields
from logagent.transforms.remap_records import _timestamp, plain
from logagent.vrl.batch_run import ABORTED, BatchRun
from logagent.vrl.batch_values import ABSENT, Column, Uniform, types_of
from logagent.vrl.runtime import VrlRuntimeError
from logagent.vrl.timestamps import to_timestamp

_TEXT = {str}
_TEXT_OR_NULL = {str, type(None)}

#: reasons of ``logagent_component_errors_total`` for remap
RUNTIME_ERROR = "vrl_runtime_error"
ABORTED_REASON = "aborted"


class EventsSource:
    """The columns of a batch of events sharing ``ctx``, none with per-record ``fields``."""

    __slots__ = ("events", "ctx", "n", "timestamp_seen")

    def __init__(self, events: list[LogEvent], ctx: FileContext, timestamp_seen: bool) -> None:
        self.events = events
        self.ctx = ctx
        self.n = len(events)
        self.timestamp_seen = timestamp_seen

    def column(self, key: str) -> tuple[Column, list[bool] | None, set[type] | None]:
        events = self.events
        if key == "message":
            return [e.message for e in events], None, _TEXT  # a string: an event without fields has one
        if key == "stream":
            return (*_line_column([e.stream for e in events]), None)
        if key == "timestamp":
            stamps = [e.timestamp for e in events]
            if self.timestamp_seen:
                stamps = [None if t is None else to_timestamp(t) for t in stamps]
            return (*_line_column(stamps), None)
        if key == "truncated":
            return (*_line_column([True if e.truncated else None for e in events]), None)
        return Uniform(self.ctx.fields.get(key, ABSENT)), None, None


def _line_column(values: list[Any]) -> tuple[Column, list[bool] | None]:
    """A per-line field's column: None is its absence."""
    if None not in values:
        return values, None
    present = [value is not None for value in values]
    return (Uniform(ABSENT), None) if True not in present else (values, present)


def new_events(run: BatchRun, source: EventsSource, memo_key: Any, interned: dict[Any, Any]) -> list[Any]:
    """Per record of ``source``: its new LogEvent, or (reason, message) when its program failed or aborted.

    ``interned``: the transform's table of shared field dicts (see ``remap_fields``).
    """
    events, n = source.events, run.n
    finals = {key: run.final(key) for key in run.written}
    stamps = _timestamps(run, finals["timestamp"], events) if "timestamp" in finals else None
    failed = run.failed
    alive = [i for i in range(n) if i not in failed] if failed else None
    picked = events if alive is None else [events[i] for i in alive]
    m = len(picked)
    ctx, own = _context(finals, source.ctx, memo_key)
    columns = [(key, *_aligned(col, present, alive, m)) for key, col, present in own]
    if "message" in finals:
        messages, non_text = _messages(*_aligned(*finals["message"], alive, m))
        if non_text is not None:
            columns.append(non_text)
    else:
        messages = [e.message for e in picked]
    fields = own_fields(columns, messages, interned)
    line = "stream" in finals or "truncated" in finals or stamps is not None
    if not line and fields is None:
        made = [LogEvent(m, e.stream, e.timestamp, ctx, e.truncated) for e, m in zip(picked, messages)]
    elif not line:
        made = [LogEvent(m, e.stream, e.timestamp, ctx, e.truncated, f) for e, m, f in zip(picked, messages, fields)]
    else:
        made = _made(finals, picked, alive, stamps, messages, ctx, fields)
    if alive is None:
        return made
    outcomes: list[Any] = [None] * n
    for i, event in zip(alive, made):
        outcomes[i] = event
    for i, (outcome, error) in failed.items():
        outcomes[i] = (ABORTED_REASON if outcome == ABORTED else RUNTIME_ERROR, str(error))
    return outcomes


def _made(finals: dict[str, Any], picked: list[LogEvent], alive: list[int] | None, stamps: list[Any] | None,
          messages: list[Any], ctx: FileContext, fields: list[Any] | None) -> list[LogEvent]:
    """The new events of a program that wrote ``stream``, ``timestamp`` or ``truncated``."""
    m = len(picked)
    if "stream" in finals:
        values, present = _aligned(*finals["stream"], alive, m)
        streams = [v if type(v) in _LEAVES else plain(v) for v in values] if present is None else \
            [(v if type(v) in _LEAVES else plain(v)) if there else None for v, there in zip(values, present)]
    else:
        streams = [e.stream for e in picked]
    timestamps = [e.timestamp for e in picked] if stamps is None else \
        stamps if alive is None else [stamps[i] for i in alive]
    if "truncated" in finals:
        values, present = _aligned(*finals["truncated"], alive, m)
        truncated = [v is True for v in values] if present is None else \
            [v is True and there for v, there in zip(values, present)]
    else:
        truncated = [e.truncated for e in picked]
    return list(map(LogEvent, messages, streams, timestamps, repeat(ctx), truncated,
                    repeat(None) if fields is None else fields))


def _aligned(col: Column, present: list[bool] | None, alive: list[int] | None,
             m: int) -> tuple[list[Any], list[bool] | None]:
    """(a field's values for the live records, whether each has it; None: all do)."""
    if type(col) is Uniform:
        if col.value is ABSENT:
            return [None] * m, [False] * m
        return [col.value] * m, None
    if alive is None:
        return col, present
    return [col[i] for i in alive], None if present is None else [present[i] for i in alive]


def _timestamps(run: BatchRun, final: tuple[Column, list[bool] | None], events: list[LogEvent]) -> list[Any]:
    """Each record's new ``timestamp`` text (a record whose value cannot be one fails, as per record)."""
    col, present = final
    stamps: list[Any] = [None] * run.n
    errors = {}
    for i, event in enumerate(events):
        if i in run.failed or (present is not None and not present[i]):
            continue
        value = col.value if type(col) is Uniform else col[i]
        try:
            stamps[i] = _timestamp(None if value is ABSENT else value, event.timestamp)
        except VrlRuntimeError as exc:
            errors[i] = exc
    if errors:
        run.fail(errors)
    return stamps


def _context(finals: dict[str, tuple[Column, list[bool] | None]], ctx: FileContext,
             memo_key: Any) -> tuple[FileContext, list[tuple[str, Column, list[bool] | None]]]:
    """(the records' context, the columns of their own fields).

    A field written with one value for all records is a change of the
    context; a context field with values per record leaves it.
    """
    shared = ctx.fields
    changes: dict[str, Any] = {}
    own = []
    for key, (col, present) in finals.items():
        if key in PER_LINE_KEYS:
            continue
        if type(col) is Uniform:
            if col.value is not shared.get(key, ABSENT):
                changes[key] = col.value
        else:
            own.append((key, col, present))
            if key in shared:
                changes[key] = ABSENT
    return (derived(ctx, changes, memo_key) if changes else ctx), own


def derived(ctx: FileContext, changes: dict[str, Any], memo_key: Any) -> FileContext:
    """``ctx`` with ``changes`` (ABSENT: removed); the last one made is kept in ``ctx.memo`` for the next batch."""
    signature = tuple((key, None if value is ABSENT else _encode(value)) for key, value in changes.items())
    kept = ctx.memo.get(memo_key)
    if kept is not None and kept[0] == signature:
        return kept[1]  # type: ignore[no-any-return]
    fields = {}
    for key, value in ctx.fields.items():
        if key in changes:
            value = changes[key]
            if value is ABSENT:
                continue
            value = plain(value)
        fields[key] = value
    for key, value in changes.items():
        if key not in ctx.fields and value is not ABSENT:
            fields[key] = plain(value)
    made = FileContext(fields)
    ctx.memo[memo_key] = (signature, made)
    return made


def _messages(values: list[Any], present: list[bool] | None) -> tuple[list[Any], Any]:
    """(the messages, the column of those that are not strings, which are fields of their record)."""
    if present is None:
        kinds = types_of(values)
        if kinds == _TEXT:
            return values, None
        if kinds <= _TEXT_OR_NULL:  # a null message is a field with a null value
            return values, ("message", values, list(map(is_, values, repeat(None))))
        present = [True] * len(values)
    messages = [v if type(v) is str and there else None for v, there in zip(values, present)]
    own = [there and type(v) is not str for v, there in zip(values, present)]
    return messages, ("message", values, own)
