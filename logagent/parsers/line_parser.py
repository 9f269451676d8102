"""``LineParser``: one container log file's lines -> records.

Format detection: the format (``"cri"`` or ``"docker"``) is fixed by the first
non-empty line that parses as either format; lines before it are malformed.
After that the format never changes: a line of the other format (or of none)
is malformed and passed on whole. A runtime writes a whole file in one format,
so a line that does not fit is corruption, and re-detecting on it would only
let one bad line change how every later line is read.

The two ``_feed_*`` loops are the agent's hot path. They handle the common
line (a full line, no merge pending, not cut by the tailer, within the cap)
inline and hand everything else to the slow path, which is the reference
behaviour (``parse_cri`` / ``parse_docker`` + ``PartialMerger``).
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from collections.abc import Callable, Container, Sequence
from operator import attrgetter

import msgspec

from logagent.event import FileContext, LogEvent
from logagent.files.lines import has_line_over

from logagent.parsers.cri import MAX_TS_LEN, MIN_TS_LEN, parse_cri
from logagent.parsers.cri import STREAMS as CRI_STREAMS
from logagent.parsers.docker import STREAMS as DOCKER_STREAMS
from logagent.parsers.docker import decode_line, parse_docker
from logagent.parsers.line_marks import feed_cri_marked, marks_regex
from logagent.parsers.merge import ParsedLine, PartialMerger
from logagent.parsers.multiline_prefilter import BLANK_FIRST, first_characters, top_level_alternatives

CRI = "cri"
_STR_STREAMS = {"stdout": "stdout", "stderr": "stderr"}
DOCKER = "docker"

_NO_CUT: frozenset[int] = frozenset()
_TIMESTAMP = attrgetter("timestamp")
#: every character ``\\s`` matches (``str.isspace``)
_SPACES = BLANK_FIRST - {""}
#: how far past a bisection's guess a marked record is looked for before a scan from the last one
_NEAR = 16
_Match = Callable[[str], "re.Match[str] | None"]

# The CRI fast path over a decoded block, as a regex: the same conditions as
# the ``_feed_cri`` loop (parse_cri + timestamp_shape_ok, tag exactly "F"). A
# timestamp char is ASCII and neither space nor newline; its shape is
# NNNN-NN-NNTNN:NN:N..., 20 to 40 chars. Keep the three in step.
_TS_CHAR = r"[\x00-\x09\x0b-\x1f\x21-\x7f]"
_CRI_TIME_STREAM = (
    rf"({_TS_CHAR}{{4}}-{_TS_CHAR}{{2}}-{_TS_CHAR}{{2}}T{_TS_CHAR}{{2}}:{_TS_CHAR}{{2}}:{_TS_CHAR}{{3,23}})"
    r" (stdout|stderr)"
)
_CRI_PREFIX = _CRI_TIME_STREAM + " F "
_CRI_FULL = _CRI_PREFIX + "(.*)"
#: any line: (timestamp, stream, message, "") for a common full line, ("", "", "", line) otherwise
_CRI_ANY_LINE = re.compile(rf"^(?:{_CRI_FULL}|(.*))$", re.MULTILINE)


@functools.lru_cache(maxsize=16)
def _plain_line_regex(marks: str) -> re.Pattern[str] | None:
    """Per line: (timestamp, stream, message, "", "") for a full line whose message is not marked,
    (timestamp, stream, "", message, "") for a full line whose message is marked (*held*) or empty,
    ("", "", "", "", line) for the lines that need the slow path. None: a mark may begin with any
    character.

    A common message passes on one character class (the characters no mark begins with); only a
    message beginning with another character (whitespace, ``#``, ``^``) meets the marks, in the same
    pass, and one beginning with a mark's first letter (``time=...`` as well as ``thread 'main'
    panicked``) only the marks that begin with a letter. A look-ahead or a branch on every line would
    cost ~100 instructions a line in ``re``; a marks match per held message in Python, ~2,000."""
    words: list[str] = []  # the marks that begin with a letter or digit
    firsts: set[str] = set()
    others: set[str] = set()  # what the other marks begin with
    for alternative in top_level_alternatives(marks):
        first = first_characters(alternative)
        if first is None:
            return None
        firsts |= first
        if any(char.isalnum() for char in first):
            words.append(alternative)
        else:
            others |= first
    # Whitespace spelt out rather than ``\s`` (one table look-up), and possessive repeats (a line's
    # rest is never given back): ~65 instructions a line less in ``re`` than the plain spelling.
    # An empty message is always held (its tuple would read like a held one's).
    common = rf"[^{re.escape(''.join(sorted(firsts | _SPACES)))}]"
    letters = {char for char in firsts if char.isalnum()} - others
    if letters:  # a line beginning with a mark's letter meets only those marks
        common += rf"|(?!(?:{'|'.join(words)}))[{re.escape(''.join(sorted(letters)))}]"
    common = rf"(?:{common}|(?!(?:{marks})|$))"
    return re.compile(rf"^(?:{_CRI_PREFIX}(?:({common}.*+)|(.*+))|(.*+))$", re.MULTILINE)


@functools.lru_cache(maxsize=16)
def _full_line_regex(marks: str) -> re.Pattern[str]:
    """A full line's prefix (timestamp, stream) and, in a third group, "" if its message is marked."""
    return re.compile(rf"{_CRI_PREFIX}((?=(?:{marks})))?")


