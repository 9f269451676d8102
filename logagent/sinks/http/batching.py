"""Turning input batches into ordered HTTP request batches.

Ordering: every request belongs to one *lane*; a lane sends its requests
strictly one after another (the next only after the previous got its final
answer, retries included). All events of one ordering key (one log file) go to
the same lane for as long as any of them is unfinished, so records of a file
can never overtake each other. A key with nothing outstanding may move to the
least loaded lane, which balances files across lanes better than a fixed hash.

Acknowledgement: an input batch may be spread over several requests (lanes,
or a request boundary in the middle). A :class:`BatchTracker` counts its parts
and releases the batch when the last part is finished.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Hashable
from itertools import accumulate
from typing import TYPE_CHECKING

from logagent.acks import Batch
from logagent.event import LogEvent

if TYPE_CHECKING:
    from logagent.observe.latency import DeliveryLatency
    from logagent.sinks.http.protocol import HttpProtocol



def ordering_key(event: LogEvent) -> Hashable:
    """Records with the same key are delivered in order: one container's log directory.

    Keying by the directory rather than the file also keeps order across a
    rotation (``0.log`` -> ``0.log.<date>``) and a container restart
    (``0.log`` -> ``1.log``).
    """
    path = event.ctx.fields.get("file")
    if isinstance(path, str):
        directory = path.rpartition("/")[0]
        return directory or path
    return path


class BatchTracker:
    """Releases an input batch when all requests holding its events are done."""

    __slots__ = ("acks", "parts", "latency", "stamp")

    def __init__(self, batch: Batch, latency: DeliveryLatency | None = None) -> None:
        self.acks = batch.acks
        #: one part is held by the dispatcher until every event is placed
        self.parts = 1
        #: the sink's delivery latency, observed for the batch when it is released
        self.latency = latency
        self.stamp = latency.stamp(batch.events) if latency is not None else None

    def add_part(self) -> None:
        self.parts += 1

    def part_done(self) -> None:
        self.parts -= 1
        if self.parts == 0:
            for group in self.acks:
                group.release()
            if self.latency is not None:
                self.latency.observe(self.stamp)


class RequestBatch:
    """The encoded records of one HTTP request and what finishing it releases.

    The records are ``parts_per_record`` byte strings each (see
    :class:`~logagent.sinks.http.protocol.HttpProtocol`), held in ``groups``:
    lists of at most ``SIZE_BLOCK`` parts with their byte counts, often the
    very blocks the run was measured in, so that the writer sends each with
    one ``writev`` without copying or measuring it. ``parts`` is all of them
    in one list, made on first use. They are kept until the request is
    finished: a 413 splits them, a permanent rejection writes them to the
    dead-letter file.
    """

    __slots__ = ("lane", "groups", "_parts", "events", "nbytes", "trackers", "keys", "attempts")

    def __init__(self, lane: int) -> None:
        self.lane = lane
        self.groups: list[tuple[list[bytes], int]] = []
        self._parts: list[bytes] | None = None
        self.events = 0
        #: body size before compression
        self.nbytes = 0
        self.trackers: list[BatchTracker] = []
        self.keys: dict[Hashable, int] = {}
        self.attempts = 0

    @property
    def parts(self) -> list[bytes]:
        if self._parts is None:
            parts: list[bytes] = []
            for group, _ in self.groups:
                parts += group
            self._parts = parts
        return self._parts

    def add_groups(self, groups: list[tuple[list[bytes], int]]) -> None:
        self.groups += groups
        self._parts = None

    def release_parts(self) -> None:
        """Drop the records (the caller holds what it still needs)."""
        self.groups, self._parts = [], []

    def __len__(self) -> int:
        return self.events

    def finish(self) -> None:
        """Release this request's share of every input batch it holds."""
        for tracker in self.trackers:
            tracker.part_done()


class KeyRouter:
    """Assigns ordering keys to lanes; a key stays on its lane while it has pending events."""

    def __init__(self, lanes: int) -> None:
        self.loads = [0] * lanes
        self._assigned: dict[Hashable, list[int]] = {}

    def assign(self, key: Hashable, events: int) -> int:
        entry = self._assigned.get(key)
        if entry is None:
            loads = self.loads
            lane = loads.index(min(loads))
            entry = self._assigned[key] = [lane, 0]
        entry[1] += events
        self.loads[entry[0]] += events
        return entry[0]

    def finished(self, key: Hashable, events: int) -> None:
        entry = self._assigned[key]
        entry[1] -= events
        self.loads[entry[0]] -= events
        if entry[1] == 0:
            del self._assigned[key]

    def pending_keys(self) -> int:
        return len(self._assigned)


#: parts per measured block of a run: a writev group (IOV_MAX, 1024 on Linux) with room for the request head
SIZE_BLOCK = min(os.sysconf("SC_IOV_MAX"), 1024) - 2


