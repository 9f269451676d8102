"""The tailer's queue of files with something to read: round-robin (or oldest first), with a read cooldown.

Change notifications come quickly (see ``watch.py``), so a file that was
quiet is read within a few tens of milliseconds of a write. A file written
all the time would then be read as often as notifications come, a few lines a
turn, and each turn costs its read, its chunk, its batch, its acknowledgement
and its share of a checkpoint write, whatever it holds. So time is cut into
ticks of ``cooldown_secs`` (on the monotonic clock, the same for every file),
and a read turn makes its file wait for the next tick
(``FileState.read_after``) before a notification can make it ready again. A
busy file is then read once a tick, and all busy files in the same sweep (so
the sweeps cost what they did when notifications themselves came in 100 ms
batches); a file written less often than once a tick is read as soon as its
change is seen; no line waits for more than a tick after it is seen. (A
cooldown measured from each file's own last turn would spread the busy files'
reads over the tick, many small sweeps; and one restarted at each turn would
ratchet: a file written once per cooldown would wait a little longer at each
line.) A file with more to read after its turn (``add``) is not held back: it
goes to the back of the queue, behind the other files' turns.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from collections import deque
from collections.abc import Callable

from logagent.files.model import TailedFile

#: a cooling file due this soon is served now (a tick a few ms short is harmless)
_SLACK_SECS = 0.01


class ReadyQueue:
    """Files with something to do, served round-robin (or oldest first)."""

    def __init__(self, oldest_first: bool, wake: asyncio.Event, cooldown_secs: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._oldest_first = oldest_first
        self._wake = wake
        self.cooldown_secs = cooldown_secs
        self._clock = clock
        self._files: deque[TailedFile] = deque()
        #: (when due, tie-breaker, file) of files a notification named during their cooldown
        self._cooling: list[tuple[float, int, TailedFile]] = []
        self._order = itertools.count()

    def add(self, f: TailedFile) -> None:
        """``f`` is ready now."""
        state = f.state
        if not state.queued and not state.closed:
            state.queued = True
            self._files.append(f)
            self._wake.set()

    def changed(self, f: TailedFile) -> None:
        """A notification says ``f`` changed: ready now, or once its cooldown is over."""
        state = f.state
        if state.queued or state.cooling or state.closed:
            return
        due = state.read_after
        if due <= self._clock():
            self.add(f)
        else:
            state.cooling = True
            heapq.heappush(self._cooling, (due, next(self._order), f))

    def turn_started(self, f: TailedFile) -> None:
        """``f`` is being read: a notification makes it ready again from the next tick on."""
        tick = self.cooldown_secs
        # a turn up to the slack before a tick is that tick's (``pop`` serves files that early)
        f.state.read_after = (math.floor((self._clock() + _SLACK_SECS) / tick) + 1) * tick

    def due_in(self) -> float | None:
        """Seconds until ``pop`` serves the next cooling file (0: now); None if none is cooling."""
        return max(0.0, self._cooling[0][0] - _SLACK_SECS - self._clock()) if self._cooling else None

    def pop(self) -> TailedFile | None:
        cooling = self._cooling
        # files due within the next few ms come out together: one wake-up of the loop for files due close together
        soon = self._clock() + _SLACK_SECS
        if cooling and cooling[0][0] <= soon:
            while cooling and cooling[0][0] <= soon:
                f = heapq.heappop(cooling)[2]
                f.state.cooling = False
                self.add(f)
        if not self._files:
            return None
        if self._oldest_first:
            f = min(self._files, key=lambda x: x.state.seq)
            self._files.remove(f)
        else:
            f = self._files.popleft()
        f.state.queued = False
        return f
