"""The acknowledgement ledger: chunks in flight, and the checkpoints their acks advance.

Every chunk the tailer emits is recorded here, in file order, with the offset
it ends at. When a chunk's :class:`AckGroup` completes, the file's committed
offset moves over the contiguous run of finished chunks at the front, and the
checkpoint store gets the new offset (which it persists within 100 ms, sooner
once 8 KiB of progress wait).
Only the ``TailedFile`` that owns a file identity writes its checkpoint, so a
file that was closed and opened again under a new object cannot be moved back
by late acknowledgements of the old one.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING

from logagent.acks import ACK_WAITS, AckGroup
from logagent.files.checkpoints import Checkpoint, CheckpointStore
from logagent.files.identity import identity_key

if TYPE_CHECKING:
    from logagent.files.model import TailedFile


class _InFlight:
    """A chunk emitted and not yet acknowledged."""

    __slots__ = ("end", "skip", "nbytes", "done", "stale", "read_at")

    def __init__(self, end: int, skip: bool, nbytes: int) -> None:
        self.end = end
        self.skip = skip
        self.nbytes = nbytes
        #: when it was read (monotonic), for the age of the oldest unacknowledged chunk
        self.read_at = time.monotonic()
        self.done = False
        self.stale = False  # emitted before a truncation: must not move the checkpoint


class FileAcks:
    """Per file: the committed offset and the chunks in flight, oldest first."""

    __slots__ = ("committed", "committed_skip", "inflight")

    def __init__(self, start: int, skip: bool) -> None:
        self.committed = start
        self.committed_skip = skip
        self.inflight: deque[_InFlight] = deque()


class AckLedger:
    """Chunks in flight for one source, and the checkpoints of its files."""

    def __init__(self, store: CheckpointStore, source_id: str, on_ack: Callable[[], None]) -> None:
        self.store = store
        self.source_id = source_id
        self._on_ack_done = on_ack
        #: which TailedFile may write the checkpoint of an identity
        self._owner: dict[tuple[int, int], TailedFile] = {}
        #: bytes emitted and not yet acknowledged
        self.unacked = 0
        #: of those, bytes of chunks the source holds back for an unfinished
        #: record (a partial line, a multiline group): they wait for more of
        #: their file, not for a sink, so they do not count against the budget
        self.held = 0
        self.chunks_in_flight = 0
        #: True while reading waits for acknowledgements (counted in ``ACK_WAITS``)
        self.waiting = False
        #: times reading paused because ``unacked`` reached the budget
        self.pauses = 0

    def over_budget(self, budget: int) -> bool:
        """Whether reading must wait for acknowledgements first; it starts or stops waiting accordingly."""
        over = self.unacked - self.held >= budget
        self.wait_for_acks(over, pause=True)
        return over

    def wait_for_acks(self, waiting: bool, *, pause: bool = False) -> None:
        """Reading waits for acknowledgements (or no longer): sinks holding records back send them on the first.

        ``pause``: a wait because of the budget, counted in ``pauses``.
        """
        if waiting and not self.waiting:
            self.pauses += pause
            ACK_WAITS.begin()
        elif self.waiting and not waiting:
            ACK_WAITS.end()
        self.waiting = waiting

    def oldest_unacked_at(self) -> float | None:
        """When the oldest chunk not yet acknowledged was read (monotonic), None if none is in flight.

        Each file's oldest chunk in flight is the front of its list (finished
        ones leave the front at once); one look per file, at scrape time.
        """
        oldest = None
        for f in self._owner.values():
            inflight = f.state.acks.inflight
            if inflight and (oldest is None or inflight[0].read_at < oldest):
                oldest = inflight[0].read_at
        return oldest

    def saved(self, key: tuple[int, int]) -> Checkpoint | None:
        return self.store.get(self.source_id, identity_key(*key))

    def claim(self, f: TailedFile) -> None:
        """``f`` now owns its identity's checkpoint; store where it starts."""
        self._owner[f.state.reader.key] = f
        self.save(f)

    def track(self, f: TailedFile, end: int, skip: bool, nbytes: int) -> AckGroup:
        """Record a chunk of ``f`` ending at ``end``; its ack group moves the checkpoint."""
        entry = _InFlight(end, skip, nbytes)
        f.state.acks.inflight.append(entry)
        self.unacked += nbytes
        self.chunks_in_flight += 1
        return AckGroup(partial(self._on_ack, f, entry))

    def _on_ack(self, f: TailedFile, entry: _InFlight) -> None:
        entry.done = True
        self.unacked -= entry.nbytes
        self.chunks_in_flight -= 1
        state = f.state
        acks: FileAcks = state.acks
        advanced = False
        while acks.inflight and acks.inflight[0].done:
            done = acks.inflight.popleft()
            if not done.stale:
                acks.committed, acks.committed_skip = done.end, done.skip
                advanced = True
        key = state.reader.key
        if self._owner.get(key) is f:
            if state.closed and state.deleted and not acks.inflight:
                self.store.remove(self.source_id, identity_key(*key))
                del self._owner[key]
            elif advanced:
                self.save(f)
        self._on_ack_done()

    def save(self, f: TailedFile) -> None:
        acks: FileAcks = f.state.acks
        reader = f.state.reader
        self.store.set(self.source_id, f.identity, Checkpoint(
            offset=acks.committed, fp=reader.fp, fp_len=reader.fp_len, skip=acks.committed_skip, path=f.path,
        ))

    def truncated(self, f: TailedFile) -> None:
        """``f`` is read again from 0: what is in flight must not move its checkpoint."""
        acks: FileAcks = f.state.acks
        for entry in acks.inflight:
            entry.stale = True
        acks.committed = 0
        acks.committed_skip = False
        if self._owner.get(f.state.reader.key) is f:
            self.save(f)

    def forget(self, key: tuple[int, int]) -> None:
        """The file is gone from disk and closed: drop its checkpoint."""
        self._owner.pop(key, None)
        self.store.remove(self.source_id, identity_key(*key))

    def prune(self, live: Iterable[tuple[int, int]]) -> None:
        """Drop the checkpoints of every identity but ``live`` ones."""
        keep = {identity_key(*key) for key in live}
        for key in self.store.keys(self.source_id):
            if key not in keep:
                self.store.remove(self.source_id, key)
