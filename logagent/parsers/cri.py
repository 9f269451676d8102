"""CRI log lines: ``<RFC3339Nano timestamp> <stdout|stderr> <tag> <message>``.

The tag is ``P`` (partial: the runtime split a long line, more follows) or ``F``
(full / final fragment), optionally followed by further flags after ``:``. The
message may be empty, with or without the space before it.
"""

from __future__ import annotations

#: (timestamp, stream, partial, message). The message stays raw bytes: runtimes
#: split long lines at byte offsets, so a UTF-8 character can straddle two
#: fragments and must only be decoded after they are joined.
CriLine = tuple[str, str, bool, bytes]

#: Maps the raw stream field to the one shared str object used in records.
STREAMS: dict[bytes, str] = {b"stdout": "stdout", b"stderr": "stderr"}

#: len("2026-01-01T00:00:00Z"); the longest real one, with nanoseconds and an
#: offset, is 35 ("2026-01-01T00:00:00.123456789+00:00"): leave some slack.
MIN_TS_LEN = 20
MAX_TS_LEN = 40


def timestamp_shape_ok(ts: bytes) -> bool:
    """Cheap shape check of an RFC 3339 timestamp (no date parsing).

    Enough to keep a garbage line from passing as CRI. ``LineParser`` inlines
    the same expression in its fast path; keep the two identical.
    """
    return (
        MIN_TS_LEN <= len(ts) <= MAX_TS_LEN
        and ts[10] == 84  # T
        and ts[13] == 58  # :
        and ts[4] == 45  # -
        and ts[7] == 45  # -
        and ts[16] == 58  # :
        and ts.isascii()
    )


def partial_flag(tag: bytes) -> bool | None:
    """True for a ``P`` tag, False for ``F``, None for anything else.

    Only the first ``:``-separated flag decides.
    """
    if len(tag) > 1 and tag[1] != 58:  # more than one char before any ':'
        return None
    first = tag[:1]
    if first == b"F":
        return False
    if first == b"P":
        return True
    return None


def parse_cri(line: bytes) -> CriLine | None:
    """Parse one CRI line (without its trailing newline); None if it is not CRI."""
    parts = line.split(b" ", 3)
    if len(parts) == 4:
        ts, raw_stream, tag, message = parts
    elif len(parts) == 3:
        ts, raw_stream, tag = parts
        message = b""
    else:
        return None
    stream = STREAMS.get(raw_stream)
    if stream is None or not timestamp_shape_ok(ts):
        return None
    partial = partial_flag(tag)
    if partial is None:
        return None
    return ts.decode("ascii"), stream, partial, message
