"""What the multiline grouper works out on a batch's records: no state, no machine's tables.

The last records of each stream (the ones whose marked line may come with
the next batch), the marked records when the parser did not list them, the
run of records a group's self-loop takes (the frames of a trace), the blank
lines that go on with a group cut at a cap, a record in its file's context.
"""

from __future__ import annotations

from itertools import compress, count
from operator import attrgetter, itemgetter

from logagent.event import FileContext, LogEvent
from logagent.parsers.multiline_machine import Machine, Search

_STREAM = attrgetter("stream")
_MESSAGE = attrgetter("message")
_FIRST = itemgetter(slice(0, 1))


def in_context(event: LogEvent, ctx: FileContext) -> LogEvent:
    """``event`` as a record of ``ctx`` (its file's metadata may have changed while it was held)."""
    if event.ctx is ctx:
        return event
    return LogEvent(event.message, event.stream, event.timestamp, ctx, event.truncated)


def carried_within_caps(
    carried: list[LogEvent], event: LogEvent, max_lines: int, max_bytes: int, ctx: FileContext, out: list[LogEvent]
) -> list[LogEvent]:
    """Of the blank lines a group cut at a cap was holding, those that go with ``event`` into the next
    record as far as the caps allow; the older ones go to ``out`` as records of their own."""
    room, size = max_lines - 1, len(event.message)
    while carried and (len(carried) > room or size + sum(len(c.message) + 1 for c in carried) > max_bytes):
        out.append(in_context(carried.pop(0), ctx))
    return carried


def extend_run(
    events: list[LogEvent], index: int, lines: list[LogEvent], nbytes: int, same: Search, max_lines: int,
    max_bytes: int,
) -> tuple[int, int]:
    """Appends to a group's ``lines`` (``nbytes`` joined, no blank line pending) the records from ``index``
    on that its self-loop ``same`` takes, while they are of its stream and within the caps.

    Returns the index of the first record not taken, and the group's bytes then: a trace's frames
    cost one match and an append each.
    """
    stream = lines[-1].stream
    end = min(len(events), index + max_lines - len(lines))
    append = lines.append
    while index < end:
        event = events[index]
        message = event.message
        if event.stream != stream or same(message) is None:
            break
        size = nbytes + 1 + len(message)
        if size > max_bytes:
            break
        nbytes = size
        append(event)
        index += 1
    return index, nbytes


#: how far back the last records of both streams are looked for one by one
_NEAR = 64


def stream_tails(events: list[LogEvent], lead: int, done: int = 0) -> list[tuple[int, int]]:
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


def marked_positions(events: list[LogEvent], machine: Machine) -> list[int]:
    """Indexes of the marked records (the parser did not list them): their message matches the marks.

    A look at each message's first character first; only those a mark can begin with meet the regex.
    """
    marked, firsts = machine.marked, machine.mark_firsts
    if marked is None:
        return [index for index, event in enumerate(events) if not event.message.strip()]
    if firsts is None:
        return [index for index, event in enumerate(events) if marked(event.message) is not None]
    # the first characters looked at in C: a line is not looked at in Python unless a mark may begin it
    maybe = compress(count(), map(firsts.__contains__, map(_FIRST, map(_MESSAGE, events))))
    return [index for index in maybe if marked(events[index].message) is not None]
