"""Merging of partial line fragments into records, with a byte cap.

Fragments are merged per stream (one merger per file): a runtime writes each
stream sequentially, so fragments of one stream are contiguous among
themselves, while a line of the other stream may land between them. The
merged record keeps the timestamp of its first fragment, as Vector's
``kubernetes_logs`` merger does (it keeps the first event of a bucket and only
appends the messages of later ones).
"""

from __future__ import annotations

#: (message, stream, timestamp, truncated)
ParsedLine = tuple[str, str | None, str | None, bool]


def cut_utf8(data: bytes, limit: int) -> bytes:
    """At most ``limit`` bytes of ``data``, never ending inside a UTF-8 character."""
    if len(data) <= limit:
        return data
    kept = data[:limit]
    return drop_incomplete_tail(kept) if is_continuation(data[limit]) else kept


def is_continuation(byte: int) -> bool:
    """Whether a byte continues a multi-byte UTF-8 character (10xxxxxx)."""
    return byte & 0xC0 == 0x80


def drop_incomplete_tail(data: bytes) -> bytes:
    """``data`` without a trailing UTF-8 sequence that was cut short.

    Only called when the byte after ``data`` was a continuation byte, i.e. the
    cut split a character. Invalid bytes are left alone (decoding replaces them).
    """
    end = len(data)
    # Find the lead byte of the last character among the last 4 bytes.
    for start in range(end - 1, max(end - 4, 0) - 1, -1):
        byte = data[start]
        if not is_continuation(byte):
            if byte >= 0xF0:
                needed = 4
            elif byte >= 0xE0:
                needed = 3
            elif byte >= 0xC0:
                needed = 2
            else:
                needed = 1
            return data[:start] if end - start < needed else data
    return data


class _Pending:
    """An unfinished logical line of one stream."""

    __slots__ = ("timestamp", "parts", "size", "fragments", "over_cap", "split_char", "cut")

    def __init__(self, timestamp: str) -> None:
        self.timestamp = timestamp
        self.parts: list[bytes] = []
        self.size = 0
        self.fragments = 0
        #: the cap was reached: later fragments are consumed but discarded
        self.over_cap = False
        #: the cap fell inside a character, whose start must be dropped too
        self.split_char = False
        #: some fragment was already cut by the tailer
        self.cut = False

    def add(self, message: bytes, cap: int) -> None:
        self.fragments += 1
        if self.over_cap:
            return
        room = cap - self.size
        if len(message) > room:
            if room > 0:
                self.parts.append(message[:room])
                self.size = cap
            self.over_cap = True
            self.split_char = is_continuation(message[room])
        else:
            self.parts.append(message)
            self.size += len(message)


class PartialMerger:
    """Turns parsed fragments into records; holds at most ``max_bytes`` per stream.

    ``enabled=False`` emits every fragment as its own record. The cap applies to
    every record's message, merged or not: a longer one is cut at a UTF-8
    boundary and flagged truncated.
    """

    def __init__(self, *, enabled: bool, max_bytes: int) -> None:
        self.enabled = enabled
        self.max_bytes = max_bytes
        #: stream -> unfinished line. Read by LineParser's fast path: while it
        #: is non-empty, lines take the slow path.
        self.pending: dict[str, _Pending] = {}
        #: records assembled from two or more fragments
        self.merged = 0

    def add(
        self, timestamp: str, stream: str, partial: bool, message: bytes, cut: bool
    ) -> ParsedLine | None:
        """Take one fragment; return the record it completes, if any."""
        pending = self.pending.get(stream)
        if pending is None:
            if not partial or not self.enabled:
                return self._single(message, stream, timestamp, cut)
            pending = self.pending[stream] = _Pending(timestamp)
        pending.add(message, self.max_bytes)
        if cut:
            pending.cut = True
        if partial:
            return None
        del self.pending[stream]
        return self._finish(pending, stream)

    def flush(self) -> list[ParsedLine]:
        """Emit every unfinished line as a record (end of file, file closed)."""
        records = [self._finish(pending, stream) for stream, pending in self.pending.items()]
        self.pending.clear()
        return records

    def pending_bytes(self) -> int:
        return sum(pending.size for pending in self.pending.values())

    def _single(self, message: bytes, stream: str, timestamp: str, cut: bool) -> ParsedLine:
        if len(message) > self.max_bytes:
            message = cut_utf8(message, self.max_bytes)
            cut = True
        return message.decode("utf-8", "replace"), stream, timestamp, cut

    def _finish(self, pending: _Pending, stream: str) -> ParsedLine:
        if pending.fragments > 1:
            self.merged += 1
        data = b"".join(pending.parts)
        if pending.split_char:
            data = drop_incomplete_tail(data)
        return (
            data.decode("utf-8", "replace"),
            stream,
            pending.timestamp,
            pending.over_cap or pending.cut,
        )
