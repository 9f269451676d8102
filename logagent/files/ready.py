"""The tailer's queue of files with something to read: round-robin (or oldest first), with a read cooldown.

Change notifications come quickly (see ``watch.py``), so a file that was
quiet is read within a few tens of milliseconds of a write. A file written
all the time would then be read as often as notifications come, a few lines a
turn, and each turn costs its read, its chunk, its batch, its acknowledgement
and its share of a checkpoint write, whatever it holds. So notifications make
a file ready no more often than once per ``cooldown_secs`` on average: each
file has a time from which a notification may make it ready again
(``FileState.read_after``). A read turn moves it one cooldown on from where it
was, but to no earlier than the turn and no later than a cooldown after it: a
file written less often than once a cooldown is read as soon as its change is
seen, a busy one about once a cooldown, and no line waits for more than about
a cooldown after it is seen. A turn that read ``BIG_TURN_BYTES`` or more sets
no cooldown: its costs were shared by many lines, and holding back a file
that writes megabytes a second would only make its reading come in bursts
(which then hold the other files' lines behind them). (Moving it a cooldown from each turn instead
would ratchet: a file written exactly once per cooldown would wait a little
longer at each line, until it waited nearly the whole cooldown; on a grid of
ticks common to all files, such a file would wait whenever its writes fall
late in a tick.)

A file named before its time waits in a heap; it is served by the first pass
of the tailer's loop after its time (within ``_SLACK_SECS`` before it), which
is usually the pass a notification starts anyway: the loop's own timer for
it is set ``_GRACE_SECS`` later, so the busy files' turns join the sweeps
notifications start (each sweep has its costs: a checkpoint write, a sink's
write) instead of each starting its own. A file with more to read after its
turn (``add``) is not held back: it goes to the back of the queue, behind the
other files' turns.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque
from collections.abc import Callable

from logagent.files.model import TailedFile

#: a waiting file this close to its time is served (a cooldown a few ms short is harmless)
_SLACK_SECS = 0.01
#: how long after a waiting file's time the loop's own timer serves it, if no notification came first
_GRACE_SECS = 0.02
#: a turn that read this much shared its costs among many lines: its file has no cooldown after it
BIG_TURN_BYTES = 16384
#: the tailer's loop lets other tasks run at least this often while it reads small turns
YIELD_SECS = 0.005


class ReadyQueue:
    """Files with something to do, served round-robin (or oldest first)."""

    def __init__(self, oldest_first: bool, wake: asyncio.Event, cooldown_secs: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._oldest_first = oldest_first
        self._wake = wake
        self.cooldown_secs = cooldown_secs
        self._clock = clock
        self._files: deque[TailedFile] = deque()
        #: (its time, tie-breaker, file) of files a notification named before their time
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
        """A notification says ``f`` changed: ready now, or once its time comes."""
        state = f.state
        if state.queued or state.cooling or state.closed:
            return
        due = state.read_after
        if due <= self._clock():
            self.add(f)
        else:
            state.cooling = True
            heapq.heappush(self._cooling, (due, next(self._order), f))

    def turn_read(self, f: TailedFile, nbytes: int) -> None:
        """``f`` was read (``nbytes``): move the time a notification may make it ready again."""
        state, now, cooldown = f.state, self._clock(), self.cooldown_secs
        if nbytes >= BIG_TURN_BYTES:
            state.read_after = now  # the turn's costs were shared by many lines: no cooldown
        else:
            state.read_after = min(max(state.read_after + cooldown, now), now + cooldown)

    def due_in(self) -> float | None:
        """How long the loop may sleep before serving waiting files itself; None if none waits."""
        return max(0.0, self._cooling[0][0] + _GRACE_SECS - self._clock()) if self._cooling else None

    def pop(self) -> TailedFile | None:
        cooling = self._cooling
        soon = self._clock() + _SLACK_SECS
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


class TurnPacer:
    """When the tailer's loop lets other tasks (notifications, acknowledgements, sinks) run between turns.

    Not after every turn: a sweep of small turns (a line or two from each of
    many quiet files) then reaches a sink as one write, with one burst of
    acknowledgements and one checkpoint write, instead of one of each per
    file or two (about a quarter of the agent's CPU at 1,000 lines/s over 100
    files). After ``BIG_TURN_BYTES`` read, or ``YIELD_SECS`` of turns, the
    others run at once, so a busy file's reading cannot hold them back.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._bytes_then = 0
        self._run_by = 0.0

    def turn_done(self, bytes_read: int) -> bool:
        """A turn ended (``bytes_read``: the tailer's running total): must the others run now?"""
        return bytes_read - self._bytes_then >= BIG_TURN_BYTES or self._clock() >= self._run_by

    def others_ran(self, bytes_read: int) -> None:
        """The loop yielded (or slept): the next turns start a new stretch."""
        self._bytes_then = bytes_read
        self._run_by = self._clock() + YIELD_SECS
