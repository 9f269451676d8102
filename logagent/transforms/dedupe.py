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

What is compared is one string per record (``dedupe_entries.py``), the cache
is in ``dedupe_cache.py``. Dropped records go with their batch's
acknowledgement (see ``throttle``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from logagent.acks import Batch
from logagent.sinks.templates import FieldPath, parse_field_path
from logagent.transforms.base import DEFAULT_OUTPUT, Transform, estimate_bytes
from logagent.transforms.dedupe_cache import RecentEntries, TimedEntries
from logagent.transforms.dedupe_config import DEFAULT_MATCH, DedupeConfig
from logagent.transforms.dedupe_entries import Entry, EntryMaker

#: short prefixes remembered before the first look at which ones the cache still uses
_MIN_PREFIXES = 64


class DedupeTransform(Transform):
    kind = "dedupe"

    def __init__(self, component_id: str, config: DedupeConfig, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(component_id)
        fields = config.fields
        ignore: frozenset[FieldPath] | None = None
        match: tuple[FieldPath, ...] = tuple(map(parse_field_path, DEFAULT_MATCH))
        if fields is not None and fields.ignore is not None:
            ignore = frozenset(map(parse_field_path, fields.ignore))
        elif fields is not None and fields.match is not None:
            match = tuple(map(parse_field_path, fields.match))
        self.entries = EntryMaker(match, ignore)
        self.capacity = config.cache.num_events
        timed = config.time_settings
        self._cache: RecentEntries | TimedEntries = (
            RecentEntries(self.capacity) if timed is None
            else TimedEntries(self.capacity, timed.max_age_ms / 1000, timed.refresh_on_drop, clock))
        #: when the remembered prefixes outnumber this, those no entry uses are forgotten
        self._prefix_limit = _MIN_PREFIXES
        self.discarded: Counter[str] = Counter()

    @property
    def cached(self) -> int:
        return len(self._cache)

    def cached_entries(self) -> list[Entry]:
        """The entries remembered, least recently used first."""
        return self._cache.ordered()

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        events = batch.events
        total = len(events)
        self.events_in += total
        columns = self.entries.columns(batch)
        if columns is not None:
            kept = self._cache.first_seen_columns(events, *columns)
        else:
            kept = self._cache.first_seen(events, list(map(self.entries.entry, events)))
        if self.entries.prefixes > self._prefix_limit:
            # memory follows the files (and values) in the cache, not all ever seen; amortized: at most
            # one look at the cache per doubling
            self._prefix_limit = max(_MIN_PREFIXES, 2 * self.entries.forget_prefixes(self._cache.ordered()))
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