class RunSizes:
    """A run's parts in blocks of ``SIZE_BLOCK``, each measured once.

    Measuring is a pass over every part (``len`` of each); with the block
    sums, cutting requests from the run costs at most a block's worth more,
    and whole blocks go into requests as they are (:meth:`groups`).
    """

    __slots__ = ("parts", "blocks", "ends")

    def __init__(self, parts: list[bytes]) -> None:
        self.parts = parts
        self.blocks = [parts] if len(parts) <= SIZE_BLOCK else [
            parts[i : i + SIZE_BLOCK] for i in range(0, len(parts), SIZE_BLOCK)
        ]
        #: bytes of the blocks up to and including each
        self.ends = list(accumulate(sum(map(len, block)) for block in self.blocks))

    @property
    def total(self) -> int:
        return self.ends[-1] if self.ends else 0

    def before(self, index: int) -> int:
        """Bytes of ``parts[:index]``."""
        block, inside = divmod(index, SIZE_BLOCK)
        done = self.ends[block - 1] if block else 0
        return done + sum(map(len, self.blocks[block][:inside])) if inside else done

    def groups(self, start: int, end: int, start_bytes: int, end_bytes: int) -> list[tuple[list[bytes], int]]:
        """``parts[start:end]`` (of ``end_bytes - start_bytes`` bytes) as groups with their sizes.

        Whole blocks are shared, not copied; a block cut by ``start`` or
        ``end`` is sliced.
        """
        groups = []
        for index in range(start // SIZE_BLOCK, (end - 1) // SIZE_BLOCK + 1):
            block = self.blocks[index]
            first = index * SIZE_BLOCK
            low, high = max(start, first), min(end, first + len(block))
            low_bytes = start_bytes if low == start else self.ends[index - 1] if index else 0
            high_bytes = end_bytes if high == end else self.ends[index]
            part = block if high - low == len(block) else block[low - first : high - first]
            groups.append((part, high_bytes - low_bytes))
        return groups


class LaneBatcher:
    """Builds the requests of one lane by ``max_events`` and ``max_bytes``.

    Events arrive in runs of one file; a run is encoded in one call and, when
    it fits the current request, appended whole (no work per record here).
    """

    def __init__(
        self,
        lane: int,
        max_events: int,
        max_bytes: int,
        dropped: Counter[str],
        protocol: HttpProtocol | None = None,
    ) -> None:
        if protocol is None:
            from logagent.sinks.http.protocol import HttpProtocol

            protocol = HttpProtocol()
        self.lane = lane
        self.protocol = protocol
        #: events dropped because they cannot be encoded, by reason
        self.dropped = dropped
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.current: RequestBatch | None = None
        #: loop time at which the current request must be sent at the latest
        self.deadline: float | None = None

    def add(
        self,
        events: list[LogEvent],
        tracker: BatchTracker,
        key: Hashable,
        ready: list[RequestBatch],
        deadline: Callable[[], float],
    ) -> int:
        """Append events of one key; completed requests are appended to ``ready``.

        Returns how many events were not placed (unencodable, counted in
        ``dropped``): the caller's key accounting must not wait for them.
        """
        parts, skipped = self.protocol.encode(events)
        if skipped:
            self.dropped.update(self.protocol.skipped_reasons(skipped))
        per = self.protocol.parts_per_record
        count = len(parts) // per
        sizes = RunSizes(parts)
        start = 0
        start_bytes = 0  # bytes of the records before ``start``
        while start < count:
            request = self.current
            if request is None:
                request = self.current = RequestBatch(self.lane)
                self.deadline = deadline()
            rest = sizes.total - start_bytes
            if request.events + count - start <= self.max_events and request.nbytes + rest <= self.max_bytes:
                end, taken = count, rest  # the common case: the rest of the run fits
            else:
                end, taken = self._cut(sizes, start, start_bytes, count, request)
                if end == start:  # nothing more fits: send it, the next request starts empty
                    ready.append(request)
                    self.current, self.deadline = None, None
                    continue
            request.add_groups(sizes.groups(start * per, end * per, start_bytes, start_bytes + taken))
            request.events += end - start
            request.nbytes += taken
            if not request.trackers or request.trackers[-1] is not tracker:
                request.trackers.append(tracker)
                tracker.add_part()
            request.keys[key] = request.keys.get(key, 0) + end - start
            if request.events >= self.max_events or end < count:
                ready.append(request)
                self.current, self.deadline = None, None
            start, start_bytes = end, start_bytes + taken
        return skipped

    def _cut(
        self, sizes: RunSizes, start: int, start_bytes: int, count: int, request: RequestBatch
    ) -> tuple[int, int]:
        """How many records from ``start`` fit the request (at least one if it is empty), and their size."""
        per = self.protocol.parts_per_record
        limit = min(count, start + self.max_events - request.events)
        room = self.max_bytes - request.nbytes
        size = sizes.before(limit * per) - start_bytes
        if size <= room:  # only the event count cuts: no sizes per record needed
            return limit, size
        part_sizes = list(map(len, sizes.parts[start * per : limit * per]))
        record_sizes = (
            part_sizes if per == 1 else [sum(part_sizes[i : i + per]) for i in range(0, len(part_sizes), per)]
        )
        cumulative = list(accumulate(record_sizes))
        fit = bisect_right(cumulative, room)
        if fit == 0 and not request.events:
            fit = 1  # a record larger than max_bytes goes alone
        return start + fit, cumulative[fit - 1] if fit else 0

    def take(self) -> RequestBatch | None:
        """The partial request, to send it now (timeout or shutdown)."""
        request, self.current, self.deadline = self.current, None, None
        return request
