"""End-to-end acknowledgements: a batch is done when every sink it reached is done.

A source creates one :class:`AckGroup` per chunk it reads (for example one read
of one file, which ends at a known offset). The group counts the holders that
still have to finish with the chunk's records: each copy of a batch sent down
another edge of the graph acquires it once more, every sink releases it after
delivery, a filter releases it for the records it drops. When the count reaches
zero the group's callback runs (the file side then advances its checkpoint).
Acknowledgement is per chunk, not per record, so it costs nothing per line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from logagent.event import FileContext, LogEvent


class AckGroup:
    """A reference count of unfinished holders of one chunk's records."""

    __slots__ = ("pending", "on_done")

    def __init__(self, on_done: Callable[[], None] | None = None) -> None:
        self.pending = 1
        self.on_done = on_done

    def acquire(self, n: int = 1) -> None:
        self.pending += n

    def release(self) -> None:
        self.pending -= 1
        if self.pending == 0 and self.on_done is not None:
            callback, self.on_done = self.on_done, None
            callback()
        elif self.pending < 0:
            raise RuntimeError("AckGroup released more often than acquired")


class Batch:
    """Events of one or more chunks travelling together, with their ack groups.

    ``events`` is never mutated after the batch is sent; transforms build new
    lists. ``nbytes`` is an estimate of the raw size, used for queue budgets.
    ``ctx`` is the one FileContext every event shares, when they all share one
    and none has per-record ``fields`` (a source batch always qualifies), so
    metadata-only conditions run once a batch. ``ctx_with_fields`` is
    ``(ctx, keys)`` when every event shares ``ctx`` and its own ``fields``
    hold no top-level key outside ``keys`` (a parse_json batch), so conditions
    reading none of ``keys`` also run once a batch. Both are promises: a
    transform that does not know them leaves them None, which is always safe.
    """

    __slots__ = ("events", "acks", "nbytes", "ctx", "ctx_with_fields")

    def __init__(
        self,
        events: list[LogEvent],
        acks: Sequence[AckGroup],
        nbytes: int,
        ctx: FileContext | None = None,
        ctx_with_fields: tuple[FileContext, frozenset[str]] | None = None,
    ) -> None:
        self.events = events
        self.acks = acks
        self.nbytes = nbytes
        self.ctx = ctx
        self.ctx_with_fields = ctx_with_fields

    def acquire(self, n: int = 1) -> None:
        for group in self.acks:
            group.acquire(n)

    def release(self) -> None:
        for group in self.acks:
            group.release()

    def __len__(self) -> int:
        return len(self.events)


def release_all(batches: Iterable[Batch]) -> None:
    for batch in batches:
        batch.release()


class AckWaits:
    """How many sources cannot read on until a sink acknowledges something.

    A source stops reading when its unacknowledged bytes reach its budget (and
    ``--once`` waits for the last acknowledgements before it ends). A sink
    that holds records back to fill a larger request would then wait for its
    timer for nothing: no more records can come from that source until it
    delivers. Sinks that batch read ``waiting`` when their inbox is empty and
    subscribe to be told the moment a source starts waiting, and send what
    they hold then (the HTTP-based sinks first let an answer in flight come
    back: it may let the source read on). The count is process-wide: a sink
    cannot tell whose acknowledgements a source waits for, and sending early
    is always safe (smaller requests, never a lost or reordered record).
    """

    def __init__(self) -> None:
        self.waiting = 0
        self._listeners: list[Callable[[], None]] = []

    def begin(self) -> None:
        """A source waits for acknowledgements: listeners are told at once."""
        self.waiting += 1
        for listener in list(self._listeners):
            listener()

    def end(self) -> None:
        self.waiting -= 1

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` whenever a source starts waiting; returns the unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)


#: the sources of this process waiting for acknowledgements
ACK_WAITS = AckWaits()
