"""Tailing the kubelet log tree: discovery, reading, rotation, checkpoints.

One coroutine (the main loop) owns all file state: it applies discovery
results (change notifications, pokes, the periodic rescan), then reads the
files that are ready one turn at a time (round-robin, or oldest first) and
awaits ``emit`` for each chunk. Acknowledgements arrive through each chunk's
``AckGroup`` callback and advance the file's checkpoint over the contiguous
run of finished chunks.

Rotation: a file is known by its identity (device, inode, fingerprint), not by
its path. A renamed file is read on through its open descriptor; if the new
name is still included it simply keeps being tailed under that name, else it
is "gone". A gone or deleted file is read to its end and closed once it has
been gone ``gone_close_grace_secs`` (a writer may append until the runtime
reopens the log), or after ``rotate_wait_secs`` even if unread data is left.
A file that shrinks below the read offset (copy-truncate) is read again from 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import stat
import time
from collections import deque
from collections.abc import Awaitable, Callable
from functools import partial

import structlog

from logagent.acks import AckGroup
from logagent.files.checkpoints import Checkpoint, CheckpointStore
from logagent.files.config import TailerConfig
from logagent.files.discovery import FILE_DEPTH, depth_below, scan_dir
from logagent.files.identity import fingerprint, fingerprint_matches, identity_key
from logagent.files.lines import LineSplitter
from logagent.files.model import Chunk, TailedFile
from logagent.files.paths import PathFilter, parse_pod_path
from logagent.files.watch import DELETED, MODIFIED, watch_tree

log = structlog.get_logger(__name__)

Emit = Callable[[Chunk], Awaitable[None]]

_POLL_FALLBACK_SECS = 1.0
_GONE_CHECK_SECS = 0.25


class _InFlight:
    """A chunk emitted and not yet acknowledged."""

    __slots__ = ("end", "skip", "nbytes", "done", "stale")

    def __init__(self, end: int, skip: bool, nbytes: int) -> None:
        self.end = end
        self.skip = skip
        self.nbytes = nbytes
        self.done = False
        self.stale = False  # emitted before a truncation: must not move the checkpoint


class _FileState:
    __slots__ = (
        "fd", "key", "seq", "read_pos", "emitted_end", "size", "splitter", "fp", "fp_len",
        "committed", "committed_skip", "inflight", "queued", "gone_since", "deleted", "closed",
    )

    def __init__(self, fd: int, key: tuple[int, int], seq: int, start: int, skip: bool,
                 max_line_bytes: int) -> None:
        self.fd = fd
        self.key = key
        self.seq = seq
        self.read_pos = start
        self.emitted_end = start
        self.size = start
        self.splitter = LineSplitter(max_line_bytes, skipping=skip)
        self.fp = ""
        self.fp_len = 0
        self.committed = start
        self.committed_skip = skip
        self.inflight: deque[_InFlight] = deque()
        self.queued = False
        self.gone_since: float | None = None
        self.deleted = False
        self.closed = False


def _at_line_start(fd: int, offset: int) -> bool:
    return offset == 0 or os.pread(fd, 1, offset - 1) == b"\n"


class FileTailer:
    """Tails the files of one source and emits :class:`Chunk` s of complete lines."""

    def __init__(self, config: TailerConfig, checkpoints: CheckpointStore, source_id: str) -> None:
        self.config = config
        self.checkpoints = checkpoints
        self.source_id = source_id
        self.log_dir = os.path.abspath(config.log_dir)
        self._filter = PathFilter(self.log_dir, config.include_paths_glob_patterns,
                                  config.exclude_paths_glob_patterns)
        self._files: dict[tuple[int, int], TailedFile] = {}
        self._by_path: dict[str, TailedFile] = {}
        self._gone: set[TailedFile] = set()
        #: files not read because of ignore_older_secs: key -> size when seen
        self._ignored: dict[tuple[int, int], int] = {}
        #: closed files still on disk (renamed out of the include set): key -> path
        self._lingering: dict[tuple[int, int], str] = {}
        #: which TailedFile may write the checkpoint of an identity
        self._owner: dict[tuple[int, int], TailedFile] = {}
        self._ready: deque[TailedFile] = deque()
        self._pending_paths: set[str] = set()
        self._pending_dirs: set[str] = set()
        self._full_scan_due = False
        self._poll_mode = False
        self._ids = itertools.count(1)
        self._seqs = itertools.count(1)
        self._wake = asyncio.Event()
        self._stop_event = asyncio.Event()
        self._stopping = False
        self._emit: Emit | None = None
        self._emitting: asyncio.Task[None] | None = None
        self._unacked = 0
        self._chunks_in_flight = 0
        self._skip: Callable[[TailedFile], bool] | None = None
        # stats
        #: bytes of skipped files passed over without being read
        self.bytes_skipped = 0
        self.lines_truncated = 0
        self.bytes_read = 0
        self.chunks_emitted = 0
        self.files_opened = 0
        self.files_closed = 0
        self.files_closed_unread = 0
        self.bytes_unread_on_close = 0
        self.truncations = 0
        self.backpressure_pauses = 0
        #: True while reading waits for acknowledgements (max_unacked_bytes reached)
        self.paused = False

    # -- stats ----------------------------------------------------------------

    @property
    def files_open(self) -> int:
        return len(self._files)

    @property
    def files_open_deleted(self) -> int:
        """Open files that no longer have a name (an fstat each: call it at scrape time)."""
        count = 0
        for f in self._files.values():
            try:
                count += os.fstat(f.state.fd).st_nlink == 0
            except OSError:
                pass
        return count

    @property
    def unacked_bytes(self) -> int:
        return self._unacked

    @property
    def checkpoint_lag_bytes(self) -> int:
        """Bytes of open files (as large as last seen) past their checkpoint."""
        return sum(max(0, f.state.size - f.state.committed) for f in self._files.values())

    def files(self) -> list[TailedFile]:
        return list(self._files.values())

    # -- control --------------------------------------------------------------

    def poke(self, pod_dir_name: str) -> None:
        """Look at ``<log_dir>/<pod_dir_name>`` now (e.g. a pod was just added)."""
        if not pod_dir_name or "/" in pod_dir_name or pod_dir_name in (".", ".."):
            return
        self._pending_dirs.add(os.path.join(self.log_dir, pod_dir_name))
        self._wake.set()

    def stop(self) -> None:
        """Stop reading; ``run`` returns soon.

        An ``emit`` that is blocked (a full queue) is cancelled: its chunk is
        never acknowledged, so its lines are read again after a restart.
        """
        self._stopping = True
        self._stop_event.set()
        self._wake.set()
        if self._emitting is not None:
            self._emitting.cancel()

    async def run(self, emit: Emit, *, once: bool = False) -> None:
        self._emit = emit
        try:
            self._full_scan(startup=True)
            self._prune_checkpoints()
            async with self.checkpoints.writing():
                if once:
                    await self._run_once()
                    return
                helpers = [
                    asyncio.create_task(self._watch(), name="files-watch"),
                    asyncio.create_task(self._rescan_timer(), name="files-rescan"),
                ]
                try:
                    await self._main_loop()
                finally:
                    self._stop_event.set()
                    for task in helpers:
                        task.cancel()
                    for task in helpers:
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await task
        finally:
            for f in list(self._files.values()):
                self._release(f)

    # -- the main loop ----------------------------------------------------------

    async def _main_loop(self) -> None:
        while not self._stopping:
            self._apply_discovery()
            for expired in self._expired_gone():
                await self._close(expired, final=True)
            if self._unacked >= self.config.max_unacked_bytes:
                if not self.paused:
                    self.paused = True
                    self.backpressure_pauses += 1
                await self._sleep(_GONE_CHECK_SECS if self._gone else None)
                continue
            self.paused = False
            f = self._next_ready()
            if f is None:
                await self._sleep(_GONE_CHECK_SECS if self._gone else None)
                continue
            await self._read_turn(f)
            await asyncio.sleep(0)  # let notifications, acks and sinks run between turns

    async def _run_once(self) -> None:
        while not self._stopping:
            if self._unacked >= self.config.max_unacked_bytes:
                await self._sleep(None)
                continue
            f = self._next_ready()
            if f is None:
                break
            await self._read_turn(f, once=True)
        for f in list(self._files.values()):
            if self._stopping:
                break
            await self._close(f, final=f.state.deleted or f.state.gone_since is not None)
        while self._chunks_in_flight > 0 and not self._stopping:
            await self._sleep(None)
        self.checkpoints.try_flush()

    async def _sleep(self, timeout: float | None) -> None:
        self._wake.clear()
        if timeout is None:
            await self._wake.wait()
        else:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    def _mark_ready(self, f: TailedFile) -> None:
        state: _FileState = f.state
        if not state.queued and not state.closed:
            state.queued = True
            self._ready.append(f)
            self._wake.set()

    def _next_ready(self) -> TailedFile | None:
        if not self._ready:
            return None
        if self.config.oldest_first:
            f = min(self._ready, key=lambda x: x.state.seq)
            self._ready.remove(f)
        else:
            f = self._ready.popleft()
        f.state.queued = False
        return f

    # -- reading ------------------------------------------------------------------

    async def _read_turn(self, f: TailedFile, *, once: bool = False) -> None:
        state: _FileState = f.state
        if state.closed:
            return
        try:
            st = os.fstat(state.fd)
        except OSError as exc:
            log.warning("cannot stat open log file; closing it", path=f.path, error=str(exc))
            await self._close(f, final=True)
            return
        if st.st_nlink == 0 and not state.deleted:
            state.deleted = True
            self._set_gone(f)
        if st.st_size < state.read_pos:
            self._restart_truncated(f, "file shrank below the read offset")
        state.size = st.st_size
        if state.fp_len < self.config.fingerprint_bytes and st.st_size > state.fp_len:
            state.fp_len = min(st.st_size, self.config.fingerprint_bytes)
            state.fp = fingerprint(state.fd, state.fp_len)
        want = min(self.config.max_read_bytes, st.st_size - state.read_pos)
        if want <= 0:
            if state.gone_since is not None and (
                once or time.monotonic() - state.gone_since >= self.config.gone_close_grace_secs
            ):
                await self._close(f, final=True)
            return
        if self._skip is not None and self._skip(f):
            await self._pass_over(f, st.st_size)
            return
        try:
            data = os.pread(state.fd, want, state.read_pos)
        except OSError as exc:
            log.warning("cannot read log file; closing it", path=f.path, error=str(exc))
            await self._close(f, final=True)
            return
        if not data:
            return
        self.bytes_read += len(data)
        state.read_pos += len(data)
        if state.read_pos < st.st_size:
            self._mark_ready(f)  # more to read: back of the queue, others get their turn
        block = state.splitter.feed_block(data)
        if block is not None:  # the common read: complete lines, none cut, left unsplit
            await self._emit_chunk(f, None, None, state.read_pos - len(state.splitter.pending), eof=False, block=block)
            return
        lines, truncated = state.splitter.feed(data)
        if lines:
            end = state.read_pos - len(state.splitter.pending)
            self.lines_truncated += len(truncated) if truncated else 0
            await self._emit_chunk(f, lines, frozenset(truncated) if truncated else None, end, eof=False)

    def set_skip(self, predicate: Callable[[TailedFile], bool] | None) -> None:
        """Files for which ``predicate`` is true (asked before each read) are not read.

        Their new bytes are passed over: the offset moves to the end of the
        file (inside a line, the rest of that line is skipped once reading
        resumes) through an empty chunk, so the checkpoint follows in order.
        The consumer uses this for files whose lines it would drop anyway,
        such as those of excluded pods.
        """
        self._skip = predicate

    async def _pass_over(self, f: TailedFile, size: int) -> None:
        state: _FileState = f.state
        self.bytes_skipped += size - state.read_pos
        state.read_pos = size
        state.splitter = LineSplitter(self.config.max_line_bytes, skipping=not _at_line_start(state.fd, size))
        await self._emit_chunk(f, [], None, size, eof=False)

    async def _emit_chunk(self, f: TailedFile, lines: list[bytes] | None, truncated: frozenset[int] | None,
                          end: int, *, eof: bool, block: bytes | None = None) -> None:
        if self._stopping:
            return
        state: _FileState = f.state
        nbytes = max(0, end - state.emitted_end)
        state.emitted_end = max(end, state.emitted_end)
        entry = _InFlight(end, state.splitter.skipping, nbytes)
        state.inflight.append(entry)
        self._unacked += nbytes
        self._chunks_in_flight += 1
        chunk = Chunk(f, lines, truncated, AckGroup(partial(self._on_ack, f, entry)), nbytes, end, eof, block)
        self.chunks_emitted += 1
        assert self._emit is not None
        self._emitting = asyncio.current_task()
        try:
            await self._emit(chunk)
        except asyncio.CancelledError:
            if not self._stopping:
                raise
        finally:
            self._emitting = None

    def _on_ack(self, f: TailedFile, entry: _InFlight) -> None:
        entry.done = True
        self._unacked -= entry.nbytes
        self._chunks_in_flight -= 1
        state: _FileState = f.state
        advanced = False
        while state.inflight and state.inflight[0].done:
            done = state.inflight.popleft()
            if not done.stale:
                state.committed, state.committed_skip = done.end, done.skip
                advanced = True
        if self._owner.get(state.key) is f:
            if state.closed and state.deleted and not state.inflight:
                self.checkpoints.remove(self.source_id, identity_key(*state.key))
                del self._owner[state.key]
            elif advanced:
                self._store_checkpoint(f)
        self._wake.set()

    def _store_checkpoint(self, f: TailedFile) -> None:
        state: _FileState = f.state
        self.checkpoints.set(self.source_id, f.identity, Checkpoint(
            offset=state.committed, fp=state.fp, fp_len=state.fp_len,
            skip=state.committed_skip, path=f.path,
        ))

    def _restart_truncated(self, f: TailedFile, reason: str) -> None:
        state: _FileState = f.state
        log.info("log file truncated; reading it again from the start", path=f.path, reason=reason)
        self.truncations += 1
        for entry in state.inflight:
            entry.stale = True
        state.read_pos = state.emitted_end = state.committed = 0
        state.committed_skip = False
        state.splitter.reset()
        state.fp, state.fp_len = "", 0
        if self._owner.get(state.key) is f:
            self._store_checkpoint(f)

    # -- opening and closing --------------------------------------------------------

    def _open(self, path: str, startup: bool) -> TailedFile | None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                log.warning("cannot open log file", path=path, error=str(exc))
            return None
        try:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)
            if not stat.S_ISREG(st.st_mode) or key in self._files:
                os.close(fd)
                return None
            start = self._start_offset(fd, key, st, startup)
        except OSError as exc:
            log.warning("cannot read log file", path=path, error=str(exc))
            os.close(fd)
            return None
        if start is None:
            os.close(fd)
            self._ignored[key] = st.st_size
            return None
        offset, skip, resumed = start
        self._ignored.pop(key, None)
        self._lingering.pop(key, None)
        pod = parse_pod_path(self.log_dir, path)
        state = _FileState(fd, key, next(self._seqs), offset, skip, self.config.max_line_bytes)
        state.size = st.st_size
        state.fp_len = min(st.st_size, self.config.fingerprint_bytes)
        state.fp = fingerprint(fd, state.fp_len)
        f = TailedFile(next(self._ids), path, pod.pod_dir, pod.namespace, pod.pod_name, pod.pod_uid,
                       pod.container, identity_key(*key), state)
        self._files[key] = f
        self._by_path[path] = f
        self._owner[key] = f
        self.files_opened += 1
        self._store_checkpoint(f)  # a restart resumes here instead of applying read_from again
        log.debug("tailing log file", path=path, identity=f.identity, offset=offset, resumed=resumed)
        self._mark_ready(f)
        return f

    def _start_offset(self, fd: int, key: tuple[int, int], st: os.stat_result,
                      startup: bool) -> tuple[int, bool, bool] | None:
        """(offset, skip, resumed) for a newly opened file, or None to ignore it."""
        checkpoint = self.checkpoints.get(self.source_id, identity_key(*key))
        if (checkpoint is not None and checkpoint.fp_len <= st.st_size
                and fingerprint_matches(fd, checkpoint.fp_len, checkpoint.fp)):
            if checkpoint.offset <= st.st_size:
                return checkpoint.offset, checkpoint.skip, True
            return 0, False, True  # shrank while we were away: copy-truncate
        if key in self._ignored:
            if self._too_old(st):
                return None
            offset = self._ignored[key]
            if offset > st.st_size:
                return 0, False, False
            return offset, not _at_line_start(fd, offset), False
        if self._too_old(st):
            return None
        if startup and self.config.read_from == "end":
            return st.st_size, not _at_line_start(fd, st.st_size), False
        return 0, False, False

    def _too_old(self, st: os.stat_result) -> bool:
        limit = self.config.ignore_older_secs
        return limit is not None and st.st_mtime < time.time() - limit

    async def _close(self, f: TailedFile, *, final: bool) -> None:
        """Emit the file's eof chunk and stop tailing it.

        ``final``: the file is gone, so a last line without its newline is
        emitted too (it can never be completed).
        """
        state: _FileState = f.state
        if state.closed:
            return
        unread = max(0, state.size - state.read_pos)
        if unread:
            self.files_closed_unread += 1
            self.bytes_unread_on_close += unread
            log.warning("closing rotated/deleted log file with unread data", path=f.path, unread_bytes=unread)
        lines: list[bytes] = []
        end = state.emitted_end
        if final and not state.splitter.skipping:
            tail = state.splitter.take_unterminated()
            if tail is not None:
                lines.append(tail)
                end = state.read_pos
        self._release(f)
        if not state.deleted:
            self._lingering[state.key] = f.path
        await self._emit_chunk(f, lines, None, end, eof=True)

    def _release(self, f: TailedFile) -> None:
        """Forget the file and close its descriptor (no chunk is emitted)."""
        state: _FileState = f.state
        if state.closed:
            return
        state.closed = True
        with contextlib.suppress(OSError):
            os.close(state.fd)
        if self._files.get(state.key) is f:
            del self._files[state.key]
        if self._by_path.get(f.path) is f:
            del self._by_path[f.path]
        self._gone.discard(f)
        self.files_closed += 1

    def _set_gone(self, f: TailedFile) -> None:
        state: _FileState = f.state
        if state.gone_since is None:
            state.gone_since = time.monotonic()
            self._gone.add(f)
        self._mark_ready(f)

    def _expired_gone(self) -> list[TailedFile]:
        """Gone files kept open for rotate_wait_secs; asks the others to check for their end."""
        if not self._gone:
            return []
        now = time.monotonic()
        expired = []
        for f in self._gone:
            state: _FileState = f.state
            assert state.gone_since is not None
            waited = now - state.gone_since
            if waited >= self.config.rotate_wait_secs:
                expired.append(f)
            elif waited >= self.config.gone_close_grace_secs:
                self._mark_ready(f)
        return expired

    # -- discovery --------------------------------------------------------------------

    def _on_changes(self, changes: set[tuple[int, str]]) -> None:
        for change, path in changes:
            depth = depth_below(self.log_dir, path)
            if depth == FILE_DEPTH:
                f = self._by_path.get(path)
                if f is not None and change == MODIFIED:
                    self._mark_ready(f)
                else:
                    self._pending_paths.add(path)
            elif 0 <= depth < FILE_DEPTH:
                if change == DELETED:
                    prefix = path.rstrip(os.sep) + os.sep
                    self._pending_paths.update(p for p in self._by_path if p.startswith(prefix))
                else:
                    self._pending_dirs.add(path)
        self._wake.set()

    def _apply_discovery(self) -> None:
        if self._full_scan_due:
            self._full_scan_due = False
            self._pending_dirs.clear()
            self._pending_paths.clear()
            self._full_scan(startup=False)
            return
        if self._pending_dirs:
            dirs, self._pending_dirs = self._pending_dirs, set()
            for directory in dirs:
                for path, st in scan_dir(self.log_dir, directory, self._filter).items():
                    self._reconcile(path, st, startup=False)
        if self._pending_paths:
            paths, self._pending_paths = self._pending_paths, set()
            for path in paths:
                self._reconcile(path, self._stat_candidate(path), startup=False)

    def _stat_candidate(self, path: str) -> os.stat_result | None:
        if not self._filter.accepts(path):
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def _reconcile(self, path: str, st: os.stat_result | None, *, startup: bool) -> None:
        """Bring our view of ``path`` in line with what is on disk now."""
        at_path = self._by_path.get(path)
        if st is None:
            if at_path is not None:
                self._detach(at_path, path)
            return
        key = (st.st_dev, st.st_ino)
        f = self._files.get(key)
        if at_path is not None and at_path is not f:
            self._detach(at_path, path)  # the path now names another file
        if f is None:
            if key in self._ignored and self._too_old(st):
                return
            self._open(path, startup)
            return
        if f.path != path:  # renamed (rotation) and still included: keep tailing it
            if self._by_path.get(f.path) is f:
                del self._by_path[f.path]
            f.path = path
            self._by_path[path] = f
        state: _FileState = f.state
        if state.gone_since is not None and not state.deleted:
            state.gone_since = None
            self._gone.discard(f)
        if st.st_size != state.read_pos:
            self._mark_ready(f)

    def _detach(self, f: TailedFile, path: str) -> None:
        if self._by_path.get(path) is f:
            del self._by_path[path]
        if f.path == path:
            self._set_gone(f)

    def _full_scan(self, *, startup: bool) -> None:
        found = scan_dir(self.log_dir, self.log_dir, self._filter)
        # oldest first, so sequence numbers (oldest_first order) follow file age
        ordered = sorted(found.items(), key=lambda item: item[1].st_mtime) if startup else found.items()
        seen: set[tuple[int, int]] = set()
        for path, st in ordered:
            seen.add((st.st_dev, st.st_ino))
            self._reconcile(path, st, startup=startup)
        for key, f in list(self._files.items()):
            state: _FileState = f.state
            if key not in seen:
                if self._by_path.get(f.path) is f:
                    del self._by_path[f.path]
                self._set_gone(f)
            elif state.fp_len and not fingerprint_matches(state.fd, state.fp_len, state.fp):
                self._restart_truncated(f, "leading bytes changed")
                self._mark_ready(f)
        for key, path in list(self._lingering.items()):
            try:
                st = os.stat(path)
                still_there = (st.st_dev, st.st_ino) == key
            except OSError:
                still_there = False
            if not still_there:
                del self._lingering[key]
                if key not in self._files:
                    self._owner.pop(key, None)
                    self.checkpoints.remove(self.source_id, identity_key(*key))
        if self._poll_mode:
            for f in self._files.values():
                self._mark_ready(f)

    def _prune_checkpoints(self) -> None:
        """Drop checkpoints of files that are no longer there (run after the start-up scan)."""
        if not os.path.isdir(self.log_dir):
            return  # not mounted (yet): keep everything rather than re-read or skip it all later
        live = {identity_key(*key) for key in self._files} | {identity_key(*key) for key in self._ignored}
        for key in self.checkpoints.keys(self.source_id):
            if key not in live:
                self.checkpoints.remove(self.source_id, key)

    # -- helpers tasks ---------------------------------------------------------------------

    async def _watch(self) -> None:
        await watch_tree(
            self.log_dir, self._on_changes, self._stop_event,
            step_ms=self.config.watch_step_ms, debounce_ms=self.config.watch_debounce_ms,
            retry_secs=self.config.rescan_interval_secs,
        )
        if self._stop_event.is_set():
            return
        self._poll_mode = True
        while not self._stop_event.is_set():
            await asyncio.sleep(_POLL_FALLBACK_SECS)
            for f in list(self._files.values()):
                self._mark_ready(f)
            self._pending_dirs.add(self.log_dir)
            self._wake.set()

    async def _rescan_timer(self) -> None:
        while True:
            await asyncio.sleep(self.config.rescan_interval_secs)
            self._full_scan_due = True
            self._wake.set()
