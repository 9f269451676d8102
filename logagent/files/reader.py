"""Reading one open log file: offsets, block reads, partial lines, truncation.

A :class:`FileReader` owns the descriptor of one file and knows nothing of
discovery or acknowledgements. ``read_pos`` is how far the file was read;
``emitted_end`` how far chunks were handed out (a line boundary: the bytes in
between are the incomplete last line the splitter holds).
"""

from __future__ import annotations

import contextlib
import os

from logagent.files.identity import fingerprint, fingerprint_matches
from logagent.files.lines import LineSplitter


def at_line_start(fd: int, offset: int) -> bool:
    return offset == 0 or os.pread(fd, 1, offset - 1) == b"\n"


class FileReader:
    """Successive reads of one file, split into complete lines."""

    __slots__ = ("fd", "key", "read_pos", "emitted_end", "size", "splitter", "fp", "fp_len")

    def __init__(self, fd: int, key: tuple[int, int], start: int, skip: bool, max_line_bytes: int) -> None:
        self.fd = fd
        self.key = key
        self.read_pos = start
        self.emitted_end = start
        self.size = start
        self.splitter = LineSplitter(max_line_bytes, skipping=skip)
        self.fp = ""
        self.fp_len = 0

    def take_fingerprint(self, size: int, fingerprint_bytes: int) -> None:
        """Hash the leading bytes again while the file is shorter than ``fingerprint_bytes``."""
        if self.fp_len < fingerprint_bytes and size > self.fp_len:
            self.fp_len = min(size, fingerprint_bytes)
            self.fp = fingerprint(self.fd, self.fp_len)

    def leading_bytes_changed(self) -> bool:
        return bool(self.fp_len) and not fingerprint_matches(self.fd, self.fp_len, self.fp)

    def read(self, want: int) -> bytes:
        """Up to ``want`` bytes at ``read_pos`` (raises OSError); advances ``read_pos``."""
        data = os.pread(self.fd, want, self.read_pos)
        self.read_pos += len(data)
        return data

    def split(self, data: bytes) -> tuple[bytes | None, list[bytes], list[int] | None, int]:
        """(block, lines, truncated, end) of what ``data`` completes.

        ``block`` is set (and ``lines`` empty) in the common case: complete
        lines, none cut, left unsplit. ``end`` is the offset after the last
        complete line.
        """
        splitter = self.splitter
        block = splitter.feed_block(data)
        if block is not None:
            return block, [], None, self.read_pos - len(splitter.pending)
        lines, truncated = splitter.feed(data)
        return None, lines, truncated, self.read_pos - len(splitter.pending)

    def pass_over(self, size: int, max_line_bytes: int) -> int:
        """Move to ``size`` without reading; returns the bytes passed over."""
        skipped = size - self.read_pos
        self.read_pos = size
        self.splitter = LineSplitter(max_line_bytes, skipping=not at_line_start(self.fd, size))
        return skipped

    def restart(self) -> None:
        """The file was truncated (or rewritten): read it again from 0."""
        self.read_pos = self.emitted_end = 0
        self.splitter.reset()
        self.fp, self.fp_len = "", 0

    def take_unterminated(self) -> tuple[bytes | None, int]:
        """The incomplete last line, for a file that will never grow again, and its end."""
        if self.splitter.skipping:
            return None, self.emitted_end
        tail = self.splitter.take_unterminated()
        return tail, self.read_pos if tail is not None else self.emitted_end

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)
