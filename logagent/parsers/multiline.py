"""Multiline grouping: consecutive records of one stream of one file -> one record.

``MultilineGrouper`` is per file and keeps at most one open group per stream.
It takes the records the ``LineParser`` completed (partial lines are already
merged), in file order, and returns records: single lines as they are, a
group as one record whose message is its lines joined with ``\\n``, with the
timestamp of its first line, truncated if any of its lines was. A group ends
at the first line of its stream that does not continue it, after
``timeout_ms`` without a line joining it (``expire``), at the end of the file
(``flush``), or when ``max_lines`` / ``max_bytes`` would be exceeded: then the
line that does not fit begins a new group in the same state (counted in
``stats.splits``), so nothing is dropped.

While ``open`` is true the caller holds back the acknowledgement of the
chunks read since, so a checkpoint never lands inside an undelivered group.
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heapify, heappop, heappush
from itertools import chain
from operator import attrgetter

from logagent.event import FileContext, LogEvent
from logagent.parsers.multiline_batch import (
    carried_within_caps,
    extend_run,
    in_context,
    marked_positions,
    stream_tails,
)
from logagent.parsers.multiline_machine import Active, Machine

_MESSAGE = attrgetter("message")
_TRUNCATED = attrgetter("truncated")

DEFAULT_TIMEOUT_MS = 1000
DEFAULT_MAX_LINES = 1000
DEFAULT_MAX_BYTES = 131072


class MultilineStats:
    """Counters shared by the groupers of one source, read by the metrics layer."""

    __slots__ = ("records", "lines", "splits", "timeouts")

    def __init__(self) -> None:
        #: records made of two lines or more, and the lines they took
        self.records = 0
        self.lines = 0
        #: groups cut at max_lines / max_bytes (their rest began a new record)
        self.splits = 0
        #: groups emitted because no line joined them for timeout_ms
        self.timeouts = 0


class _Group:
    __slots__ = ("active", "lines", "tentative", "nbytes", "last")

    def __init__(self, active: Active, now: float) -> None:
        self.active = active
        #: lines that belong to the group
        self.lines: list[LogEvent] = []
        #: blank lines that belong to it only if a later line continues it
        self.tentative: list[LogEvent] = []
        #: the joined message's length so far (no separator before the first line)
        self.nbytes = -1
        self.last = now

    def add(self, event: LogEvent, tentative: bool) -> None:
        self.nbytes += len(event.message) + 1
        if tentative:
            self.tentative.append(event)
            return
        if self.tentative:
            self.lines += self.tentative
            self.tentative = []
        self.lines.append(event)


class MultilineGrouper:
    """Groups the records of one file per stream with a :class:`Machine`."""

    def __init__(
        self,
        machine: Machine,
        stats: MultilineStats,
        *,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        max_lines: int = DEFAULT_MAX_LINES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.machine = machine
        self.stats = stats
        self.timeout = timeout_ms / 1000
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        #: stream -> its open group
        self._open: dict[str | None, _Group] = {}

    @property
    def open(self) -> bool:
        """Whether some group is still open (its chunks must not be acknowledged yet)."""
        return bool(self._open)

    def feed(
        self, events: list[LogEvent], ctx: FileContext, now: float, *, indented: Sequence[int] | None = None
    ) -> list[LogEvent]:
        """The records ``events`` complete, in order; may return ``events`` itself.

        ``indented``: the indexes of the *marked* records of ``events`` (message
        matching the machine's ``marks``: empty or blank, a frame, ...),
        ascending; None: not known, the grouper looks.
        With a machine that has a ``lead``, a trace has a marked line among its
        first ``lead + 1`` lines, so only the marked records and the ``lead``
        records of their stream before each are tried as starts (and the last
        ``lead`` of each stream, whose marked line may come with the next
        batch), each against the rules whose traces reach that far, behind a
        test that rejects most lines at once. Records around which nothing
        starts pass through untouched: lines without traces cost next to
        nothing, and traces cost their own lines.
        """
        machine = self.machine
        out: list[LogEvent] = []
        if machine.lead is None:
            for event in events:
                self._take(event, ctx, now, out)
            return out
        marked = indented if indented is not None else marked_positions(events, machine)
        heads, rests = self._candidates(events, marked)
        if not heads and not self._open:
            return events
        distances = dict(chain(heads, *rests))
        done = self._walk(events, 0, distances, ctx, now, out) if self._open else 0
        # the heads' starts, and the rests of clusters of marked records, tried only if no group took them
        queue: list[tuple[int, int, Active]] = [(index, 0, active) for index, active in self._try(events, heads)]
        queue += [(rest[0][0], 1, (number,)) for number, rest in enumerate(rests)]
        heapify(queue)
        while queue:
            first, lazy, active = heappop(queue)
            if lazy:
                if rests[active[0]][-1][0] < done:  # a group took the whole cluster
                    continue
                rest = [(index, distance) for index, distance in rests[active[0]] if index >= done]
                for found in self._try(events, rest):
                    heappush(queue, (found[0], 0, found[1]))
            elif first >= done:
                out += events[done:first]
                self._open_group(active, events[first], now)
                done = self._walk(events, first + 1, distances, ctx, now, out)
        if not done:
            return events
        out += events[done:]
        return out

    def expire(self, now: float, ctx: FileContext) -> list[LogEvent]:
        """Emit the groups no line joined for ``timeout_ms``."""
        out: list[LogEvent] = []
        for stream, group in list(self._open.items()):
            if now - group.last >= self.timeout:
                del self._open[stream]
                if group.lines or group.tentative:
                    self.stats.timeouts += 1
                    self._finish(group, ctx, out)
        return out

    def flush(self, ctx: FileContext) -> list[LogEvent]:
        """Emit every open group (end of file)."""
        out: list[LogEvent] = []
        for group in self._open.values():
            self._finish(group, ctx, out)
        self._open.clear()
        return out

    def cut(self, ctx: FileContext) -> list[LogEvent]:
        """Emit what the open groups hold; they stay open, so their next lines form the next record.

        Counted in ``stats.splits``, as a cap would be.
        """
        out: list[LogEvent] = []
        for stream, group in list(self._open.items()):
            self._finish(group, ctx, out)
            self._open[stream] = _Group(group.active, group.last)
            self.stats.splits += 1
        return out

    def discard(self) -> None:
        """Forget the open groups (their file is excluded: its records are dropped anyway)."""
        self._open.clear()

    # -- per record ----------------------------------------------------------------

    def _walk(
        self, events: list[LogEvent], index: int, distances: dict[int, int], ctx: FileContext, now: float,
        out: list[LogEvent],
    ) -> int:
        """Records one by one from ``index`` while some group is open; the next index.

        A record of a stream without an open group is tried as a start only if it is a candidate (in
        ``distances``: index -> its distance to the next marked record), so lines of the other stream
        pass while a trace is open at the cost of a look-up."""
        count = len(events)
        opened = self._open
        loops, loop, step_of = self.machine.loops, self.machine.loop, self.machine.step
        max_lines, max_bytes = self.max_lines, self.max_bytes
        while index < count and opened:
            event = events[index]
            group = opened.get(event.stream)
            if group is None:
                distance = distances.get(index)
                if distance is None:
                    out.append(event)
                else:
                    self._take(event, ctx, now, out, distance)
                index += 1
                continue
            active = group.active
            same = loops[active] if active in loops else loop(active)
            message = event.message
            lines, size = group.lines, group.nbytes + 1 + len(message)
            if same is not None and same(message) is not None and not group.tentative and len(lines) < max_lines \
                    and size <= max_bytes:  # a frame after a frame: what _take would do, in fewer steps
                group.last = now
                lines.append(event)
                index, group.nbytes = extend_run(events, index + 1, lines, size, same, max_lines, max_bytes)
                continue
            step = step_of(active, message)
            if step is not None and len(lines) + len(group.tentative) < max_lines and size <= max_bytes:  # joins
                group.active, group.last = step[0], now
                group.add(event, step[1])
                if not step[0]:
                    del opened[event.stream]
                    self._finish(group, ctx, out)
            else:
                self._take(event, ctx, now, out, distances.get(index), step)
            index += 1
        return index

    def _candidates(
        self, events: list[LogEvent], marked: Sequence[int]
    ) -> tuple[list[tuple[int, int]], list[list[tuple[int, int]]]]:
        """The records that may begin a group as (index, distance): the ``heads``, and the ``rests`` of clusters.

        A record at distance d (0: marked) is followed by a marked record of
        its stream d records of the stream later, d <= ``lead``. A *cluster*
        is a stream's marked records each at most ``lead + 1`` records of the
        stream after the one before (the frames of a trace, a Python
        traceback's 'File' lines between source lines). Heads: the first
        marked record of each cluster and the ``lead`` records of the stream
        before it, and the last ``lead`` records of each stream after its last
        marked one. Rests: the other candidates of each cluster, in order; a
        group a head begins usually takes them, and then they are never tried.
        """
        lead = self.machine.lead or 0
        heads: list[tuple[int, int]] = []
        rests: list[list[tuple[int, int]]] = []
        previous: dict[str | None, int] = {}  # per stream: its last marked record so far
        cluster: dict[str | None, list[tuple[int, int]]] = {}  # per stream: its cluster's rest so far
        for position in marked:
            stream = events[position].stream
            floor = previous.get(stream, -1)
            previous[stream] = position
            if floor == position - 1 and stream in cluster:  # the cluster goes on, no record between
                cluster[stream].append((position, 0))
                continue
            window: list[tuple[int, int]] = []  # the stream's records before, back to its last marked one
            reached = True
            for index in range(position - 1, floor, -1):
                if events[index].stream == stream:
                    if len(window) == lead:
                        reached = False
                        break
                    window.append((index, len(window) + 1))
            if floor >= 0 and reached:  # the cluster goes on
                rest = cluster.get(stream)
                if rest is None:
                    rest = cluster[stream] = []
                    rests.append(rest)
                rest += reversed(window)
                rest.append((position, 0))
            else:
                cluster.pop(stream, None)
                heads.append((position, 0))
                heads += window
        heads += [(i, d) for i, d in stream_tails(events, lead) if i > previous.get(events[i].stream, -1)]
        heads.sort()
        return heads, rests

    def _try(self, events: list[LogEvent], candidates: list[tuple[int, int]]) -> list[tuple[int, Active]]:
        """(index, states) of the ``candidates`` (index, distance) that begin a group, in order.

        The records of one distance are tried together (``StartTest.starts``: one pass of RE2's set
        matcher over them all for the rules' literals); a marked record that is empty or begins with
        whitespace meets only the rules that can take such a line.
        """
        machine = self.machine
        by_class: dict[int, list[int]] = {}
        for index, distance in candidates:
            if not distance:
                message = events[index].message
                distance = -1 if not message or message[0].isspace() else 0
            by_class.setdefault(distance, []).append(index)
        found: list[tuple[int, Active]] = []
        for distance, indexes in by_class.items():
            test = machine.blank_class if distance < 0 else machine.classes[distance]
            found += [(indexes[at], active) for at, active in test.starts([events[i].message for i in indexes])]
        if len(by_class) > 1:
            found.sort()
        return found

    def _take(
        self, event: LogEvent, ctx: FileContext, now: float, out: list[LogEvent], distance: int | None = 0,
        step: tuple[Active, bool] | None | bool = False,
    ) -> None:
        """One record through the machine; ``distance``: its class as a start (None: it begins no group);
        ``step``: the step of the stream's open group on it, if known."""
        stream = event.stream
        group = self._open.get(stream)
        if group is not None:
            if step is False:
                step = self.machine.step(group.active, event.message)
            if step is not None:
                self._join(group, event, step, ctx, now, out)  # type: ignore[arg-type]
                return
            del self._open[stream]
            pending, group.tentative = group.tentative, []
            self._finish(group, ctx, out)
            if pending:  # lines that did not join may begin a group themselves
                for line in pending:
                    self._take(line, ctx, now, out)
                self._take(event, ctx, now, out, distance)
                return
        active = self.machine.start(event.message, distance) if distance is not None else None
        if active is None:
            out.append(event)
        else:
            self._open_group(active, event, now)

    def _open_group(self, active: Active, event: LogEvent, now: float) -> None:
        group = self._open[event.stream] = _Group(active, now)
        group.add(event, False)

    def _join(
        self, group: _Group, event: LogEvent, step: tuple[Active, bool], ctx: FileContext, now: float,
        out: list[LogEvent],
    ) -> None:
        active, tentative = step
        stream = event.stream
        if (
            len(group.lines) + len(group.tentative) >= self.max_lines
            or group.nbytes + 1 + len(event.message) > self.max_bytes
        ):
            # A cap: what the group holds goes out, and this line begins the
            # next record of the same trace (blank lines still pending go with it).
            self.stats.splits += 1
            carried, group.tentative = group.tentative, []
            self._finish(group, ctx, out)
            carried = carried_within_caps(carried, event, self.max_lines, self.max_bytes, ctx, out)
            group = self._open[stream] = _Group(active, now)
            for line in carried:
                group.add(line, True)
        group.active = active
        group.last = now
        group.add(event, tentative)
        if not active:  # the line completes the group
            del self._open[stream]
            self._finish(group, ctx, out)

    def _finish(self, group: _Group, ctx: FileContext, out: list[LogEvent]) -> None:
        lines = group.lines
        if len(lines) == 1:
            out.append(in_context(lines[0], ctx))
        elif lines:
            self.stats.records += 1
            self.stats.lines += len(lines)
            first = lines[0]
            out.append(LogEvent("\n".join(map(_MESSAGE, lines)), first.stream, first.timestamp, ctx,
                                any(map(_TRUNCATED, lines))))
        for line in group.tentative:
            out.append(in_context(line, ctx))


def group_sizes(events: Sequence[LogEvent]) -> list[int]:
    """Lines per record (a test and debugging helper)."""
    return [event.message.count("\n") + 1 for event in events]
