"""When to reload the config, and whether the new one is taken.

``logagent run`` reloads on SIGHUP, and with ``--watch-config`` when the
content of a config file changes; every file (``--config``, and what the
``--config-dir`` directories hold now) is read again each time. The
directories are watched, not the files: a ConfigMap volume updates by
swapping its ``..data`` symlink, which a watch on the file (or its old inode)
would never see. Every change event makes the reloader read the files and
compare their content with what it last considered, so unrelated events and
a rewrite with the same bytes do nothing (it is also compared every few
seconds, in case an event was missed).

A reload validates like ``logagent validate`` (same key-path messages); an
invalid config, or one that needs a restart, is rejected and the running
topology is kept. The outcome is logged and counted (``ReloadStats``, read by
the metrics collector as ``topology.reloads``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import time
from collections.abc import Sequence
from pathlib import Path

import structlog

from logagent.config import Config, ConfigError, load_config
from logagent.config_files import COMPONENT_SECTIONS, config_files
from logagent.graph import check_config
from logagent.reload import apply_plan, plan_reload
from logagent.topology import Topology

log = structlog.get_logger(__name__)

APPLIED, REJECTED, FAILED = "applied", "rejected", "failed"

#: watchfiles timing for the config directory (a ConfigMap swap is a few renames)
_WATCH_STEP_MS = 100
_WATCH_DEBOUNCE_MS = 500
#: the content is also compared this often without an event: a change made
#: before the watch was set up, or an event the filesystem never sent, is still seen
_CONTENT_CHECK_MS = 5000


def config_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ReloadStats:
    """Counters for the metrics: outcomes, and what config is running since when."""

    def __init__(self, digest: str) -> None:
        self.counts = {APPLIED: 0, REJECTED: 0, FAILED: 0}
        #: SHA-256 (hex) of the running config file's bytes
        self.digest = digest
        #: wall-clock time of the last applied reload (None: the start-up config runs)
        self.last_applied_at: float | None = None

    @property
    def hash_value(self) -> int:
        """The first 48 bits of the digest: a gauge value that changes with the config."""
        return int(self.digest[:12], 16)


class ConfigReloader:
    """Serialises reload requests (SIGHUP, file changes) for one topology."""

    def __init__(
        self,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        topology: Topology,
        *,
        watch: bool = False,
        config_dirs: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        self.paths = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
        self.config_dirs = [Path(d) for d in config_dirs]
        self.topology = topology
        self.watch = watch
        self._considered = config_digest(self._snapshot_bytes(self._snapshot()))
        self.stats = ReloadStats(self._considered)
        topology.reloads = self.stats
        self._requested = asyncio.Event()

    def request(self) -> None:
        """Ask for a reload (a signal handler may call this)."""
        self._requested.set()

    async def run(self) -> None:
        """Reload on each request; with ``watch``, also on each change of the file's content."""
        watcher = asyncio.create_task(self._watch(), name="config-watch") if self.watch else None
        try:
            while True:
                await self._requested.wait()
                self._requested.clear()
                try:
                    await self.reload()
                except Exception as exc:  # a bug must not end reloading, nor the agent
                    log.exception("config reload failed")
                    self._done(FAILED, "config reload failed; the running pipeline is kept", error=repr(exc))
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await watcher

    async def reload(self) -> str:
        """Read, validate and apply the config files; returns applied, rejected or failed."""
        snapshot = self._snapshot()
        digest = config_digest(self._snapshot_bytes(snapshot))
        self._considered = digest
        try:
            config = self._parse(snapshot)
            warnings = check_config(config)
            plan = plan_reload(self.topology.config, config)
        except ConfigError as exc:
            return self._done(REJECTED, "config reload rejected; the running pipeline is kept", error=str(exc))
        for warning in warnings:
            log.warning("config warning", warning=warning)
        try:
            if not plan.empty:
                await apply_plan(self.topology, plan)
        except ConfigError as exc:
            return self._done(FAILED, "config reload failed; the running pipeline is kept", error=str(exc))
        except Exception as exc:
            log.exception("config reload failed")
            return self._done(FAILED, "config reload failed; the running pipeline is kept", error=repr(exc))
        self.stats.digest = digest
        self.stats.last_applied_at = time.time()
        return self._done(APPLIED, "config reloaded", changes=plan.summary(), config_sha256=digest[:16])

    def _done(self, result: str, message: str, **fields: object) -> str:
        self.stats.counts[result] += 1
        names = ", ".join(str(p) for p in [*self.paths, *self.config_dirs])
        if result == APPLIED:
            log.info(message, config=names, **fields)
        else:
            log.error(message, config=names, **fields)
        return result

    def _snapshot(self) -> dict[Path, bytes | None]:
        """Every config file's bytes now (None: it cannot be read)."""
        try:
            files = config_files(self.paths, self.config_dirs)
        except ConfigError:
            files = [(p, None) for p in self.paths]
        snapshot: dict[Path, bytes | None] = {}
        for path, _ in files:
            try:
                snapshot[path] = path.read_bytes()
            except OSError:
                snapshot[path] = None
        return snapshot

    @staticmethod
    def _snapshot_bytes(snapshot: dict[Path, bytes | None]) -> bytes:
        if len(snapshot) == 1:  # one file: the digest is the file's own SHA-256, as before
            return next(iter(snapshot.values())) or b""
        return b"".join(b"%s\0%s\0" % (os.fsencode(p), b"-" if d is None else d) for p, d in sorted(snapshot.items()))

    def _parse(self, snapshot: dict[Path, bytes | None]) -> Config:
        def read(path: Path) -> bytes:
            data = snapshot.get(path)
            return path.read_bytes() if data is None else data  # unreadable: raise the reason again

        return load_config(self.paths, os.environ, config_dirs=self.config_dirs, read=read)

    def _watched_directories(self) -> list[Path]:
        directories = {p.parent for p in self.paths}
        for directory in self.config_dirs:
            directories.add(directory)
            directories.update(directory / s for s in COMPONENT_SECTIONS if (directory / s).is_dir())
        return sorted(directories)

    async def _watch(self) -> None:
        from watchfiles import awatch

        directories = self._watched_directories()
        log.info("watching the config for changes", directories=[str(d) for d in directories])
        while True:
            try:
                async for _ in awatch(*directories, watch_filter=None, recursive=False, step=_WATCH_STEP_MS,
                                      debounce=_WATCH_DEBOUNCE_MS, ignore_permission_denied=True,
                                      rust_timeout=_CONTENT_CHECK_MS, yield_on_timeout=True):
                    self._check_content()
            except Exception as exc:  # the directory vanished, inotify limits ...
                log.warning("cannot watch the config directories; retrying", directories=[str(d) for d in directories],
                            error=str(exc))
            await asyncio.sleep(5.0)

    def _check_content(self) -> None:
        snapshot = self._snapshot()
        if all(d is not None for d in snapshot.values()) and config_digest(self._snapshot_bytes(snapshot)) != self._considered:
            self.request()
