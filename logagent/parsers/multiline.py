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
from operator import attrgetter

from logagent.event import FileContext, LogEvent
from logagent.parsers.multiline_machine import Active, Machine
from logagent.parsers.multiline_prefilter import BLANK_FIRST

DEFAULT_TIMEOUT_MS = 1000
DEFAULT_MAX_LINES = 1000
DEFAULT_MAX_BYTES = 131072

_STREAM = attrgetter("stream")


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
        empty, beginning with whitespace or matching the machine's ``marks``),
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
        done = self._take_while_open(events, 0, -1, ctx, now, out) if self._open else 0
        marked = indented if indented is not None else _marked_positions(events, machine)
        start = machine.start
        for first, distance in self._candidates(events, marked, done):
            if first >= done and start(events[first].message, distance) is not None:
                out += events[done:first]
                done = self._take_while_open(events, first, first, ctx, now, out)
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

    def _take_while_open(
        self, events: list[LogEvent], index: int, through: int, ctx: FileContext, now: float, out: list[LogEvent]
    ) -> int:
        """Records one by one from ``index``, through ``through`` and on while a group is open; the next index."""
        count = len(events)
        loop = self.machine.loop
        max_lines, max_bytes = self.max_lines, self.max_bytes
        while index < count and (index <= through or self._open):
            event = events[index]
            group = self._open.get(event.stream)
            if group is not None:
                same = loop(group.active)
                message = event.message
                if (
                    same is not None
                    and same(message) is not None
                    and len(group.lines) + len(group.tentative) < max_lines
                    and group.nbytes + 1 + len(message) <= max_bytes
                ):
                    group.last = now  # what _take would do, in fewer steps
                    group.add(event, False)
                    index += 1
                    continue
            self._take(event, ctx, now, out)
            index += 1
        return index

    def _candidates(self, events: list[LogEvent], marked: Sequence[int], done: int) -> list[tuple[int, int]]:
        """(index, distance) of the records from ``done`` on that may begin a group, in order.

        Each marked record (distance 0), the ``lead`` records of its stream
        before it back to the previous marked one (distance 1, 2, ...), and
        the last ``lead`` of each stream. The records of one kind are first
        tested together (one substring search per literal of the start rules
        that reach that far): a kind none of whose records can start is dropped whole.
        """
        machine = self.machine
        lead = machine.lead or 0
        blank: list[int] = []
        near: list[list[int]] = [[] for _ in range(lead + 1)]  # by distance to the next marked record
        previous: dict[str | None, int] = {}  # per stream: its last marked record so far
        last = done - 2
        for position in marked:
            if position < done:
                continue
            event = events[position]
            message, stream = event.message, event.stream
            (blank if not message or message[0].isspace() else near[0]).append(position)
            if position == last + 1 and events[last].stream == stream:
                previous[stream] = last = position  # the run goes on: no unmarked record between
                continue
            floor = previous.get(stream, done - 1)
            previous[stream] = last = position
            if lead and position - 1 > floor:
                distance = 0
                for index in range(position - 1, floor, -1):
                    if events[index].stream == stream:
                        distance += 1
                        near[distance].append(index)
                        if distance == lead:
                            break
        for index, distance in _stream_tails(events, lead, done):
            if index > previous.get(events[index].stream, done - 1):
                near[distance].append(index)
        found: list[tuple[int, int]] = []
        lines = machine.blank_class[0].lines
        for run in _runs(blank):  # a dump, a trace's frames: one test each
            if lines([events[index].message for index in run]):
                found += [(index, 0) for index in run]
        for distance, (indexes, (test, _rules)) in enumerate(zip(near, machine.classes)):
            if indexes and test.lines([events[index].message for index in indexes]):
                found += [(index, distance) for index in indexes]
        found.sort()
        return found

    def _take(self, event: LogEvent, ctx: FileContext, now: float, out: list[LogEvent]) -> None:
        stream = event.stream
        group = self._open.get(stream)
        if group is not None:
            step = self.machine.step(group.active, event.message)
            if step is not None:
                self._join(group, event, step, ctx, now, out)
                return
            del self._open[stream]
            pending, group.tentative = group.tentative, []
            self._finish(group, ctx, out)
            if pending:  # lines that did not join may begin a group themselves
                for line in pending:
                    self._take(line, ctx, now, out)
                self._take(event, ctx, now, out)
                return
        active = self.machine.start(event.message)
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
            # the pending lines go with it as far as the caps allow; older ones are records of their own
            room, size = self.max_lines - 1, len(event.message)
            while carried and (len(carried) > room or size + sum(len(c.message) + 1 for c in carried) > self.max_bytes):
                out.append(_in_context(carried.pop(0), ctx))
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
            out.append(_in_context(lines[0], ctx))
        elif lines:
            self.stats.records += 1
            self.stats.lines += len(lines)
            first = lines[0]
            out.append(
                LogEvent(
                    "\n".join([line.message for line in lines]),
                    first.stream,
                    first.timestamp,
                    ctx,
                    any(line.truncated for line in lines),
                )
            )
        for line in group.tentative:
            out.append(_in_context(line, ctx))


