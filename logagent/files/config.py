"""Settings of one :class:`~logagent.files.tailer.FileTailer`.

The kubernetes_logs source maps its own config onto this; the defaults follow
Vector's ``kubernetes_logs`` where Vector has the same knob.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

#: Vector's default include/exclude: everything except compressed and temp files.
DEFAULT_INCLUDE = ("**/*",)
DEFAULT_EXCLUDE = ("**/*.gz", "**/*.tmp")

#: Vector's max_line_bytes plus room for the CRI prefix
#: ("2026-12-02T10:10:10.123456789+00:00 stdout F ").
DEFAULT_MAX_LINE_BYTES = 32768 + 512


@dataclass(kw_only=True)
class TailerConfig:
    log_dir: str = "/var/log/pods"
    #: Globs matched against the path relative to ``log_dir`` and against the
    #: absolute path (a file is taken if either matches). ``**`` crosses
    #: directories, ``*`` and ``?`` do not.
    include_paths_glob_patterns: list[str] = field(default_factory=lambda: list(DEFAULT_INCLUDE))
    exclude_paths_glob_patterns: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    #: Where to start in a file that has no checkpoint and is already there at
    #: start-up. Files appearing later are always read from their beginning.
    read_from: Literal["beginning", "end"] = "beginning"
    #: Files without a checkpoint whose mtime is older than this at discovery
    #: are not read (until they are written again; then only the new data).
    ignore_older_secs: float | None = None
    #: Upper bound of one read of one file per turn. 1 MiB keeps one turn's
    #: line split in the order of a millisecond and bounds what a crash re-reads.
    max_read_bytes: int = 1 << 20
    #: A raw line longer than this is cut; the rest up to its newline is skipped.
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    #: Drain the oldest file completely before reading younger ones.
    oldest_first: bool = False
    #: Safety rescan of the whole tree (catches missed notifications).
    rescan_interval_secs: float = 10.0
    #: Longest time a deleted or rotated-away file is kept open while it has
    #: unread data (slow sink). Long, because closing it early loses its rest;
    #: it only bounds disk space held by deleted files.
    rotate_wait_secs: float = 300.0
    #: A gone (deleted or renamed out of the include set) file already read to
    #: its end is closed once it has been gone this long, so a writer that
    #: still holds it after a rename (until the runtime reopens) is not cut off.
    gone_close_grace_secs: float = 1.0
    #: Reading pauses while this many bytes are emitted but not acknowledged.
    max_unacked_bytes: int = 16 << 20
    #: Size of the leading-bytes fingerprint that guards against inode reuse.
    fingerprint_bytes: int = 256
    #: change notifications (``files/watch.py``): a change is delivered after
    #: ``watch_step_ms`` of quiet, at the latest ``watch_debounce_ms`` after
    #: the first change; after ``watch_idle_after_ms`` without a change the
    #: notifier checks every ``watch_idle_step_ms`` instead (fewer wake-ups)
    watch_step_ms: int = 10
    watch_debounce_ms: int = 20
    watch_idle_step_ms: int = 25
    watch_idle_after_ms: int = 1000
    #: a file a notification names is read no sooner than this after its last
    #: read turn began (``files/ready.py``): notifications come every few tens
    #: of ms, and a busy file read at each would cost a turn per few lines
    read_cooldown_ms: int = 100

    def __post_init__(self) -> None:
        problems: list[str] = []
        if self.read_from not in ("beginning", "end"):
            problems.append(f"read_from: must be 'beginning' or 'end', got {self.read_from!r}")
        for name in ("max_read_bytes", "max_line_bytes", "max_unacked_bytes", "fingerprint_bytes",
                     "watch_step_ms", "watch_debounce_ms", "watch_idle_step_ms", "watch_idle_after_ms",
                     "read_cooldown_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                problems.append(f"{name}: must be a positive integer, got {value!r}")
        for name in ("rescan_interval_secs", "rotate_wait_secs"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                problems.append(f"{name}: must be a positive number, got {value!r}")
        if not isinstance(self.gone_close_grace_secs, (int, float)) or self.gone_close_grace_secs < 0:
            problems.append(f"gone_close_grace_secs: must be >= 0, got {self.gone_close_grace_secs!r}")
        if self.ignore_older_secs is not None and (
            not isinstance(self.ignore_older_secs, (int, float)) or self.ignore_older_secs <= 0
        ):
            problems.append(f"ignore_older_secs: must be a positive number or null, got {self.ignore_older_secs!r}")
        for name in ("include_paths_glob_patterns", "exclude_paths_glob_patterns"):
            value = getattr(self, name)
            if not isinstance(value, (list, tuple)) or not all(isinstance(p, str) and p for p in value):
                problems.append(f"{name}: must be a list of non-empty glob strings, got {value!r}")
        if not self.log_dir:
            problems.append("log_dir: must not be empty")
        if problems:
            raise ValueError("; ".join(problems))
