"""The dead-letter file: records a sink gave up on, kept for a human to inspect.

A sink writes here what the receiver rejected for good (a 4xx that retrying
cannot fix, a single record still too large after splitting); the checkpoint
then moves on, so nothing is retried forever and nothing vanishes silently.

Each line is one JSON object ``{"reason": ..., "record": <the record>}`` where
the record is the JSON the sink would have sent. The files hold whole records:
they are 0600 in a 0700 directory (:mod:`logagent.file_modes`). The file is
size-capped: it lives as ``<name>.ndjson`` (newest lines) and ``<name>.ndjson.1`` (older
lines). When the current file would pass half the cap it becomes ``.1``,
replacing the previous ``.1``, whose lines are counted in ``records_discarded``.
So the oldest lines go first and both files together stay within the cap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import msgspec

from logagent.encoding import encode_json
from logagent.event import LogEvent
from logagent.file_modes import open_private, private_directory

_encode = msgspec.json.Encoder().encode

#: Default cap of both files together.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


class DeadLetterFile:
    """Appends rejected records to a size-capped ndjson file.

    ``write`` is synchronous and cheap (one buffered append); sinks call it
    rarely. It raises ``OSError`` when the file cannot be written, so the
    caller can count the records as lost and say so.
    """

    def __init__(self, path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 2:
            raise ValueError("max_bytes: must be at least 2")
        self.path = Path(path)
        self.previous_path = self.path.with_name(self.path.name + ".1")
        self.max_bytes = max_bytes
        #: lines written since start
        self.records_written = 0
        #: lines removed by the cap (rotated-out files) and records too large to keep
        self.records_discarded = 0
        self._size: int | None = None

    @property
    def _file_cap(self) -> int:
        return self.max_bytes // 2

    def write(self, records: Iterable[bytes], reason: str) -> None:
        """Append one line per record; each record is one encoded JSON value."""
        prefix = b'{"reason":' + _encode(reason) + b',"record":'
        lines = []
        for record in records:
            line = prefix + record + b"}\n"
            if len(line) > self._file_cap:
                self.records_discarded += 1
                continue
            lines.append(line)
        if lines:
            self._append(lines)

    def write_events(self, events: Iterable[LogEvent], reason: str) -> None:
        """``write`` for events not yet encoded (encoded as the sinks' JSON)."""
        self.write((encode_json(event) for event in events), reason)

    def _append(self, lines: list[bytes]) -> None:
        private_directory(self.path.parent)
        if self._size is None:
            self._size = self.path.stat().st_size if self.path.exists() else 0
        start = 0
        while start < len(lines):
            end, size = start, self._size
            while end < len(lines) and size + len(lines[end]) <= self._file_cap:
                size += len(lines[end])
                end += 1
            if end == start:
                self._rotate()
                continue
            with os.fdopen(open_private(self.path, os.O_WRONLY | os.O_APPEND), "ab") as out:
                out.write(b"".join(lines[start:end]))
            self.records_written += end - start
            self._size = size
            start = end

    def _rotate(self) -> None:
        if self.previous_path.exists():
            with open(self.previous_path, "rb") as old:
                self.records_discarded += sum(chunk.count(b"\n") for chunk in iter(lambda: old.read(1 << 20), b""))
        if self.path.exists():
            os.replace(self.path, self.previous_path)
        else:
            self.previous_path.unlink(missing_ok=True)
        self._size = 0


def dead_letter_path(data_dir: str | os.PathLike[str], component_id: str) -> Path:
    """``<data_dir>/dead-letter/<sink>.ndjson``."""
    return Path(data_dir) / "dead-letter" / f"{component_id}.ndjson"