def _in_context(event: LogEvent, ctx: FileContext) -> LogEvent:
    """``event`` as a record of ``ctx`` (its file's metadata may have changed while it was held)."""
    if event.ctx is ctx:
        return event
    return LogEvent(event.message, event.stream, event.timestamp, ctx, event.truncated)


#: how far back the last records of both streams are looked for one by one
_NEAR = 64


def _stream_tails(events: list[LogEvent], lead: int, done: int) -> list[tuple[int, int]]:
    """(index, distance) of the last ``lead`` records of each stream in ``events[done:]``:
    distance 1 for a stream's last record, 2 for the one before, ..."""
    count = len(events)
    seen: dict[str | None, int] = {}
    tail: list[tuple[int, int]] = []
    for index in range(count - 1, max(count - _NEAR, done) - 1, -1):
        stream = events[index].stream
        found = seen.get(stream, 0)
        if found < lead:
            seen[stream] = found + 1
            tail.append((index, found + 1))
            if len(tail) == 2 * lead:  # both streams (stdout, stderr) complete: the usual case
                return tail
    rest = count - _NEAR
    if rest <= done:
        return tail
    # One stream, or the other one only further back: look at the rest in C.
    backwards = list(map(_STREAM, events[done:rest]))[::-1]
    for stream in set(backwards):
        position = -1
        for distance in range(seen.get(stream, 0) + 1, lead + 1):
            try:
                position = backwards.index(stream, position + 1)
            except ValueError:
                break
            tail.append((rest - 1 - position, distance))
    return tail


def _runs(indexes: list[int]) -> list[list[int]]:
    """``indexes`` (ascending) cut where they are not consecutive."""
    runs: list[list[int]] = []
    previous = -2
    for index in indexes:
        if index != previous + 1:
            runs.append([])
        runs[-1].append(index)
        previous = index
    return runs


def _marked_positions(events: list[LogEvent], machine: Machine) -> list[int]:
    """Indexes of the marked records: message empty, beginning with whitespace, or with a mark.

    One look at each message's first character; only the messages that may begin
    with a mark (such as "#" or "goroutine") meet the marks regex.
    """
    marked, firsts = machine.marked, machine.mark_firsts
    if marked is None or firsts is None:
        return [
            index
            for index, event in enumerate(events)
            if not event.message or event.message[0].isspace() or (marked is not None and marked(event.message))
        ]
    blank = BLANK_FIRST
    return [
        index for index, event in enumerate(events)
        if (first := event.message[:1]) in blank or (first in firsts and marked(event.message))
    ]


def group_sizes(events: Sequence[LogEvent]) -> list[int]:
    """Lines per record (a test and debugging helper)."""
    return [event.message.count("\n") + 1 for event in events]
