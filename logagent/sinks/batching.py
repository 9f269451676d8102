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

from collections import Counter
from collections.abc import Callable, Hashable
from typing import Literal

from logagent.acks import Batch
from logagent.encoding import encode_json
from logagent.event import LogEvent

Encoding = Literal["ndjson", "json"]


def _sanitize(text: object) -> str | None:
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def encode_record(event: LogEvent) -> bytes | None:
    """``encode_json``, or None for an event that cannot be encoded at all.

    A line that is not valid UTF-8 may reach here with lone surrogates
    (``surrogateescape``), which JSON cannot carry: those characters become
    U+FFFD rather than failing the whole request.
    """
    try:
        return encode_json(event)
    except (UnicodeEncodeError, TypeError, ValueError):
        pass
    try:
        clean = LogEvent(
            _sanitize(event.message), _sanitize(event.stream), _sanitize(event.timestamp), event.ctx, event.truncated,
            event.fields,
        )
        return encode_json(clean)
    except (UnicodeEncodeError, UnicodeDecodeError, TypeError, ValueError):
        return None


class BatchTracker:
    """Releases an input batch when all requests holding its events are done."""

    __slots__ = ("batch", "parts")

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        #: one part is held by the dispatcher until every event is placed
        self.parts = 1

    def add_part(self) -> None:
        self.parts += 1

    def part_done(self) -> None:
        self.parts -= 1
        if self.parts == 0:
            self.batch.release()


class RequestBatch:
    """The encoded events of one HTTP request and what finishing it releases."""

    __slots__ = ("lane", "records", "events", "nbytes", "trackers", "keys", "attempts")

    def __init__(self, lane: int) -> None:
        self.lane = lane
        self.records: list[bytes] = []
        #: number of events; stays when ``records`` is freed after the body is built
        self.events = 0
        #: body size before compression, separators included
        self.nbytes = 2
        self.trackers: list[BatchTracker] = []
        self.keys: dict[Hashable, int] = {}
        self.attempts = 0

    def __len__(self) -> int:
        return self.events

    def body(self, encoding: Encoding) -> bytes:
        """The request body; frees the records (a retry resends the same body)."""
        records, self.records = self.records, []
        if encoding == "ndjson":
            return b"\n".join(records) + b"\n"
        return b"[" + b",".join(records) + b"]"

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


class LaneBatcher:
    """Builds the requests of one lane by ``max_events`` and ``max_bytes``."""

    def __init__(self, lane: int, max_events: int, max_bytes: int, dropped: Counter[str]) -> None:
        self.lane = lane
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
        request = self.current
        skipped = 0
        for event in events:
            record = encode_record(event)
            if record is None:
                self.dropped["unencodable"] += 1
                skipped += 1
                continue
            size = len(record) + 1
            if request is not None and request.records and request.nbytes + size > self.max_bytes:
                ready.append(request)
                request = None
            if request is None:
                request = RequestBatch(self.lane)
                self.deadline = deadline()
            if not request.trackers or request.trackers[-1] is not tracker:
                request.trackers.append(tracker)
                tracker.add_part()
            request.records.append(record)
            request.events += 1
            request.nbytes += size
            request.keys[key] = request.keys.get(key, 0) + 1
            if request.events >= self.max_events:
                ready.append(request)
                request = None
        self.current = request
        if request is None:
            self.deadline = None
        return skipped

    def take(self) -> RequestBatch | None:
        """The partial request, to send it now (timeout or shutdown)."""
        request, self.current, self.deadline = self.current, None, None
        return request
