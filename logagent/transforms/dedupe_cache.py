"""dedupe's caches: the most recently used ``capacity`` entries, exactly as Vector's LRU keeps them.

An entry is a triple ``(prefix, index, rest)`` of strings (``rest`` may be
None), see ``dedupe_entries.py``: for one file's records, the prefix is the
same, the index is usually the record's timestamp and the rest its message.

``RecentEntries`` (no ``time_settings``) answers the common batch (one
prefix, no index held under that prefix, none repeated) in a few calls in C,
without hashing the rest (the message) at all: a batch that repeats no index
repeats no entry. The entries live in two generations, every entry of the
newer more recent than every entry of the older one. A generation made by
batches is *compact*: prefix -> {index: rest} and the runs of prefixes in the
order they came. Once the newer generation holds ``capacity`` entries, every
entry of the older one is beyond the ``capacity`` most recent: the older one
is dropped whole (no eviction one by one) and the newer takes its place. So
at most about twice ``capacity`` entries are held, and the first entries of
the older generation may be evicted already.

Any other batch is answered record by record on an exact LRU (an ordered dict
of the live entries, with a count of each prefix's indexes so the batches
after it can still be checked in bulk); that LRU stays the older generation
until the newer fills.

``TimedEntries`` (``time_settings``) is the record-by-record LRU with the time
each entry was remembered.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, groupby, islice
from operator import itemgetter
from typing import TypeVar

T = TypeVar("T")
from logagent.transforms.dedupe_entries import Entry


class _Compact:
    """A generation made of whole batches: prefix -> {index: rest}, and the prefixes' runs in order."""

    __slots__ = ("by_prefix", "runs", "count")

    def __init__(self) -> None:
        self.by_prefix: dict[str, dict[str, str | None]] = {}
        self.runs: list[tuple[str, int]] = []
        self.count = 0

    def holds_any(self, prefix: str, indexes: Iterable[str]) -> bool:
        held = self.by_prefix.get(prefix)
        return held is not None and not held.keys().isdisjoint(indexes)

    def ordered(self) -> Iterator[Entry]:
        items = {prefix: iter(held.items()) for prefix, held in self.by_prefix.items()}
        for prefix, n in self.runs:
            for index, rest in islice(items[prefix], n):
                yield prefix, index, rest


class _Exact:
    """A generation that is an exact LRU: entry -> None, least recent first; each prefix's index counts."""

    __slots__ = ("lru", "by_prefix")

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.lru: OrderedDict[Entry, None] = OrderedDict.fromkeys(entries)
        self.by_prefix: dict[str, dict[str, int]] = {}
        for prefix, index, _ in self.lru:
            counts = self.by_prefix.setdefault(prefix, {})
            counts[index] = counts.get(index, 0) + 1

    @property
    def count(self) -> int:
        return len(self.lru)

    def holds_any(self, prefix: str, indexes: Iterable[str]) -> bool:
        held = self.by_prefix.get(prefix)
        return held is not None and not held.keys().isdisjoint(indexes)

    def ordered(self) -> Iterator[Entry]:
        return iter(self.lru)

    def add(self, entry: Entry) -> None:
        self.lru[entry] = None
        counts = self.by_prefix.setdefault(entry[0], {})
        counts[entry[1]] = counts.get(entry[1], 0) + 1

    def evict_oldest(self) -> None:
        prefix, index, _ = self.lru.popitem(last=False)[0]
        counts = self.by_prefix[prefix]
        if counts[index] == 1:
            del counts[index]
            if not counts:
                del self.by_prefix[prefix]
        else:
            counts[index] -= 1