class LineParser:
    """Parses and merges the lines of ONE file; create one per tailed file.

    ``feed`` takes lines without their trailing newline, in file order, and
    returns the records completed by them. Records are returned in the order
    they complete, so a merged line comes after lines of the other stream that
    were written between its fragments.

    Counters: ``lines_in`` (lines taken), ``malformed`` (lines passed on whole), ``truncated`` (records
    emitted with truncated=True, whatever the cause), ``merged`` (records
    assembled from two or more fragments).
    """

    def __init__(self, *, auto_partial_merge: bool = True, max_merged_line_bytes: int = 32768) -> None:
        if isinstance(max_merged_line_bytes, bool) or not isinstance(max_merged_line_bytes, int):
            raise TypeError(f"max_merged_line_bytes must be an int, got {max_merged_line_bytes!r}")
        if max_merged_line_bytes < 1:
            raise ValueError(f"max_merged_line_bytes must be at least 1, got {max_merged_line_bytes}")
        self.format: str | None = None
        #: ``feed_block`` lists the indexes (into what it returns) of the *marked*
        #: records (their message matches ``marks``) in ``indented``, and so does
        #: ``feed`` on its common path (None when it did not): multiline grouping wants them
        self.count_indented = False
        self.indented: list[int] | None = []
        #: with ``count_indented``: a regex (Python's and RE2's syntax) of message
        #: beginnings listed in ``indented`` too (multiline rules' marks)
        self.marks: str | None = None
        self._slow_events = 0
        #: ``_marked_block``'s context for ``_other_line``: (ctx, the marked events, the match of a
        #: full line telling whether it is marked, the marks' match)
        self._block: tuple[FileContext, list[LogEvent], _Match, _Match] | None = None
        self.lines_in = 0
        self.malformed = 0
        self.truncated = 0
        self._max_bytes = max_merged_line_bytes
        self._merger = PartialMerger(enabled=auto_partial_merge, max_bytes=max_merged_line_bytes)

    @property
    def merged(self) -> int:
        return self._merger.merged

    def pending_bytes(self) -> int:
        """Message bytes held in unfinished partial merges (at most the cap per stream)."""
        return self._merger.pending_bytes()

    def flush(self) -> list[ParsedLine]:
        """Emit unfinished partial lines as records (end of file / file closed)."""
        records = self._merger.flush()
        self.truncated += sum(1 for record in records if record[3])
        return records

    def feed(self, lines: Sequence[bytes], truncated: Container[int] | None = None) -> list[ParsedLine]:
        """Parse lines (no trailing newline); return the records they complete.

        ``truncated`` holds the indexes (into ``lines``) of lines the tailer cut
        short; the record each ends up in is flagged truncated.
        """
        cut = truncated or _NO_CUT
        self.lines_in += len(lines)
        self.indented = None
        out: list[ParsedLine] = []
        start = 0
        if self.format is None:
            start = self._detect(lines, cut, out)
            if self.format is None:
                return out
        if cut or max(map(len, lines), default=0) > self._max_bytes:
            # Rare batches (lines cut by the tailer, or over the cap): all
            # through the slow path, which handles those cases.
            slow = self._cri_line if self.format == CRI else self._docker_line
            for index in range(start, len(lines)):
                slow(lines[index], index in cut, out)
            return out
        rest = lines[start:] if start else lines
        if self.format == CRI and self.count_indented:
            detected = bool(out)  # lines before the format was known: not looked at for marks
            marked = feed_cri_marked(rest, out, pending=self._merger.pending, slow=self._cri_line, marks=self.marks)
            self.indented = None if detected else marked
        elif self.format == CRI:
            self._feed_cri(rest, out)
        else:
            self._feed_docker(rest, out)
        return out

    def feed_block(self, block: bytes, ctx: FileContext) -> list[LogEvent] | None:
        """``feed(block.split(b"\\n"))`` made into events of ``ctx``, in fewer steps.

        The fast path of CRI files: the block is decoded once and its lines
        matched by one regex in C, no per-line split or decode. Returns None,
        having consumed nothing, when that does not apply (format not yet
        known or not CRI, invalid UTF-8 anywhere in the block, a line over the
        merge cap): then call ``feed`` with the lines. Lines the regex does not
        take (partials, malformed, other flags) and every line while a merge
        is pending go through the reference slow path, in order.
        """
        if self.format != CRI or has_line_over(block, len(block), self._max_bytes):
            return None
        try:
            # All or nothing: a partial fragment may end inside a character
            # that its next fragment completes; such a block is not valid
            # UTF-8 and takes the bytes path, which merges before decoding.
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if self.count_indented:
            return self._marked_block(text, ctx)
        every = _CRI_ANY_LINE.findall(text)  # one tuple per line, empty ones too
        self.lines_in += len(every)
        pending = self._merger.pending
        slow = self._slow_event
        streams = _STR_STREAMS
        slow_before = self._slow_events
        events = [
            LogEvent(message, streams[stream], timestamp, ctx)
            if timestamp and not pending
            else slow(f"{timestamp} {stream} F {message}" if timestamp else other, ctx)
            for timestamp, stream, message, other in every
        ]
        # only a line of the slow path can leave no record (a fragment): no search of a whole block for
        # None, which compares every record (a Struct) with it
        if self._slow_events != slow_before and None in events:
            events = [event for event in events if event is not None]
        return events

    def _marked_block(self, text: str, ctx: FileContext) -> list[LogEvent]:
        """``feed_block`` that also lists the marked records in ``indented``.

        One regex pass parses every line and tells apart the messages that begin
        with a character no mark begins with; only the others (an indented or
        blank message, ``#0 ...``) meet the marks (``_held_block``), or, while a
        fragment is pending or if a line is no full line, the block goes line by
        line. The marked events' indexes are found by identity afterwards."""
        marks = self.marks or r"[^\S\n]*$"
        plain = _plain_line_regex(marks)
        split = plain.findall(text) if plain is not None else None
        held = None if self._merger.pending or split is None else _held_block(split, ctx, marks)
        if held is not None:
            self.lines_in += len(split)  # type: ignore[arg-type]
            self.indented = _positions(*held) if held[1] else []
            return held[0]
        every = _line_by_line(split) if split is not None else [("", "", "", line) for line in text.split("\n")]
        self.lines_in += len(every)
        pending = self._merger.pending
        streams = _STR_STREAMS
        marked: list[LogEvent] = []
        self._block = (ctx, marked, _full_line_regex(marks).match, marks_regex(marks).match)
        rest = self._other_line
        slow_before = self._slow_events
        events = [
            LogEvent(message, streams[stream], timestamp, ctx) if timestamp and not pending
            else rest(f"{timestamp} {stream} F {message}" if timestamp else other)
            for timestamp, stream, message, other in every
        ]
        if self._slow_events != slow_before and None in events:
            events = [event for event in events if event is not None]
        self.indented = _positions(events, marked)
        return events

    def _other_line(self, line: str) -> LogEvent | None:
        """The event of a line ``_marked_block``'s regex left over, listed as marked if it is."""
        ctx, marked, full, is_marked = self._block  # type: ignore[misc]
        found = full(line)
        if found is None or self._merger.pending:
            event = self._slow_event(line, ctx)
            if event is not None and is_marked(event.message) is not None:
                marked.append(event)
            return event
        event = LogEvent(line[found.end():], _STR_STREAMS[found[2]], found[1], ctx)
        if found[3] is not None:
            marked.append(event)
        return event

    def _slow_event(self, line: str, ctx: FileContext) -> LogEvent | None:
        self._slow_events += 1
        out: list[ParsedLine] = []
        self._cri_line(line.encode("utf-8"), False, out)
        if not out:
            return None
        message, stream, timestamp, truncated = out[0]
        return LogEvent(message, stream, timestamp, ctx, truncated)

    # -- detection -----------------------------------------------------------

    def _detect(self, lines: Sequence[bytes], cut: Container[int], out: list[ParsedLine]) -> int:
        """Fix the format from the first parsable line; return its index.

        Lines before it are emitted as malformed. Returns len(lines) if none parses.
        """
        for index, line in enumerate(lines):
            if line:
                if parse_cri(line) is not None:
                    self.format = CRI
                    return index
                if parse_docker(line) is not None:
                    self.format = DOCKER
                    return index
            self._malformed(line, index in cut, out)
        return len(lines)

    # -- hot path --------------------------------------------------------------

    def _feed_cri(self, lines: Sequence[bytes], out: list[ParsedLine]) -> None:
        append = out.append
        streams = CRI_STREAMS
        pending = self._merger.pending
        slow = self._cri_line
        min_ts, max_ts = MIN_TS_LEN, MAX_TS_LEN
        for line in lines:
            try:
                ts, raw_stream, tag, message = line.split(b" ", 3)
            except ValueError:  # fewer than 4 fields
                slow(line, False, out)
                continue
            stream = streams.get(raw_stream)
            # Same conditions as parse_cri + timestamp_shape_ok, inlined.
            if (
                tag == b"F"
                and stream is not None
                and not pending
                and min_ts <= len(ts) <= max_ts
                and ts[10] == 84
                and ts[13] == 58
                and ts[4] == 45
                and ts[7] == 45
                and ts[16] == 58
            ):
                try:  # parse_cri's ts.isascii() check, at no cost when it holds
                    append((message.decode("utf-8", "replace"), stream, ts.decode("ascii"), False))
                except UnicodeDecodeError:
                    slow(line, False, out)
            else:
                slow(line, False, out)

    def _feed_docker(self, lines: Sequence[bytes], out: list[ParsedLine]) -> None:
        append = out.append
        streams = DOCKER_STREAMS
        pending = self._merger.pending
        decode = decode_line
        decode_error = msgspec.DecodeError
        slow = self._docker_line
        for line in lines:
            try:
                record = decode(line)
            except decode_error:
                slow(line, False, out)
                continue
            log = record.log
            stream = streams.get(record.stream)
            if stream is not None and not pending and log.endswith("\n"):
                append((log[:-1], stream, record.time, False))
            else:
                slow(line, False, out)

    # -- slow path ---------------------------------------------------------------

    def _cri_line(self, line: bytes, cut: bool, out: list[ParsedLine]) -> None:
        parsed = parse_cri(line)
        if parsed is None:
            self._malformed(line, cut, out)
            return
        timestamp, stream, partial, message = parsed
        self._emit(self._merger.add(timestamp, stream, partial, message, cut), out)

    def _docker_line(self, line: bytes, cut: bool, out: list[ParsedLine]) -> None:
        parsed = parse_docker(line)
        if parsed is None:
            self._malformed(line, cut, out)
            return
        timestamp, stream, partial, message = parsed
        self._emit(self._merger.add(timestamp, stream, partial, message.encode("utf-8"), cut), out)

    def _emit(self, record: ParsedLine | None, out: list[ParsedLine]) -> None:
        if record is not None:
            if record[3]:
                self.truncated += 1
            out.append(record)

    def _malformed(self, line: bytes, cut: bool, out: list[ParsedLine]) -> None:
        self.malformed += 1
        if cut:
            self.truncated += 1
        out.append((line.decode("utf-8", "replace"), None, None, cut))


