"""A bounded queue of batches, limited in events and in bytes.

``put`` waits while the queue is over either budget, which is how a slow sink
slows the readers upstream: the files on disk are the buffer, not memory. A
single batch larger than the budget is still admitted when the queue is empty,
so nothing can deadlock on an oversized batch.
"""

from __future__ import annotations

import asyncio
from collections import deque

from logagent.acks import Batch


class QueueClosed(Exception):
    """Raised by ``put`` after ``close``."""


class BatchQueue:
    def __init__(self, max_events: int = 10_000, max_bytes: int = 8 << 20) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.events = 0
        self.nbytes = 0
        self._items: deque[Batch] = deque()
        self._closed = False
        self._space = asyncio.Event()
        self._space.set()
        self._not_empty = asyncio.Event()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def closed(self) -> bool:
        return self._closed

    def _full(self) -> bool:
        return bool(self._items) and (self.events >= self.max_events or self.nbytes >= self.max_bytes)

    async def put(self, batch: Batch) -> None:
        if self._closed:
            raise QueueClosed
        while self._full():
            self._space.clear()
            await self._space.wait()
            if self._closed:
                raise QueueClosed
        self._items.append(batch)
        self.events += len(batch.events)
        self.nbytes += batch.nbytes
        self._not_empty.set()

    async def get(self) -> Batch | None:
        """The next batch, or None once the queue is closed and drained."""
        while not self._items:
            if self._closed:
                return None
            self._not_empty.clear()
            await self._not_empty.wait()
        return self._take()

    def get_nowait(self) -> Batch | None:
        return self._take() if self._items else None

    def _take(self) -> Batch:
        batch = self._items.popleft()
        self.events -= len(batch.events)
        self.nbytes -= batch.nbytes
        if not self._items:
            self._not_empty.clear()
        if not self._full():
            self._space.set()
        return batch

    def close(self) -> None:
        """No more puts; ``get`` returns None once the queue is drained."""
        self._closed = True
        self._not_empty.set()
        self._space.set()

    def fill_ratio(self) -> float:
        return max(self.events / self.max_events, self.nbytes / self.max_bytes)


class DroppingQueue(BatchQueue):
    """A sink's inbox with Vector's ``when_full: drop_newest``: a batch that finds it full is dropped.

    The dropped batch is counted (``dropped_events``, ``dropped_batches``) and
    released at once, so its files' checkpoints move on as if it had been
    delivered: dropping is the user's choice, and reading it again would
    only drop it again.
    """

    def __init__(self, max_events: int = 10_000, max_bytes: int = 8 << 20) -> None:
        super().__init__(max_events, max_bytes)
        self.dropped_events = 0
        self.dropped_batches = 0

    async def put(self, batch: Batch) -> None:
        if self._closed:
            raise QueueClosed
        if self._full():
            self.dropped_events += len(batch.events)
            self.dropped_batches += 1
            batch.release()
            return
        await super().put(batch)
