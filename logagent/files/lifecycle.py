"""Which files are open, under which name, and which are gone: the file table.

A file is known by its identity (device, inode; the fingerprint guards against
inode reuse), not by its path. Discovery results (change notifications, pokes,
the periodic rescan) are reconciled against the table here:

- a new path whose identity is not open is opened, at its checkpoint if it
  has one, else where ``read_from`` / ``ignore_older_secs`` say;
- a renamed file keeps being tailed under its new name if that is still
  included (kubelet's ``0.log`` -> ``0.log.<time>``), else it is "gone";
- a gone or deleted file stays open to be read to its end; the tailer closes
  it once it has been gone ``gone_close_grace_secs`` (a writer may append
  until the runtime reopens the log), or after ``rotate_wait_secs`` even with
  unread data left;
- a closed file still on disk under an excluded name "lingers": its
  checkpoint is kept until the name disappears.
"""

from __future__ import annotations

import itertools
import os
import stat
import time
from collections.abc import Callable

import structlog

from logagent.files.config import TailerConfig
from logagent.files.discovery import FILE_DEPTH, depth_below, scan_dir
from logagent.files.identity import fingerprint, fingerprint_matches, identity_key
from logagent.files.ledger import AckLedger, FileAcks
from logagent.files.model import TailedFile
from logagent.files.paths import PathFilter, parse_pod_path
from logagent.files.reader import FileReader, at_line_start
from logagent.files.watch import DELETED, MODIFIED

log = structlog.get_logger(__name__)

Key = tuple[int, int]


class FileState:
    """The tailer's per-file state (``TailedFile.state``)."""

    __slots__ = ("reader", "acks", "seq", "queued", "cooling", "read_after", "gone_since", "deleted", "closed")

    def __init__(self, reader: FileReader, acks: FileAcks, seq: int) -> None:
        self.reader = reader
        self.acks = acks
        #: opening order (oldest_first reads the lowest first)
        self.seq = seq
        #: in the tailer's ready queue
        self.queued = False
        #: waiting for its read cooldown to end (``files/ready.py``)
        self.cooling = False
        #: from when a notification may make it ready again (monotonic; ``files/ready.py``)
        self.read_after = float("-inf")
        self.gone_since: float | None = None
        self.deleted = False
        self.closed = False


