"""The marked lines of a file's records in ``multiline: auto`` (``LineParser.count_indented``).

A record is *marked* when its message matches the multiline tables' marks
(empty or blank, a frame after the indentation, ``#0 ...``): the grouper
tries trace starts only near marked records. Kept apart from the parser's
hot path so that ``mode: none`` pays nothing for it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from logagent.parsers.cri import MAX_TS_LEN, MIN_TS_LEN
from logagent.parsers.cri import STREAMS as CRI_STREAMS
from logagent.parsers.merge import ParsedLine
from logagent.parsers.multiline_prefilter import first_characters

@functools.lru_cache(maxsize=16)
def mark_first_bytes(marks: str) -> frozenset[int]:
    """The first bytes a marked message may begin with: ASCII whitespace, the marks' own first
    characters, and every byte of a character beyond ASCII (all of them when the marks' are unknown)."""
    firsts = first_characters(marks)
    if firsts is None:
        return frozenset(range(256))
    ascii_spaces = [c for c in range(128) if chr(c).isspace()]
    return frozenset([*ascii_spaces, *(ord(c) for c in firsts if ord(c) < 128), *range(128, 256)])


@functools.lru_cache(maxsize=16)
def marks_regex(marks: str) -> re.Pattern[str]:
    return re.compile(f"(?:{marks})")


def feed_cri_marked(
    lines: Sequence[bytes], out: list[ParsedLine], *, pending: Any, slow: Any, marks: str | None
) -> list[int] | None:
    """``LineParser._feed_cri`` that also lists the marked records (a look at each message's first byte;
    only those a mark may begin with meet the marks); None when a record took the slow path.
    ``pending``, ``slow``: the parser's merger's fragments and its per-line way (``_cri_line``)."""
    append = out.append
    streams = CRI_STREAMS
    min_ts, max_ts = MIN_TS_LEN, MAX_TS_LEN
    marks = marks or r"[^\S\n]*$"
    maybe, is_marked = mark_first_bytes(marks), marks_regex(marks).match
    marked: list[int] | None = []
    for line in lines:
        try:
            ts, raw_stream, tag, message = line.split(b" ", 3)
        except ValueError:  # fewer than 4 fields
            slow(line, False, out)
            marked = None
            continue
        stream = streams.get(raw_stream)
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
            try:
                text = message.decode("utf-8", "replace")
                append((text, stream, ts.decode("ascii"), False))
            except UnicodeDecodeError:
                slow(line, False, out)
                marked = None
                continue
            if marked is not None and (not message or message[0] in maybe) and is_marked(text) is not None:
                marked.append(len(out) - 1)
        else:
            slow(line, False, out)
            marked = None  # a record the slow path made: the grouper looks itself
    return marked
