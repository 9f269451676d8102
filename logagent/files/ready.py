"""The tailer's queue of files with something to read: round-robin (or oldest first), with a read cooldown.

Change notifications come quickly (see ``watch.py``), so a file that was
quiet is read within a few tens of milliseconds of a write. A file written
all the time would then be read as often as notifications come, a few lines a
turn, and each turn costs its read, its chunk, its batch and its
acknowledgement whatever it holds. So notifications make a file ready no more
often than once per ``cooldown_secs`` on average: each file has a time from
which it may be read again (``FileState.read_after``); a read turn moves it one
cooldown later, but never before the turn nor more than one cooldown after it.
A file named by a notification before that time waits for it. (Moving it from
the turn itself would ratchet: a file written exactly once per cooldown would
have each read wait a little longer than the one before, until each waited
nearly the whole cooldown.) A file read after being quiet for a while may be
read again at once, and no line waits for more than about a cooldown after it
is seen. A file with more to read after its turn (``add``) is not held back:
it goes to the back of the queue, behind the other files' turns.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque
from collections.abc import Callable

from logagent.files.model import TailedFile

#: a cooling file due this soon is served now (a cooldown a few ms short is harmless), with the others as close
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
        state, now = f.state, self._clock()
        state.read_after = min(max(state.read_after + self.cooldown_secs, now), now + self.cooldown_secs)

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
