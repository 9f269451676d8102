"""Build the component graph from a validated config, run it, stop it in order.

Transforms run inline in the source's task (a batch goes through the filter
and route chain as plain function calls); each sink has a bounded inbox, the
only queue in the graph, so a slow sink makes the sources wait.

Stop order: sources stop reading, inboxes close, sinks drain within the grace
period, the final checkpoint is written, the metadata watchers stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import msgspec
import structlog

from logagent.acks import Batch
from logagent.config import Config, component_error
from logagent.files.checkpoints import CheckpointStore
from logagent.graph import output_ports
from logagent.kube.interface import MetadataHub
from logagent.queue import BatchQueue, QueueClosed
from logagent.sinks.base import Sink
from logagent.sinks.console import ConsoleSink, ConsoleSinkConfig, SinkClosed
from logagent.sinks.elasticsearch import ElasticsearchSink, ElasticsearchSinkConfig
from logagent.sinks.http import HttpSink, HttpSinkConfig
from logagent.sinks.loki import LokiSink, LokiSinkConfig
from logagent.sinks.opentelemetry import OpentelemetrySink, OpentelemetrySinkConfig
from logagent.sources.kubernetes_logs import KubernetesLogsSource
from logagent.transforms.base import DEFAULT_OUTPUT, Transform
from logagent.transforms.filter import FilterConfig, FilterTransform
from logagent.transforms.parse_json import ParseJsonConfig, ParseJsonTransform
from logagent.transforms.route import RouteConfig, RouteTransform

log = structlog.get_logger(__name__)

#: per sink inbox budget
INBOX_EVENTS = 20_000
INBOX_BYTES = 8 << 20


def build_hub(config: Config) -> MetadataHub | None:
    """One hub for all sources: pods always, namespaces and node only on demand."""
    if not config.sources:
        return None
    kube = config.kubernetes
    needs_namespaces = any(s.wants_namespaces for s in config.sources.values())
    needs_node = any(s.insert_node_fields for s in config.sources.values())
    delay_ms = max([kube.delay_deletion_ms] + [s.delay_deletion_ms for s in config.sources.values()])
    if kube.snapshot is not None:
        from logagent.kube.snapshot import SnapshotHub

        return SnapshotHub(
            kube.snapshot, node_name=kube.node_name, needs_namespaces=needs_namespaces, needs_node=needs_node
        )
    from logagent.kube.hub import KubeHub

    # Exclusion labels and the sources' selectors are applied client-side
    # (see CHANGELOG, "Decisions"): the watch only narrows pods to this node.
    return KubeHub(
        msgspec.structs.replace(kube, delay_deletion_ms=delay_ms),
        needs_namespaces=needs_namespaces,
        needs_node=needs_node,
        pod_label_selector=None,
    )


class Topology:
    def __init__(self, config: Config, *, stdout_fd: int | None = None) -> None:
        self.config = config
        self.hub = build_hub(config)
        self.checkpoints = CheckpointStore(config.data_dir)
        self.sources = {
            cid: KubernetesLogsSource(cid, cfg, self.hub, self.checkpoints) for cid, cfg in config.sources.items()
        }
        self.transforms: dict[str, Transform] = {}
        for cid, tcfg in config.transforms.items():
            if isinstance(tcfg, FilterConfig):
                self.transforms[cid] = FilterTransform(cid, tcfg)
            elif isinstance(tcfg, RouteConfig):
                self.transforms[cid] = RouteTransform(cid, tcfg)
            elif isinstance(tcfg, ParseJsonConfig):
                self.transforms[cid] = ParseJsonTransform(cid, tcfg)
        self.sinks: dict[str, Sink] = {}
        for cid, scfg in config.sinks.items():
            if isinstance(scfg, ConsoleSinkConfig):
                self.sinks[cid] = ConsoleSink(cid, scfg, fd=stdout_fd if scfg.target == "stdout" else None)
            elif isinstance(scfg, HttpSinkConfig):
                self.sinks[cid] = HttpSink(cid, scfg, data_dir=config.data_dir)
            elif isinstance(scfg, ElasticsearchSinkConfig):
                self.sinks[cid] = ElasticsearchSink(cid, scfg, data_dir=config.data_dir)
            elif isinstance(scfg, LokiSinkConfig):
                self.sinks[cid] = LokiSink(cid, scfg, data_dir=config.data_dir)
            elif isinstance(scfg, OpentelemetrySinkConfig):
                self.sinks[cid] = OpentelemetrySink(cid, scfg, data_dir=config.data_dir)
        self.inboxes = {cid: BatchQueue(INBOX_EVENTS, INBOX_BYTES) for cid in self.sinks}
        self._edges = self._wire()
        self._stop = asyncio.Event()
        self._fatal: BaseException | None = None
        self.sinks_started = False

    def _wire(self) -> dict[str, list[Any]]:
        """Output port -> the transforms and sink inboxes that consume it."""
        ports = output_ports(self.config)
        edges: dict[str, list[Any]] = {port: [] for port in ports}
        for cid, tcfg in self.config.transforms.items():
            for name in tcfg.inputs:
                edges[name].append(self.transforms[cid])
        for cid, scfg in self.config.sinks.items():
            for name in scfg.inputs:
                edges[name].append(self.inboxes[cid])
        return edges

    @property
    def ready(self) -> bool:
        return self.sinks_started and (self.hub is None or self.hub.synced)

    def request_stop(self) -> None:
        self._stop.set()

    async def deliver(self, port: str, batch: Batch) -> None:
        targets = self._edges.get(port)
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
                    pass  # the sink is gone: not acknowledged, so read again after a restart
            else:
                for output, out_batch in target.process(batch):
                    name = target.component_id if output == DEFAULT_OUTPUT else f"{target.component_id}.{output}"
                    await self.deliver(name, out_batch)

    async def run(self, *, once: bool = False) -> None:
        if self.hub is not None:
            # first, so a bad kubeconfig or snapshot stops us before anything runs
            await self.hub.start()
        for cid, sink in self.sinks.items():
            try:
                await sink.start()
            except ValueError as exc:  # e.g. an unreadable TLS file: a config problem
                if self.hub is not None:
                    await self.hub.stop()
                raise component_error(f"sinks.{cid}", str(exc)) from None
        sink_tasks = {
            asyncio.create_task(self._run_sink(cid, sink), name=f"sink:{cid}") for cid, sink in self.sinks.items()
        }
        self.sinks_started = True
        source_tasks: set[asyncio.Task[None]] = set()
        try:
            if self.hub is not None:
                await self._until_stopped(self._wait_synced())
            if not self._stop.is_set():
                source_tasks = {
                    asyncio.create_task(self._run_source(cid, src, once), name=f"source:{cid}")
                    for cid, src in self.sources.items()
                }
                log.info("started", sources=list(self.sources), sinks=list(self.sinks), once=once)
                if once:
                    await self._until_stopped(asyncio.gather(*source_tasks))
                else:
                    await self._stop.wait()
        finally:
            await self._shutdown(source_tasks, sink_tasks)
        if self._fatal is not None:
            raise self._fatal

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

    async def _run_source(self, cid: str, source: KubernetesLogsSource, once: bool) -> None:
        async def emit(batch: Batch) -> None:
            await self.deliver(cid, batch)

        try:
            await source.run(emit, once=once)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("source failed", component_id=cid)
            self._fail(exc)

    async def _run_sink(self, cid: str, sink: Sink) -> None:
        try:
            await sink.run(self.inboxes[cid])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, SinkClosed):  # a closed output was logged by the sink
                log.exception("sink failed", component_id=cid)
            self.inboxes[cid].close()
            self._fail(exc)

    def _fail(self, exc: BaseException) -> None:
        if self._fatal is None:
            self._fatal = exc
        self._stop.set()

    async def _shutdown(self, source_tasks: set[asyncio.Task[None]], sink_tasks: set[asyncio.Task[None]]) -> None:
        grace = self.config.shutdown_grace_secs
        for source in self.sources.values():
            source.stop()
        if source_tasks:
            done, pending = await asyncio.wait(source_tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for inbox in self.inboxes.values():
            inbox.close()
        if sink_tasks:
            done, pending = await asyncio.wait(sink_tasks, timeout=grace)
            if pending:
                log.warning("shutdown grace period over; undelivered records will be read again", grace_secs=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
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