class RecentEntries:
    """The ``capacity`` most recently used entries; ``first_seen*`` pass on what none of them equals."""

    __slots__ = ("capacity", "_old", "_new")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._old: _Compact | _Exact = _Compact()
        self._new = _Compact()

    def __len__(self) -> int:
        return min(self.capacity, self.held)

    @property
    def held(self) -> int:
        """Entries in memory: the live ones and those of the older generation already evicted."""
        return self._old.count + self._new.count

    def ordered(self) -> list[Entry]:
        """The entries held, least recently used first (as Vector's LRU would hold them)."""
        held = self.held
        both = chain(self._old.ordered(), self._new.ordered())
        return list(islice(both, max(0, held - self.capacity), None))

    def first_seen_columns(self, items: list[T], prefix: str, indexes: list[str],
                           rests: list[str | None]) -> list[T]:
        """``first_seen`` for the entries ``(prefix, indexes[i], rests[i])``."""
        if not indexes:
            return items
        new = self._new
        held = new.by_prefix.get(prefix)
        if held is None:
            held = new.by_prefix[prefix] = {}
        if not self._old.holds_any(prefix, indexes) and held.keys().isdisjoint(indexes):
            before = len(held)
            held.update(zip(indexes, rests))
            added = len(held) - before
            if added == len(indexes):
                self._added(prefix, added)
                return items
            # an index repeats within the batch: undo (the new keys are the last ones), then exactly
            for index in list(islice(held, before, None)):
                del held[index]
        if not held:
            del new.by_prefix[prefix]
        return self._one_by_one(items, list(zip([prefix] * len(indexes), indexes, rests)))

    def first_seen(self, items: list[T], entries: list[Entry]) -> list[T]:
        """The items whose entry is not held, in order; each entry is then the most recently used."""
        kept: list[T] = []
        start = 0
        for prefix, run in groupby(entries, key=itemgetter(0)):
            group = list(run)
            end = start + len(group)
            kept += self.first_seen_columns(items[start:end], prefix, [entry[1] for entry in group],
                                            [entry[2] for entry in group])
            start = end
        return kept

    def _added(self, prefix: str, n: int) -> None:
        new = self._new
        runs = new.runs
        if runs and runs[-1][0] == prefix:
            runs[-1] = (prefix, runs[-1][1] + n)
        else:
            runs.append((prefix, n))
        new.count += n
        if new.count >= self.capacity:
            self._old, self._new = new, _Compact()

    def _one_by_one(self, items: list[T], entries: list[Entry]) -> list[T]:
        """Vector's LRU, record by record, on the exact generation (made of both first, if need be)."""
        old = self._old
        if not isinstance(old, _Exact) or self._new.count:
            old = self._old = _Exact(self.ordered())
            self._new = _Compact()
        lru, capacity = old.lru, self.capacity
        move = lru.move_to_end
        kept = []
        for item, entry in zip(items, entries):
            if entry in lru:
                move(entry)
                continue
            old.add(entry)
            if len(lru) > capacity:
                old.evict_oldest()
            kept.append(item)
        return kept


class TimedEntries:
    """Vector's LRU with the time each entry was remembered: an older match is not a duplicate."""

    __slots__ = ("capacity", "max_age_secs", "refresh_on_drop", "_clock", "_cache")

    def __init__(self, capacity: int, max_age_secs: float, refresh_on_drop: bool,
                 clock: Callable[[], float]) -> None:
        self.capacity = capacity
        self.max_age_secs = max_age_secs
        self.refresh_on_drop = refresh_on_drop
        self._clock = clock
        #: entry -> when it was last remembered, least recently used first
        self._cache: OrderedDict[Entry, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._cache)

    def ordered(self) -> list[Entry]:
        return list(self._cache)

    def first_seen_columns(self, items: list[T], prefix: str, indexes: list[str],
                           rests: list[str | None]) -> list[T]:
        return self.first_seen(items, list(zip([prefix] * len(indexes), indexes, rests)))

    def first_seen(self, items: list[T], entries: list[Entry]) -> list[T]:
        now = self._clock()
        return [item for item, entry in zip(items, entries) if not self._seen(entry, now)]

    def _seen(self, entry: Entry, now: float) -> bool:
        """Whether ``entry`` is a duplicate now; remembers it as Vector's timed dedupe does."""
        cache = self._cache
        remembered = cache.get(entry)
        if remembered is None:
            cache[entry] = now
            if len(cache) > self.capacity:
                cache.popitem(last=False)
            return False
        cache.move_to_end(entry)  # a look-up is a use
        duplicate = now - remembered < self.max_age_secs
        if self.refresh_on_drop or not duplicate:
            cache[entry] = now
        return duplicate
