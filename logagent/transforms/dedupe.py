"""The dedupe transform: drops a record whose compared fields equal those of a recent one (Vector's ``dedupe``).

As in Vector:

- the compared fields are ``fields.match`` (default ``message``, ``host``,
  ``timestamp``), or with ``fields.ignore`` every leaf field of the record
  (``kubernetes.pod_name``, ``a.b``; an empty object or list is a leaf) but
  the ignored paths, which must name leaves exactly;
- a field that is missing differs from one that is null, and the type
  counts: the text ``"1"`` is not the number ``1``; object key order does not;
- the cache is least-recently-used with ``cache.num_events`` entries, and a
  duplicate counts as a use;
- with ``time_settings``, a remembered record older than ``max_age_ms`` no
  longer makes a match a duplicate (the match is kept and remembered anew);
  ``refresh_on_drop`` makes a dropped duplicate refresh the age.

Dropped records go with their batch's acknowledgement (see ``throttle``).
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator
from itertools import islice, repeat
from operator import attrgetter
from typing import Any

import msgspec

from logagent.acks import Batch
from logagent.event import LogEvent
from logagent.sinks.templates import FieldPath, parse_field_path
from logagent.transforms.base import DEFAULT_OUTPUT, Transform, estimate_bytes
from logagent.transforms.dedupe_config import DEFAULT_MATCH, DedupeConfig
from logagent.transforms.options import number_text

class _Missing:
    """A compared field the record does not have: equal only to itself, hashed by identity (in C, no
    tuple to hash again at every look-up of the entries holding it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()
_sorted_json = msgspec.json.Encoder(order="sorted").encode
#: type tags, as in Vector's cache entries (a string is kept as itself)
_TAGS = {int: 2, float: 3, bool: 4, dict: 5, list: 6, type(None): 7}


class DedupeTransform(Transform):
    kind = "dedupe"

    def __init__(self, component_id: str, config: DedupeConfig, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(component_id)
        fields = config.fields
        self.ignore: frozenset[FieldPath] | None = None
        self.match: tuple[FieldPath, ...] = tuple(map(parse_field_path, DEFAULT_MATCH))
        if fields is not None and fields.ignore is not None:
            self.ignore = frozenset(map(parse_field_path, fields.ignore))
        elif fields is not None and fields.match is not None:
            self.match = tuple(map(parse_field_path, fields.match))
        #: the match keys when all are top-level keys read column-wise (None: per record)
        self._simple = tuple(p[0] for p in self.match) if all(len(p) == 1 and p[0] != "truncated"
                                                              for p in self.match) else None
        self.capacity = config.cache.num_events
        timed = config.time_settings
        self.max_age_secs = timed.max_age_ms / 1000 if timed is not None else None
        self.refresh_on_drop = bool(timed and timed.refresh_on_drop)
        self._clock = clock
        #: entry -> when it was last remembered (LRU order: least recent first); a plain dict (in its
        #: insertion order) without time_settings, so a batch without duplicates is a few calls in C
        self._cache: dict[tuple[Any, ...], float] = OrderedDict() if timed is not None else {}
        self.discarded: Counter[str] = Counter()

    @property
    def cached(self) -> int:
        return len(self._cache)

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        events = batch.events
        total = len(events)
        self.events_in += total
        entries = self._entries(batch)
        if self.max_age_secs is not None:
            seen, now = self._seen_timed, self._clock()
            kept = [event for event, entry in zip(events, entries) if not seen(entry, now)]
        else:
            kept = self._first_seen(events, entries)
        dropped = total - len(kept)
        self.discarded["duplicate"] += dropped
        if not kept:
            batch.release()
            return []
        self.events_out += len(kept)
        if not dropped:
            return [(DEFAULT_OUTPUT, batch)]
        return [(DEFAULT_OUTPUT, Batch(kept, batch.acks, estimate_bytes(batch, len(kept)), batch.ctx,
                                       batch.ctx_with_fields))]

    # -- the cache ----------------------------------------------------------------

    def _first_seen(self, events: list[LogEvent], entries: list[tuple[Any, ...]]) -> list[LogEvent]:
        """The records whose entry is not in the cache (each remembered as the most recent)."""
        cache = self._cache
        before = len(cache)
        cache.update(zip(entries, repeat(0.0)))
        if len(cache) - before < len(entries):
            # one was seen before or repeats another of the batch: undo (the new keys are the last ones;
            # the others kept their place and value) and go one by one
            deque(map(cache.__delitem__, list(islice(cache, before, None))), maxlen=0)
            return self._first_seen_each(events, entries)
        # none seen before and none repeated (the common batch): the verdicts and the cache of one by one
        excess = len(cache) - self.capacity
        if excess > 0:
            deque(map(cache.__delitem__, list(islice(cache, excess))), maxlen=0)
        return events

    def _first_seen_each(self, events: list[LogEvent], entries: list[tuple[Any, ...]]) -> list[LogEvent]:
        """One by one, for a batch holding duplicates (an ordered dict for the moves, then plain again)."""
        cache = OrderedDict(self._cache)
        capacity = self.capacity
        move, evict = cache.move_to_end, cache.popitem
        kept = []
        for event, entry in zip(events, entries):
            if entry in cache:
                move(entry)
                continue
            cache[entry] = 0.0
            if len(cache) > capacity:
                evict(last=False)
            kept.append(event)
        self._cache = dict(cache)
        return kept

    def _seen(self, entry: tuple[Any, ...], now: float) -> bool:
        """Remember ``entry`` as the most recent; True when it was there already."""
        cache = self._cache
        if entry in cache:
            cache.move_to_end(entry)
            return True
        cache[entry] = now
        if len(cache) > self.capacity:
            cache.popitem(last=False)
        return False

    def _seen_timed(self, entry: tuple[Any, ...], now: float) -> bool:
        cache = self._cache
        remembered = cache.get(entry)
        if remembered is None:
            self._seen(entry, now)
            return False
        cache.move_to_end(entry)  # a look-up is a use
        duplicate = now - remembered < self.max_age_secs  # type: ignore[operator]
        if self.refresh_on_drop or not duplicate:
            cache[entry] = now
        return duplicate

    # -- what is compared ----------------------------------------------------------

    def _entries(self, batch: Batch) -> list[tuple[Any, ...]]:
        """Each record's compared fields; column by column in C for records without their own fields."""
        events = batch.events
        if self.ignore is not None:
            return list(map(self._ignore_entry, events))
        if not self._simple or any(map(_FIELDS, events)):
            return list(map(self._match_entry, events))
        columns: list[Any] = []
        for key in self._simple:
            if key in _LINE_ATTRS:
                column = list(map(_LINE_ATTRS[key], events))
                # all() first: a truth test per string, where ``in`` compares each one with None
                if not all(column) and None in column:  # a record without it: missing, not null
                    column = [MISSING if value is None else value for value in column]
                columns.append(column)
            elif batch.ctx is not None:
                columns.append(repeat(_typed(batch.ctx.fields.get(key, MISSING))))
            else:
                per_ctx: dict[int, Any] = {}
                columns.append([_context_value(per_ctx, event.ctx, key) for event in events])
        return list(zip(*columns)) if columns else [()] * len(events)

    def _match_entry(self, event: LogEvent) -> tuple[Any, ...]:
        return tuple(_typed(_value_at(event, path)) for path in self.match)

    def _ignore_entry(self, event: LogEvent) -> tuple[Any, ...]:
        ignore = self.ignore
        assert ignore is not None
        return tuple(sorted(
            ((path, _typed(value)) for path, value in _leaves(event.to_dict(), ()) if path not in ignore),
            key=_path_order,
        ))


_FIELDS = attrgetter("fields")
#: per-line keys read straight from the event (a record with its own fields takes the per-record path)
_LINE_ATTRS = {"message": attrgetter("message"), "stream": attrgetter("stream"), "timestamp": attrgetter("timestamp")}


def _context_value(per_ctx: dict[int, Any], ctx: Any, key: str) -> Any:
    value = per_ctx.get(id(ctx), per_ctx)
    if value is per_ctx:
        value = per_ctx[id(ctx)] = _typed(ctx.fields.get(key, MISSING))
    return value


def _value_at(event: LogEvent, path: FieldPath) -> Any:
    top = path[0]
    value = event.message if top == "message" and event.message is not None else event.get(top)
    if value is None and not event.has(top):
        return MISSING
    for segment in path[1:]:
        if not isinstance(value, dict) or segment not in value:
            return MISSING
        value = value[segment]
    return value


def _typed(value: Any) -> Any:
    """What a value is compared as: a string itself; anything else its type tag and canonical text."""
    if type(value) is str or value is MISSING:
        return value
    tag = _TAGS.get(type(value), 0)
    if tag in (5, 6):
        return tag, _sorted_json(value)
    if tag == 3:
        return tag, number_text(value)
    return tag, value


def _leaves(value: Any, prefix: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from _leaves(inner, (*prefix, key))
    elif isinstance(value, list) and value and prefix:
        for index, inner in enumerate(value):
            yield from _leaves(inner, (*prefix, index))
    elif prefix:
        yield prefix, value


def _path_order(item: tuple[tuple[str | int, ...], Any]) -> tuple[str, ...]:
    return tuple(str(segment) for segment in item[0])
