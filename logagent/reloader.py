"""When to reload the config, and whether the new one is taken.

``logagent run`` reloads on SIGHUP, and with ``--watch-config`` when the
file's content changes. The directory is watched, not the file: a ConfigMap
volume updates by swapping its ``..data`` symlink, which a watch on the file
(or its old inode) would never see. Every change event in the directory makes
the reloader read the file and compare its content with what it last
considered, so unrelated events and a rewrite with the same bytes do nothing
(it is also compared every few seconds, in case an event was missed).

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
from pathlib import Path

import structlog

from logagent.config import Config, ConfigError, load_config, parse_config
from logagent.graph import check_graph, check_kubernetes
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

    def __init__(self, path: str | os.PathLike[str], topology: Topology, *, watch: bool = False) -> None:
        self.path = Path(path)
        self.topology = topology
        self.watch = watch
        self._considered = config_digest(self._read_bytes() or b"")
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
        """Read, validate and apply the config file; returns applied, rejected or failed."""
        data = self._read_bytes()
        digest = config_digest(data or b"")
        self._considered = digest
        try:
            config = self._parse(data)
            warnings = check_graph(config)
            check_kubernetes(config)
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
        if result == APPLIED:
            log.info(message, config=str(self.path), **fields)
        else:
            log.error(message, config=str(self.path), **fields)
        return result

    def _parse(self, data: bytes | None) -> Config:
        if data is None:
            return load_config(self.path)  # raises ConfigError saying why it cannot be read
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"cannot read config file: {exc}") from None
        return parse_config(text, os.environ)

    def _read_bytes(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except OSError:
            return None

    async def _watch(self) -> None:
        from watchfiles import awatch

        directory = self.path.parent
        log.info("watching the config for changes", config=str(self.path), directory=str(directory))
        while True:
            try:
                async for _ in awatch(directory, watch_filter=None, recursive=False, step=_WATCH_STEP_MS,
                                      debounce=_WATCH_DEBOUNCE_MS, ignore_permission_denied=True,
                                      rust_timeout=_CONTENT_CHECK_MS, yield_on_timeout=True):
                    self._check_content()
            except Exception as exc:  # the directory vanished, inotify limits ...
                log.warning("cannot watch the config directory; retrying", directory=str(directory), error=str(exc))
            await asyncio.sleep(5.0)

    def _check_content(self) -> None:
        data = self._read_bytes()
        if data is not None and config_digest(data) != self._considered:
            self.request()
