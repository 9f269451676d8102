"""Build the component graph from a validated config, run it, stop it in order.

Transforms run inline in the source's task (a batch goes through the filter
and route chain as plain function calls); each sink has a bounded inbox, the
only queue in the graph, so a slow sink makes the sources wait.

The wiring (which transforms and inboxes consume each output port) is one
object, swapped whole by a live reload (see :mod:`logagent.reload`): a batch
travels through the wiring that was current when its source emitted it, and
a retired wiring is "quiesced" once no delivery uses it any more.

Stop order: sources stop reading, inboxes close, sinks drain within the grace
period, the final checkpoint is written, the metadata watchers stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog

from logagent.startup_memory import release_startup_memory
from logagent.acks import Batch
from logagent.config import Config, ConfigError, component_error
from logagent.files.checkpoints import CheckpointStore
from logagent.graph import output_ports
from logagent.kube.interface import MetadataHub
from logagent.queue import BatchQueue, QueueClosed
from logagent.sinks.base import Sink
from logagent.sources.kubernetes_logs import KubernetesLogsSource
from logagent.sources.internal_metrics import log_sources
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig
from logagent.sinks.healthcheck import Unhealthy, run_healthchecks
from logagent.builders import INBOX_BYTES, INBOX_EVENTS, build_sink, build_transform, new_inbox, sink_kind  # noqa: F401  (re-exported)
from logagent.transforms.base import DEFAULT_OUTPUT, Transform

log = structlog.get_logger(__name__)

# ---------------------------------------------------------------- metadata hub


@dataclass(frozen=True)
class HubKinds:
    """Which kinds the hub watches besides pods (always watched when there is a source)."""

    namespaces: bool
    node: bool


def hub_kinds(config: Config) -> HubKinds:
    """The one place that decides which kinds the sources need (start-up and reload)."""
    sources = log_sources(config.sources).values()
    return HubKinds(
        namespaces=any(s.wants_namespaces for s in sources),
        node=any(s.insert_node_fields for s in sources),
    )


def pod_retention_ms(config: Config) -> int:
    """How long the shared pod store keeps deleted pods: the longest any source asks for."""
    return max([config.kubernetes.delay_deletion_ms] + [s.delay_deletion_ms for s in log_sources(config.sources).values()])


def build_hub(config: Config) -> MetadataHub | None:
    """One hub for all sources: pods always, namespaces and node only on demand."""
    if not log_sources(config.sources):
        return None
    kube = config.kubernetes
    kinds = hub_kinds(config)
    if kube.snapshot is not None:
        from logagent.kube.snapshot import SnapshotHub

        return SnapshotHub(
            kube.snapshot, node_name=kube.node_name, needs_namespaces=kinds.namespaces, needs_node=kinds.node
        )
    from logagent.kube.hub import KubeHub

    # Exclusion labels and the sources' selectors are applied client-side
    # (see CHANGELOG, "Decisions"): the watch only narrows pods to this node.
    return KubeHub(
        msgspec.structs.replace(kube, delay_deletion_ms=pod_retention_ms(config)),
        needs_namespaces=kinds.namespaces,
        needs_node=kinds.node,
        pod_label_selector=None,
    )


# ---------------------------------------------------------------- wiring


class Wiring:
    """Output port -> the transforms and sink inboxes that consume it.

    ``active`` counts the source deliveries under way through this wiring, so
    a reload can wait until a wiring it replaced is no longer used.
    ``previous`` is the wiring this one replaced, until that one is quiesced.
    """

    __slots__ = ("edges", "active", "previous", "_idle")

    def __init__(self, edges: dict[str, list[Any]]) -> None:
        self.edges = edges
        self.active = 0
        self.previous: Wiring | None = None
        self._idle = asyncio.Event()
        self._idle.set()

    def enter(self) -> None:
        self.active += 1
        self._idle.clear()

    def leave(self) -> None:
        self.active -= 1
        if not self.active:
            self._idle.set()

    @property
    def busy(self) -> bool:
        """Whether a delivery still uses this wiring or an older one."""
        return self.active > 0 or (self.previous is not None and self.previous.busy)

    def replaces(self, old: Wiring) -> None:
        """Remember ``old`` (and what it replaced) while deliveries still use it."""
        self.previous = old if old.busy else None
        while old.previous is not None and old.previous.busy:
            old = old.previous
        old.previous = None

    async def quiesced(self) -> None:
        """Return once no delivery uses this wiring or an older one (call it on a
        wiring that was replaced: no new delivery enters it, so idle stays idle)."""
        await self._idle.wait()
        if self.previous is not None:
            await self.previous.quiesced()
            self.previous = None


def wire(config: Config, transforms: dict[str, Transform], inboxes: dict[str, BatchQueue]) -> Wiring:
    edges: dict[str, list[Any]] = {port: [] for port in output_ports(config)}
    for cid, tcfg in config.transforms.items():
        for name in tcfg.inputs:
            edges[name].append(transforms[cid])
    for cid, scfg in config.sinks.items():
        for name in scfg.inputs:
            edges[name].append(inboxes[cid])
    return Wiring(edges)


async def _deliver(edges: dict[str, list[Any]], port: str, batch: Batch) -> None:
    targets = edges.get(port)
    if not targets:
        batch.release()
        return
    if len(targets) > 1:
        batch.acquire(len(targets) - 1)
    for target in targets:
        if isinstance(target, BatchQueue):
            try:
                await target.put(batch)
            except QueueClosed:
                pass  # stopping: not acknowledged, so read again after a restart
        else:
            for output, out_batch in target.process(batch):
                name = target.component_id if output == DEFAULT_OUTPUT else f"{target.component_id}.{output}"
                await _deliver(edges, name, out_batch)


async def _wait_or_cancel(tasks: Iterable[asyncio.Task[Any]], timeout: float) -> bool:
    """Wait for ``tasks`` up to ``timeout``; cancel the rest. True if all finished in time."""
    tasks = set(tasks)
    if not tasks:
        return True
    _, pending = await asyncio.wait(tasks, timeout=timeout)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return not pending


# ---------------------------------------------------------------- the topology


class Topology:
    def __init__(self, config: Config, *, stdout_fd: int | None = None) -> None:
        self.config = config
        self.stdout_fd = stdout_fd
        self.hub = build_hub(config)
        self.checkpoints = CheckpointStore(config.data_dir)
        self.sources = {cid: self.build_source(cid, cfg) for cid, cfg in log_sources(config.sources).items()}
        self.transforms = {cid: build_transform(cid, cfg) for cid, cfg in config.transforms.items()}
        self.sinks = {cid: build_sink(cid, cfg, stdout_fd, config.data_dir) for cid, cfg in config.sinks.items()}
        self.inboxes = {cid: new_inbox(config.sinks[cid]) for cid in self.sinks}
        self.wiring = wire(config, self.transforms, self.inboxes)
        #: coroutines run beside the sources (the config reloader), cancelled first at shutdown
        self.companions: list[Callable[[], Awaitable[None]]] = []
        self.source_tasks: dict[str, asyncio.Task[None]] = {}
        self.sink_tasks: dict[str, asyncio.Task[None]] = {}
        #: drains of components a reload removed or replaced
        self.retiring: set[asyncio.Task[None]] = set()
        self._companion_tasks: set[asyncio.Task[None]] = set()
        self._stop = asyncio.Event()
        self._fatal: BaseException | None = None
        self.sinks_started = False
        self._once = False
        #: outcomes of config reloads (a ``reloader.ReloadStats``) when reloading is on
        self.reloads: Any = None

    def build_source(self, component_id: str, config: KubernetesLogsConfig) -> KubernetesLogsSource:
        return KubernetesLogsSource(component_id, config, self.hub, self.checkpoints)

    @property
    def ready(self) -> bool:
        return self.sinks_started and (self.hub is None or self.hub.synced)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def request_stop(self) -> None:
        self._stop.set()

    async def deliver(self, port: str, batch: Batch) -> None:
        wiring = self.wiring
        wiring.enter()
        try:
            await _deliver(wiring.edges, port, batch)
        finally:
            wiring.leave()

    # ------------------------------------------------------------ running

    async def run(self, *, once: bool = False) -> None:
        self._once = once
        if self.hub is not None:
            # first, so a bad kubeconfig or snapshot stops us before anything runs
            await self.hub.start()
        try:
            await self.start_sinks(self.sinks)
            if self.config.healthchecks.enabled:
                await self._healthchecks()
        except (ConfigError, Unhealthy):
            if self.hub is not None:
                await self.hub.stop()
            raise
        for cid, sink in self.sinks.items():
            self.start_sink_task(cid, sink, self.inboxes[cid])
        self.sinks_started = True
        try:
            if self.hub is not None:
                await self._until_stopped(self._wait_synced())
            if not self._stop.is_set():
                await self._run_sources(once)
        finally:
            await self._shutdown()
        if self._fatal is not None:
            raise self._fatal

    async def _run_sources(self, once: bool) -> None:
        for cid in self.sources:  # no local left holding a source a reload may remove
            self.start_source_task(cid, self.sources[cid])
        log.info("started", sources=list(self.sources), sinks=list(self.sinks), once=once)
        release_startup_memory()
        if once:
            await self._until_stopped(asyncio.gather(*self.source_tasks.values()))
            return
        self._companion_tasks = {asyncio.create_task(companion()) for companion in self.companions}
        await self._stop.wait()

    async def start_sinks(self, sinks: dict[str, Sink]) -> None:
        """Start sinks in order; a sink that cannot start (e.g. an unreadable TLS file) is a
        config problem: the ones already started are stopped and ConfigError is raised."""
        started: list[Sink] = []
        for cid, sink in sinks.items():
            attach = getattr(sink, "attach", None)
            if attach is not None:  # a sink reporting on the agent itself (prometheus_exporter)
                attach(self)
            try:
                await sink.start()
            except ValueError as exc:
                for done in started:
                    with contextlib.suppress(Exception):
                        await done.stop()
                raise component_error(f"sinks.{cid}", str(exc)) from None
            started.append(sink)

    async def _healthchecks(self) -> None:
        """Vector's start-up healthchecks; with ``require_healthy`` a failure stops the sinks and raises ``Unhealthy``."""
        try:
            await run_healthchecks(self.sinks, self.config.sinks, self.config.healthchecks.require_healthy)
        except Unhealthy:
            for sink in self.sinks.values():
                with contextlib.suppress(Exception):
                    await sink.stop()
            raise

    def start_sink_task(self, cid: str, sink: Sink, inbox: BatchQueue, *, after: asyncio.Task[Any] | None = None) -> None:
        """Run ``sink`` on ``inbox`` (once ``after``, the drain of the sink it replaces, is over)."""
        self.sink_tasks[cid] = asyncio.create_task(self._run_sink(cid, sink, inbox, after), name=f"sink:{cid}")

    def start_source_task(self, cid: str, source: KubernetesLogsSource) -> None:
        self.source_tasks[cid] = asyncio.create_task(self._run_source(cid, source), name=f"source:{cid}")

    async def _until_stopped(self, awaitable: Any) -> None:
        task = asyncio.ensure_future(awaitable)
        stopper = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
        if task.done():
            task.result()
        else:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _wait_synced(self) -> None:
        assert self.hub is not None
        timeout = self.config.kubernetes.sync_timeout_secs
        if await self.hub.wait_synced(timeout=timeout):
            log.info("metadata synced")
        else:
            log.warning("metadata not synced in time; reading with the metadata paths carry", timeout_secs=timeout)

    async def _run_source(self, cid: str, source: KubernetesLogsSource) -> None:
        async def emit(batch: Batch) -> None:
            await self.deliver(cid, batch)

        try:
            await source.run(emit, once=self._once)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("source failed", component_id=cid)
            self._fail(exc)

    async def _run_sink(self, cid: str, sink: Sink, inbox: BatchQueue, after: asyncio.Task[Any] | None) -> None:
        if after is not None:
            await asyncio.wait({after})  # records of the replaced sink go out first, in order
        try:
            await sink.run(inbox)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            from logagent.sinks.console import SinkClosed

            if not isinstance(exc, SinkClosed):  # a closed output was logged by the sink
                log.exception("sink failed", component_id=cid)
            inbox.close()
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        if self._fatal is None:
            self._fatal = exc
        self._stop.set()

    # ------------------------------------------------------------ stopping

    async def _shutdown(self) -> None:
        grace = self.config.shutdown_grace_secs
        await _wait_or_cancel(self._companion_tasks, 0)
        for source in self.sources.values():
            source.stop()
        await _wait_or_cancel(self.source_tasks.values(), grace)
        for inbox in self.inboxes.values():
            inbox.close()
        if not await _wait_or_cancel([*self.sink_tasks.values(), *self.retiring], grace):
            log.warning("shutdown grace period over; undelivered records will be read again", grace_secs=grace)
        for sink in self.sinks.values():
            with contextlib.suppress(Exception):
                await sink.stop()
        try:
            self.checkpoints.close()
        except OSError as exc:
            log.error("cannot write the final checkpoint", path=str(self.checkpoints.path), error=str(exc))
        if self.hub is not None:
            with contextlib.suppress(Exception):
                await self.hub.stop()
        log.info("stopped")
