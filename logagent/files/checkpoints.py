"""Durable read offsets, one JSON file per data_dir, shared by every file source.

Offsets are keyed by (source_id, file identity). The tailer updates them in
memory as chunks are acknowledged; the store writes them out atomically (temp
file, fsync, rename, fsync of the directory) about once a second while a
tailer runs and on :meth:`flush` / :meth:`close` at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import structlog

log = structlog.get_logger(__name__)

FILE_NAME = "checkpoints.json"
FORMAT_VERSION = 1


class Checkpoint(msgspec.Struct, frozen=True):
    """Where to resume one file: ``offset`` is a line boundary (or, with
    ``skip``, a point inside a line that was already emitted truncated)."""

    offset: int
    fp: str
    fp_len: int
    skip: bool = False
    path: str = ""


class _Document(msgspec.Struct):
    version: int = FORMAT_VERSION
    sources: dict[str, dict[str, Checkpoint]] = {}


_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(_Document).decode


class CheckpointStore:
    def __init__(self, data_dir: str | os.PathLike[str]) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / FILE_NAME
        self._sources: dict[str, dict[str, Checkpoint]] = {}
        self._dirty = False
        self._seq = itertools.count(1)
        self._written_seq = 0
        self._write_lock = threading.Lock()
        self._flusher: asyncio.Task[None] | None = None
        self._flusher_users = 0
        self.writes = 0
        self.write_errors = 0
        self._load()

    # -- reading and updating (in memory) ------------------------------------

    def get(self, source_id: str, key: str) -> Checkpoint | None:
        return self._sources.get(source_id, {}).get(key)

    def set(self, source_id: str, key: str, checkpoint: Checkpoint) -> None:
        self._sources.setdefault(source_id, {})[key] = checkpoint
        self._dirty = True

    def remove(self, source_id: str, key: str) -> None:
        entries = self._sources.get(source_id)
        if entries is not None and entries.pop(key, None) is not None:
            self._dirty = True

    def keys(self, source_id: str) -> list[str]:
        return list(self._sources.get(source_id, ()))

    # -- persistence ----------------------------------------------------------

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            document = _decode(raw)
            if document.version != FORMAT_VERSION:
                raise ValueError(f"unknown format version {document.version}")
        except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
            aside = self.path.with_name(f"{FILE_NAME}.corrupt-{int(time.time())}")
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            log.error("checkpoint file unreadable; starting without checkpoints",
                      path=str(self.path), moved_to=str(aside), error=str(exc))
            return
        self._sources = document.sources

    def _snapshot(self) -> tuple[int, bytes] | None:
        if not self._dirty:
            return None
        self._dirty = False
        return next(self._seq), _encode(_Document(sources=self._sources))

    def _write(self, seq: int, payload: bytes) -> None:
        with self._write_lock:
            if seq <= self._written_seq:
                return  # a newer snapshot was written already
            self.data_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.{seq}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            dir_fd = os.open(self.data_dir, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
            self._written_seq = seq
            self.writes += 1

    def flush(self) -> None:
        """Write the current offsets now if anything changed (blocking)."""
        snapshot = self._snapshot()
        if snapshot is not None:
            try:
                self._write(*snapshot)
            except OSError:
                self._dirty = True
                self.write_errors += 1
                raise

    async def flush_async(self) -> None:
        snapshot = self._snapshot()
        if snapshot is None:
            return
        try:
            await asyncio.to_thread(self._write, *snapshot)
        except OSError as exc:
            self._dirty = True
            self.write_errors += 1
            log.error("cannot write checkpoints", path=str(self.path), error=str(exc))

    async def _flush_loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.flush_async()

    @contextlib.asynccontextmanager
    async def flushing(self, interval: float = 1.0) -> AsyncIterator[None]:
        """Flush in the background while at least one user is inside this block."""
        self._flusher_users += 1
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush_loop(interval), name="checkpoint-flush")
        try:
            yield
        finally:
            self._flusher_users -= 1
            if self._flusher_users == 0 and self._flusher is not None:
                self._flusher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._flusher
                self._flusher = None

    def close(self) -> None:
        """Final flush (the background task, if any, ends with its last user)."""
        self.flush()
