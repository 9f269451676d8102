"""Finding candidate log files: ``<log_dir>/<pod dir>/<container>/<file>``."""

from __future__ import annotations

import os
import stat

from logagent.files.paths import PathFilter

#: Depth of a log file below log_dir (pod dir / container dir / file).
FILE_DEPTH = 3


def depth_below(log_dir: str, path: str) -> int:
    """How many path components ``path`` is below ``log_dir`` (-1 if not below it)."""
    if path == log_dir:
        return 0
    prefix = log_dir.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return -1
    return path[len(prefix):].count(os.sep) + 1


def _subdirs(path: str) -> list[str]:
    try:
        with os.scandir(path) as entries:
            return [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return []


def _regular_files(path: str, path_filter: PathFilter) -> dict[str, os.stat_result]:
    found: dict[str, os.stat_result] = {}
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if not path_filter.accepts(entry.path):
                    continue
                try:
                    st = entry.stat()  # follows symlinks (docker-era layouts link to the runtime's file)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    found[entry.path] = st
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        pass
    return found


def scan_dir(log_dir: str, path: str, path_filter: PathFilter) -> dict[str, os.stat_result]:
    """Accepted regular files under ``path`` (log_dir itself, a pod dir or a container dir)."""
    depth = depth_below(log_dir, path)
    if depth == 2:
        return _regular_files(path, path_filter)
    if depth == 1:
        found: dict[str, os.stat_result] = {}
        for container_dir in _subdirs(path):
            found.update(_regular_files(container_dir, path_filter))
        return found
    if depth == 0:
        found = {}
        for pod_dir in _subdirs(path):
            found.update(scan_dir(log_dir, pod_dir, path_filter))
        return found
    return {}