class FileTable:
    """The open files of one tailer and what discovery says about them."""

    def __init__(self, config: TailerConfig, log_dir: str, ledger: AckLedger, *,
                 mark_ready: Callable[[TailedFile], None],
                 restart: Callable[[TailedFile, str], None],
                 mark_changed: Callable[[TailedFile], None] | None = None) -> None:
        self.config = config
        self.log_dir = log_dir
        self.ledger = ledger
        self._mark_ready = mark_ready
        #: a notification named an open file that grew (default: ready at once)
        self._mark_changed = mark_changed or mark_ready
        self._restart = restart
        self.filter = PathFilter(log_dir, config.include_paths_glob_patterns, config.exclude_paths_glob_patterns)
        self.files: dict[Key, TailedFile] = {}
        self.by_path: dict[str, TailedFile] = {}
        self.gone: set[TailedFile] = set()
        #: files not read because of ignore_older_secs: key -> size when seen
        self.ignored: dict[Key, int] = {}
        #: closed files still on disk (renamed out of the include set): key -> path
        self.lingering: dict[Key, str] = {}
        self._pending_paths: set[str] = set()
        self._pending_dirs: set[str] = set()
        self.full_scan_due = False
        self._ids = itertools.count(1)
        self._seqs = itertools.count(1)
        self.files_opened = 0
        self.files_closed = 0

    def count_deleted(self) -> int:
        """Open files that no longer have a name (an fstat each)."""
        count = 0
        for f in self.files.values():
            try:
                count += os.fstat(f.state.reader.fd).st_nlink == 0
            except OSError:
                pass
        return count

    def checkpoint_lag_bytes(self) -> int:
        return sum(max(0, f.state.reader.size - f.state.acks.committed) for f in self.files.values())

    def behind_bytes(self) -> int:
        """Bytes written to open files and not read yet: their sizes now (an fstat each) minus read offsets."""
        behind = 0
        for f in self.files.values():
            reader = f.state.reader
            try:
                behind += max(0, os.fstat(reader.fd).st_size - reader.read_pos)
            except OSError:
                pass
        return behind

    # -- opening and forgetting ------------------------------------------------

    def open(self, path: str, startup: bool) -> TailedFile | None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            if not isinstance(exc, FileNotFoundError):
                log.warning("cannot open log file", path=path, error=str(exc))
            return None
        try:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)
            if not stat.S_ISREG(st.st_mode) or key in self.files:
                os.close(fd)
                return None
            start = self._start_offset(fd, key, st, startup)
        except OSError as exc:
            log.warning("cannot read log file", path=path, error=str(exc))
            os.close(fd)
            return None
        if start is None:
            os.close(fd)
            self.ignored[key] = st.st_size
            return None
        offset, skip, resumed = start
        self.ignored.pop(key, None)
        self.lingering.pop(key, None)
        reader = FileReader(fd, key, offset, skip, self.config.max_line_bytes)
        reader.size = st.st_size
        reader.fp_len = min(st.st_size, self.config.fingerprint_bytes)
        reader.fp = fingerprint(fd, reader.fp_len)
        pod = parse_pod_path(self.log_dir, path)
        f = TailedFile(next(self._ids), path, pod.pod_dir, pod.namespace, pod.pod_name, pod.pod_uid,
                       pod.container, identity_key(*key), FileState(reader, FileAcks(offset, skip), next(self._seqs)))
        self.files[key] = f
        self.by_path[path] = f
        self.files_opened += 1
        self.ledger.claim(f)  # a restart resumes here instead of applying read_from again
        log.debug("tailing log file", path=path, identity=f.identity, offset=offset, resumed=resumed)
        self._mark_ready(f)
        return f

    def _start_offset(self, fd: int, key: Key, st: os.stat_result, startup: bool) -> tuple[int, bool, bool] | None:
        """(offset, skip, resumed) for a newly opened file, or None to ignore it."""
        checkpoint = self.ledger.saved(key)
        if (checkpoint is not None and checkpoint.fp_len <= st.st_size
                and fingerprint_matches(fd, checkpoint.fp_len, checkpoint.fp)):
            if checkpoint.offset <= st.st_size:
                return checkpoint.offset, checkpoint.skip, True
            return 0, False, True  # shrank while we were away: copy-truncate
        if key in self.ignored:
            if self._too_old(st):
                return None
            offset = self.ignored[key]
            if offset > st.st_size:
                return 0, False, False
            return offset, not at_line_start(fd, offset), False
        if self._too_old(st):
            return None
        if startup and self.config.read_from == "end":
            return st.st_size, not at_line_start(fd, st.st_size), False
        return 0, False, False

    def _too_old(self, st: os.stat_result) -> bool:
        limit = self.config.ignore_older_secs
        return limit is not None and st.st_mtime < time.time() - limit

    def release(self, f: TailedFile) -> None:
        """Forget the file and close its descriptor."""
        state: FileState = f.state
        if state.closed:
            return
        state.closed = True
        state.reader.close()
        key = state.reader.key
        if self.files.get(key) is f:
            del self.files[key]
        if self.by_path.get(f.path) is f:
            del self.by_path[f.path]
        self.gone.discard(f)
        self.files_closed += 1

    # -- gone files ---------------------------------------------------------------

    def set_gone(self, f: TailedFile) -> None:
        state: FileState = f.state
        if state.gone_since is None:
            state.gone_since = time.monotonic()
            self.gone.add(f)
        self._mark_ready(f)

    def expired_gone(self) -> list[TailedFile]:
        """Gone files kept open for rotate_wait_secs; asks the others to check for their end."""
        if not self.gone:
            return []
        now = time.monotonic()
        expired = []
        for f in self.gone:
            state: FileState = f.state
            assert state.gone_since is not None
            waited = now - state.gone_since
            if waited >= self.config.rotate_wait_secs:
                expired.append(f)
            elif waited >= self.config.gone_close_grace_secs:
                self._mark_ready(f)
        return expired

    # -- discovery ------------------------------------------------------------------

    def poke(self, directory: str) -> None:
        self._pending_dirs.add(directory)

    def on_changes(self, changes: set[tuple[int, str]]) -> None:
        by_path, changed = self.by_path, self._mark_changed
        for change, path in changes:
            f = by_path.get(path)
            if f is not None and change == MODIFIED:  # the common change: an open file grew
                changed(f)
                continue
            depth = depth_below(self.log_dir, path)
            if depth == FILE_DEPTH:
                self._pending_paths.add(path)
            elif 0 <= depth < FILE_DEPTH:
                if change == DELETED:
                    prefix = path.rstrip(os.sep) + os.sep
                    self._pending_paths.update(p for p in self.by_path if p.startswith(prefix))
                else:
                    self._pending_dirs.add(path)

    def apply_discovery(self) -> bool:
        """Apply what discovery found since the last call; True after a full rescan."""
        if self.full_scan_due:
            self.full_scan_due = False
            self._pending_dirs.clear()
            self._pending_paths.clear()
            self.full_scan(startup=False)
            return True
        if self._pending_dirs:
            dirs, self._pending_dirs = self._pending_dirs, set()
            for directory in dirs:
                for path, st in scan_dir(self.log_dir, directory, self.filter).items():
                    self._reconcile(path, st, startup=False)
        if self._pending_paths:
            paths, self._pending_paths = self._pending_paths, set()
            for path in paths:
                self._reconcile(path, self._stat_candidate(path), startup=False)
        return False

    def _stat_candidate(self, path: str) -> os.stat_result | None:
        if not self.filter.accepts(path):
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st if stat.S_ISREG(st.st_mode) else None

    def _reconcile(self, path: str, st: os.stat_result | None, *, startup: bool) -> None:
        """Bring our view of ``path`` in line with what is on disk now."""
        at_path = self.by_path.get(path)
        if st is None:
            if at_path is not None:
                self._detach(at_path, path)
            return
        key = (st.st_dev, st.st_ino)
        f = self.files.get(key)
        if at_path is not None and at_path is not f:
            self._detach(at_path, path)  # the path now names another file
        if f is None:
            if key in self.ignored and self._too_old(st):
                return
            self.open(path, startup)
            return
        if f.path != path:  # renamed (rotation) and still included: keep tailing it
            if self.by_path.get(f.path) is f:
                del self.by_path[f.path]
            f.path = path
            self.by_path[path] = f
        state: FileState = f.state
        if state.gone_since is not None and not state.deleted:
            state.gone_since = None
            self.gone.discard(f)
        if st.st_size != state.reader.read_pos:
            self._mark_ready(f)

    def _detach(self, f: TailedFile, path: str) -> None:
        if self.by_path.get(path) is f:
            del self.by_path[path]
        if f.path == path:
            self.set_gone(f)

    def full_scan(self, *, startup: bool) -> None:
        found = scan_dir(self.log_dir, self.log_dir, self.filter)
        # oldest first, so sequence numbers (oldest_first order) follow file age
        ordered = sorted(found.items(), key=lambda item: item[1].st_mtime) if startup else found.items()
        seen: set[Key] = set()
        for path, st in ordered:
            seen.add((st.st_dev, st.st_ino))
            self._reconcile(path, st, startup=startup)
        for key, f in list(self.files.items()):
            if key not in seen:
                if self.by_path.get(f.path) is f:
                    del self.by_path[f.path]
                self.set_gone(f)
            elif f.state.reader.leading_bytes_changed():
                self._restart(f, "leading bytes changed")
                self._mark_ready(f)
        for key, path in list(self.lingering.items()):
            try:
                st = os.stat(path)
                still_there = (st.st_dev, st.st_ino) == key
            except OSError:
                still_there = False
            if not still_there:
                del self.lingering[key]
                if key not in self.files:
                    self.ledger.forget(key)

    def prune_checkpoints(self) -> None:
        """Drop checkpoints of files that are no longer there (run after the start-up scan)."""
        if not os.path.isdir(self.log_dir):
            return  # not mounted (yet): keep everything rather than re-read or skip it all later
        self.ledger.prune([*self.files, *self.ignored])
