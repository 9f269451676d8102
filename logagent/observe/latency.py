"""Delivery latency per sink: from a record's timestamp (the kubelet's write time) to the sink's acknowledgement.

Observed once per input batch, not per record: a batch is one read of one
file (or a transform's subset of it) in file order, so its first record is its
oldest; the batch's record count is added to the bucket of that record's
latency. The figure is therefore an upper bound for each record, exact to
within the time span of its batch (which is a few milliseconds when the agent
keeps up: a read takes what was written since the last one). A batch whose
first record has no readable timestamp is counted in ``no_timestamp`` and
left out. The cost is one cached timestamp parse and a bisect per batch.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from typing import Any

from logagent.sinks.timestamps import unix_nanos

#: upper bounds of the buckets, in seconds (the last one, +Inf, is implied)
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3600.0)

#: (write time in Unix seconds, records) of a batch, taken when a sink accepts it
Stamp = tuple[float, int]


class DeliveryLatency:
    """A histogram: ``counts[i]`` records with latency <= ``BUCKETS[i]`` (and above the one before)."""

    __slots__ = ("counts", "sum", "count", "no_timestamp")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.sum = 0.0
        self.count = 0
        self.no_timestamp = 0

    def stamp(self, events: list[Any]) -> Stamp | None:
        """What to observe when the batch of ``events`` is acknowledged (None: nothing)."""
        if not events:
            return None
        nanos = unix_nanos(events[0].timestamp)
        if nanos is None:
            self.no_timestamp += len(events)
            return None
        return nanos / 1e9, len(events)

    def observe(self, stamp: Stamp | None, now: float | None = None) -> None:
        if stamp is None:
            return
        written, records = stamp
        latency = max(0.0, (time.time() if now is None else now) - written)
        self.counts[bisect_left(BUCKETS, latency)] += records
        self.sum += latency * records
        self.count += records

    def observe_events(self, events: list[Any]) -> None:
        """``observe(stamp(events))``: for a sink that acknowledges while it still holds the events."""
        self.observe(self.stamp(events))
