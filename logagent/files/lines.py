"""Splitting a byte stream into lines with a bounded partial-line buffer."""

from __future__ import annotations


class LineSplitter:
    """Turns successive reads of one file into complete lines (without "\\n").

    The incomplete last line is kept for the next read. A line longer than
    ``max_line_bytes`` is cut to that size and reported as truncated; the rest
    of it, up to its newline, is skipped without being buffered, so memory stays
    bounded by ``max_line_bytes`` whatever the file holds. ``skipping`` is True
    while inside such a rest; it is part of a checkpoint, so a restart in the
    middle of a giant line does not emit its tail as a line of its own.
    """

    __slots__ = ("max_line_bytes", "pending", "skipping")

    def __init__(self, max_line_bytes: int, skipping: bool = False) -> None:
        self.max_line_bytes = max_line_bytes
        self.pending = b""
        self.skipping = skipping

    def reset(self) -> None:
        self.pending = b""
        self.skipping = False

    def feed(self, data: bytes) -> tuple[list[bytes], list[int] | None]:
        """Lines completed by ``data`` and the indexes of the ones that were cut."""
        if self.pending:
            data = self.pending + data
            self.pending = b""
        if self.skipping:
            newline = data.find(b"\n")
            if newline < 0:
                return [], None
            self.skipping = False
            data = data[newline + 1 :]
        lines = data.split(b"\n")
        tail = lines.pop()
        limit = self.max_line_bytes
        truncated: list[int] | None = None
        for index, line in enumerate(lines):
            if len(line) > limit:
                lines[index] = line[:limit]
                if truncated is None:
                    truncated = []
                truncated.append(index)
        if len(tail) > limit:
            if truncated is None:
                truncated = []
            truncated.append(len(lines))
            lines.append(tail[:limit])
            self.skipping = True
        else:
            self.pending = tail
        return lines, truncated

    def feed_block(self, data: bytes) -> bytes | None:
        """The lines completed by ``data`` as one block, without splitting them.

        The block is the complete lines joined by "\\n" (no final newline):
        ``block.split(b"\\n")`` is what ``feed`` would return. Returns None,
        consuming nothing, when the block form does not apply (no complete
        line, inside a skipped rest, a line over ``max_line_bytes``): then call
        ``feed``, which handles those cases.
        """
        if self.skipping:
            return None
        end = data.rfind(b"\n")
        limit = self.max_line_bytes
        pending = self.pending
        if (
            end < 0
            or len(data) - end - 1 > limit
            or (pending and len(pending) + data.find(b"\n") > limit)
            or has_line_over(data, end, limit)
        ):
            return None
        self.pending = data[end + 1 :]
        # one copy of the block, not a concatenation and then a slice of it
        return b"".join((pending, memoryview(data)[:end])) if pending else data[:end]

    def take_unterminated(self) -> bytes | None:
        """The buffered incomplete line, for a file that will never grow again."""
        tail, self.pending = self.pending, b""
        return tail or None


def has_line_over(data: bytes, end: int, limit: int) -> bool:
    """Whether ``data[:end]`` holds a line (between newlines) longer than ``limit``.

    Steps from newline to newline at most ``limit + 1`` bytes apart, with one
    ``rfind`` per step: a few steps per read, not one per line.
    """
    start = 0
    while end - start > limit:
        newline = data.rfind(b"\n", start, start + limit + 1)
        if newline < 0:
            return True
        start = newline + 1
    return False
