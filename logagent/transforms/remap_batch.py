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
from logagent.transforms.record_fields import context_without
from logagent.transforms.remap_fields import LEAVES as _LEAVES, encode_value as _encode, own_fields
from logagent.transforms.remap_records import _timestamp_text, plain
from logagent.vrl.batch_run import ABORTED, BatchRun
from logagent.vrl.batch_values import ABSENT, Column, Uniform, types_of
from logagent.vrl.timestamps import to_timestamp
from logagent.vrl.value import Timestamp

_TEXT = {str}
_TEXT_OR_NULL = {str, type(None)}

#: reasons of ``logagent_component_errors_total`` for remap
RUNTIME_ERROR = "vrl_runtime_error"
ABORTED_REASON = "aborted"


class EventsSource:
    """The columns of a batch of events sharing ``ctx``, none with per-record ``fields``."""

    __slots__ = ("events", "ctx", "n", "timestamp_seen", "stamps")

    def __init__(self, events: list[LogEvent], ctx: FileContext, timestamp_seen: bool) -> None:
        self.events = events
        self.ctx = ctx
        self.n = len(events)
        self.timestamp_seen = timestamp_seen
        #: the ``timestamp`` values the program was given (a value still the same object keeps the event's text)
        self.stamps: list[Any] | None = None

    def column(self, key: str) -> tuple[Column, list[bool] | None, set[type] | None]:
        events = self.events
        if key == "message":
            messages = [e.message for e in events]
            if None not in messages:
                return messages, None, _TEXT
            return (*_line_column(messages), None)  # a transform dropped some records' message
        if key == "stream":
            return (*_line_column([e.stream for e in events]), None)
        if key == "timestamp":
            stamps = [e.timestamp for e in events]
            if self.timestamp_seen:
                stamps = [None if t is None else to_timestamp(t) for t in stamps]
            self.stamps = stamps
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

    ``interned``: the transform's table of shared field dicts (see ``remap_fields``). The records are
    ``remap_records.target_to_event``'s: a ``message``, ``stream`` or ``timestamp`` that is not a
    string, or a ``truncated`` that is not true, is a field of the record's own.
    """
    events, n = source.events, run.n
    finals = {key: run.final(key) for key in run.written}
    failed = run.failed
    alive = [i for i in range(n) if i not in failed] if failed else None
    picked = events if alive is None else [events[i] for i in alive]
    m = len(picked)
    ctx, own = _context(finals, source.ctx, memo_key)
    columns = [(key, *_aligned(col, present, alive, m)) for key, col, present in own]
    messages = [e.message for e in picked] if "message" not in finals else \
        _line_field(columns, "message", *_aligned(*finals["message"], alive, m))
    if "stream" in finals or "timestamp" in finals or "truncated" in finals:
        return _outcomes(_made(finals, source, picked, alive, messages, ctx, columns, interned), alive, failed, n)
    fields = own_fields(columns, messages, interned)
    if fields is None:
        made = [LogEvent(m, e.stream, e.timestamp, ctx, e.truncated) for e, m in zip(picked, messages)]
    else:
        made = [LogEvent(m, e.stream, e.timestamp, ctx, e.truncated, f) for e, m, f in zip(picked, messages, fields)]
    return _outcomes(made, alive, failed, n)


def _outcomes(made: list[LogEvent], alive: list[int] | None, failed: dict[int, Any], n: int) -> list[Any]:
    if alive is None:
        return made
    outcomes: list[Any] = [None] * n
    for i, event in zip(alive, made):
        outcomes[i] = event
    for i, (outcome, error) in failed.items():
        outcomes[i] = (ABORTED_REASON if outcome == ABORTED else RUNTIME_ERROR, str(error))
    return outcomes


def _line_field(columns: list[Any], key: str, values: list[Any], present: list[bool] | None) -> list[Any]:
    """A written ``message``, ``stream`` or ``timestamp``: the event's strings; other values join ``columns``."""
    if present is None:
        kinds = types_of(values)
        if kinds == _TEXT:
            return values
        if kinds <= _TEXT_OR_NULL:  # a null is a field with a null value
            columns.append((key, values, list(map(is_, values, repeat(None)))))
            return values
        present = [True] * len(values)
    columns.append((key, values, [there and type(v) is not str for v, there in zip(values, present)]))
    return [v if type(v) is str and there else None for v, there in zip(values, present)]


def _made(finals: dict[str, Any], source: EventsSource, picked: list[LogEvent], alive: list[int] | None,
          messages: list[Any], ctx: FileContext, columns: list[Any], interned: dict[Any, Any]) -> list[LogEvent]:
    """The new events of a program that wrote ``stream``, ``timestamp`` or ``truncated``."""
    m = len(picked)
    streams = _line_field(columns, "stream", *_aligned(*finals["stream"], alive, m)) if "stream" in finals else \
        [e.stream for e in picked]
    if "timestamp" in finals:
        values, present = _aligned(*finals["timestamp"], alive, m)
        given = source.stamps if source.stamps is None or alive is None else [source.stamps[i] for i in alive]
        texts = [_timestamp(v, e.timestamp, given[p] if given is not None else _NOTHING)
                 if present is None or present[p] else None for p, (v, e) in enumerate(zip(values, picked))]
        timestamps = _line_field(columns, "timestamp", texts, None if present is None else list(present))
    else:
        timestamps = [e.timestamp for e in picked]
    if "truncated" in finals:
        values, present = _aligned(*finals["truncated"], alive, m)
        truncated = [v is True and (present is None or present[p]) for p, v in enumerate(values)]
        columns.append(("truncated", values, [(present is None or present[p]) and v is not True
                                              for p, v in enumerate(values)]))
    else:
        truncated = [e.truncated for e in picked]
    fields = own_fields(columns, messages, interned)
    return list(map(LogEvent, messages, streams, timestamps, repeat(ctx), truncated,
                    repeat(None) if fields is None else fields))


_NOTHING = object()


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


def _timestamp(value: Any, original: str | None, given: Any) -> Any:
    """A written ``timestamp`` as the event keeps it: its own text while it is the value given, RFC 3339 text of
    a Timestamp, any other value as it is (a string goes to the event, the rest to its fields)."""
    if value is given and given is not None:
        return original
    if type(value) is Timestamp:
        return _timestamp_text(value, original)
    return value


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
    if not changes:
        return ctx, own
    if all(value is ABSENT for value in changes.values()):  # keys that moved into the records: the shared rule
        return context_without(ctx, frozenset(changes)), own
    return derived(ctx, changes, memo_key), own


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