def _held_block(
    split: list[tuple[str, str, str, str, str]], ctx: FileContext, marks: str
) -> tuple[list[LogEvent], list[LogEvent]] | None:
    """``_marked_block``'s events and marked ones when no fragment is pending, from ``_plain_line_regex``'s
    tuples: the full lines its first branch left over are held, and those are the marked ones.
    None, having changed nothing, if a line is no full line (a fragment, a malformed line): the block
    then takes the way line by line, in order with the merger."""
    held: list[LogEvent] = []
    other: list[str] = []
    keep, slow = held.append, other.append
    streams = _STR_STREAMS
    # a held line's event is listed as it is made (no call per line)
    events = [LogEvent(message, streams[stream], timestamp, ctx) if message
              else keep(event := LogEvent(left, streams[stream], timestamp, ctx)) or event if timestamp
              else slow(line)
              for timestamp, stream, message, left, line in split]
    if other:
        return None
    if held and marks_regex(marks).match("") is None:  # empty messages are held, marked or not
        held = [event for event in held if event.message]
    return events, held


def _line_by_line(split: list[tuple[str, str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """``_plain_line_regex``'s tuples as ``_marked_block``'s way line by line reads them: (timestamp,
    stream, message, "") for a line with an unmarked first character, ("", "", "", line) for the others."""
    return [(timestamp, stream, message, other) if message
            else ("", "", "", f"{timestamp} {stream} F {left}" if timestamp else other)
            for timestamp, stream, message, left, other in split]


def _positions(events: list[LogEvent], marked: list[LogEvent]) -> list[int]:
    """The indexes of ``marked`` (in order) in ``events``, found by identity.

    A marked record is most often right after the one before (a trace's
    frames); the first of a run is looked for by bisection on the records'
    timestamps, which a file's lines have in ascending order as a rule (a few
    probes instead of one comparison per record between, which costs ~190
    instructions per record for a Struct), and only where that misses (a
    timestamp out of order, several records with the same one) by a scan."""
    position, indexes, count = -1, [], len(events)
    for event in marked:
        position += 1
        if position < count and events[position] is event:
            indexes.append(position)
            continue
        try:
            guess = bisect_left(events, event.timestamp, position, key=_TIMESTAMP)
        except TypeError:  # a malformed line's record has no timestamp (None)
            guess = position
        if guess < count and events[guess] is event:
            position = guess
        else:
            try:  # the same timestamp as records before it: the event is a few records on
                position = events.index(event, guess, guess + _NEAR)
            except ValueError:
                position = events.index(event, position)
        indexes.append(position)
    return indexes
