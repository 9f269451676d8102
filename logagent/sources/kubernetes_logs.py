"""The kubernetes_logs source: tailed files -> parsed lines -> enriched batches.

The file side (``files.FileTailer``) and the metadata side (a shared
``MetadataHub``) know nothing of each other; this module joins them. Each
file's context (its output fields, pre-encoded) is built once per metadata
version and shared by every line of the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from logagent.acks import AckGroup, Batch
from logagent.event import FileContext, LogEvent
from logagent.files import Chunk, FileTailer, TailedFile, TailerConfig
from logagent.files.checkpoints import CheckpointStore
from logagent.kube.interface import MetadataHub
from logagent.kube.model import NamespaceMeta, NodeMeta, PodMeta
from logagent.observe.ratelimit import warn_limited
from logagent.parsers import LineParser
from logagent.parsers.multiline import MultilineGrouper
from logagent.parsers.multiline_machine import Machine
from logagent.sources.enrichment import Enricher
from logagent.sources.ingestion import stamp
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig
from logagent.sources.multiline_choice import MultilineChoice
from logagent.sources.selection import parse_field_selector, parse_label_selector

log = structlog.get_logger(__name__)

EXCLUDE_LABEL = "logagent.dev/exclude"
EXCLUDE_CONTAINERS_ANNOTATION = "logagent.dev/exclude-containers"
#: Vector's spellings mean the same, so a cluster labelled for Vector keeps what it chose not to collect
EXCLUDE_LABELS = (EXCLUDE_LABEL, "vector.dev/exclude")
EXCLUDE_CONTAINERS_ANNOTATIONS = (EXCLUDE_CONTAINERS_ANNOTATION, "vector.dev/exclude-containers")

Emit = Callable[[Batch], Awaitable[None]]

#: records read but not yet delivered, per source: this bounds the agent's
#: memory while a sink is slow or down (the files on disk are the buffer), and
#: what a crash can deliver twice
MAX_UNACKED_BYTES = 2 << 20

#: a logical line still being merged holds back its file's checkpoint, but
#: never more than this per file (a fragment stream that never ends must not
#: hold the checkpoint forever). Held bytes do not count against
#: MAX_UNACKED_BYTES: only reading on can finish them.
MAX_HELD_BYTES = 1 << 20


_UNSET = object()


class _FileState:
    """What the source remembers per open file."""

    __slots__ = (
        "parser", "pod", "namespace", "node", "ctx", "excluded", "resolved", "held", "held_bytes",
        "grouper", "machine_pod",
    )

    def __init__(self, parser: LineParser) -> None:
        self.parser = parser
        self.pod: PodMeta | None = None
        self.namespace: NamespaceMeta | None = None
        self.node: NodeMeta | None = None
        self.ctx: FileContext | None = None
        self.excluded = False
        self.resolved = False
        #: one extra reference on the ack of each chunk read while a partial
        #: line or a multiline group was unfinished: released with the batch
        #: that carries the finished record, so a checkpoint never lands
        #: inside an unfinished logical line or an undelivered group
        self.held: list[AckGroup] = []
        self.held_bytes = 0
        #: multiline grouping of this file (None: off), and the pod it was chosen for
        self.grouper: MultilineGrouper | None = None
        self.machine_pod: object = _UNSET


class KubernetesLogsSource:
    kind = "kubernetes_logs"

    def __init__(
        self,
        component_id: str,
        config: KubernetesLogsConfig,
        hub: MetadataHub | None,
        checkpoints: CheckpointStore,
    ) -> None:
        self.component_id = component_id
        self.hub = hub
        self._take_settings(config)
        self.tailer = FileTailer(tailer_config(config), checkpoints, component_id)
        self._files: dict[TailedFile, _FileState] = {}
        self._merged_cap = config.max_merged_line_bytes or config.max_line_bytes
        self.multiline = MultilineChoice(config.multiline, component_id)
        #: batches go out in the order they are made, from chunks and from the group timer alike
        self._emit_lock = asyncio.Lock()
        # counters, read by the metrics layer
        self.events_in = 0  # raw lines taken from the files, before merging
        self.events_out = 0
        self.bytes_in = 0
        self.enrichment_misses = 0
        self.files_excluded = 0
        self.parse_errors = 0
        self.lines_truncated = 0
        if hub is not None:
            hub.add_pod_listener(self._on_pod)
        self.tailer.set_skip(self._skip_file)

    @property
    def multiline_records(self) -> int:
        return self.multiline.stats.records

    @property
    def multiline_lines(self) -> int:
        return self.multiline.stats.lines

    @property
    def multiline_splits(self) -> int:
        return self.multiline.stats.splits

    @property
    def multiline_timeouts(self) -> int:
        return self.multiline.stats.timeouts

    def _skip_file(self, file: TailedFile) -> bool:
        """Whether the tailer may pass over a file's new bytes unread (its pod is excluded).

        Asked before each read, so a change of labels takes effect at once.
        """
        state = self._files.get(file)
        if state is None:
            return False
        self._context(file, state)
        return state.excluded

    def _on_pod(self, pod: PodMeta) -> None:
        self.tailer.poke(f"{pod.namespace}_{pod.name}_{pod.uid}")
        if pod.mirror_hash:
            self.tailer.poke(f"{pod.namespace}_{pod.name}_{pod.mirror_hash}")

    async def run(self, emit: Emit, *, once: bool = False) -> None:
        lock = self._emit_lock

        async def on_chunk(chunk: Chunk) -> None:
            await self._namespace_ready(chunk.file)
            batch = self._process(chunk)
            if batch is not None:
                async with lock:
                    await emit(batch)

        timer = asyncio.create_task(self._expire_groups(emit), name=f"{self.component_id}-multiline")
        try:
            await self.tailer.run(on_chunk, once=once)
        finally:
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer

    async def _expire_groups(self, emit: Emit) -> None:
        """Emit multiline groups that no line joined for ``timeout_ms``."""
        tick = min(max(self.config.multiline.timeout_ms / 4000, 0.02), 0.5)
        while True:
            await asyncio.sleep(tick)
            now = time.monotonic()
            for state in list(self._files.values()):
                grouper = state.grouper
                if grouper is None or not grouper.open or state.ctx is None:
                    continue
                events = grouper.expire(now, state.ctx)
                if events:
                    batch = self._batch(state, events, None, sum(len(event.message) for event in events), state.ctx)
                    if batch is not None:
                        async with self._emit_lock:
                            await emit(batch)

    def stop(self) -> None:
        """Stop reading; the hub no longer calls this source (a reload may have removed it)."""
        if self.hub is not None:
            self.hub.remove_pod_listener(self._on_pod)
        self.tailer.stop()

    async def _namespace_ready(self, file: TailedFile) -> None:
        """A new pod's namespace may still be being looked up: its first lines wait for it (bounded)."""
        if self.hub is not None and file.namespace:
            wait = self.hub.namespace_wait(file.namespace)
            if wait is not None:
                await wait

    def reconfigure(self, config: KubernetesLogsConfig) -> None:
        """Take new enrichment and selection settings (a live reload) without
        touching the tailer: open files, offsets and chunks in flight stay.

        Each open file's context is rebuilt at its next chunk, so records read
        from then on carry the new fields and the new exclusion verdict. The
        tailer's and the parsers' settings are not changed here (the reload
        refuses such a change: it needs a restart).
        """
        self._take_settings(config)
        for state in self._files.values():
            state.ctx = None

    def _take_settings(self, config: KubernetesLogsConfig) -> None:
        self.config = config
        self.enricher = Enricher(config)
        self.label_selector = parse_label_selector(config.extra_label_selector)
        self.field_selector = parse_field_selector(config.extra_field_selector)
        self.namespace_selector = parse_label_selector(config.extra_namespace_label_selector)

    # ------------------------------------------------------------ per chunk

    def _process(self, chunk: Chunk) -> Batch | None:
        file = chunk.file
        state = self._files.get(file)
        if state is None:
            state = self._files[file] = _FileState(
                LineParser(auto_partial_merge=self.config.auto_partial_merge, max_merged_line_bytes=self._merged_cap)
            )
        ctx = self._context(file, state)
        self.bytes_in += chunk.nbytes
        events: list[LogEvent] | None = None
        if state.excluded:
            self.events_in += chunk.count
            if state.grouper is not None:
                state.grouper.discard()
        else:
            events = self._parse(chunk, state, ctx)
            if events and self.config.ingestion_timestamp_field:
                events = stamp(events, self.config.ingestion_timestamp_field.lstrip("."))
        if chunk.eof:
            self._files.pop(file, None)
        return self._batch(state, events or [], chunk.ack, chunk.nbytes, ctx, force=chunk.eof or state.excluded)

    def _parse(self, chunk: Chunk, state: _FileState, ctx: FileContext) -> list[LogEvent] | None:
        parser = state.parser
        regrouped = self._choose_grouping(state, ctx)
        lines_in, malformed, truncated = parser.lines_in, parser.malformed, parser.truncated
        events: list[LogEvent] | None = None
        if chunk.block is not None:
            events = parser.feed_block(chunk.block, ctx)
        indented = parser.indented if events is not None else None
        parsed = parser.feed(chunk.lines, chunk.truncated) if events is None and chunk.count else []
        if parsed:
            indented = parser.indented  # feed lists the marked records too, or None
        if chunk.eof:
            flushed = parser.flush()
            if flushed:
                parsed += flushed
                indented = None
        if parsed:
            made = [LogEvent(message, stream, timestamp, ctx, cut) for message, stream, timestamp, cut in parsed]
            events = events + made if events else made
        self.events_in += parser.lines_in - lines_in
        self.parse_errors += parser.malformed - malformed
        self.lines_truncated += parser.truncated - truncated
        grouper = state.grouper
        if grouper is not None:
            events = grouper.feed(events or [], ctx, time.monotonic(), indented=indented)
            if chunk.eof:
                events = events + grouper.flush(ctx)
        return regrouped + events if regrouped else events

    def _choose_grouping(self, state: _FileState, ctx: FileContext) -> list[LogEvent]:
        """Pick the file's multiline grouping when its pod changed; the records a replaced one still held."""
        if state.pod is state.machine_pod:
            return []
        state.machine_pod = state.pod
        machine: Machine | None = self.multiline.machine(state.pod)
        current = state.grouper
        if (current.machine if current is not None else None) is machine:
            return []
        state.grouper = self.multiline.grouper(machine) if machine is not None else None
        state.parser.count_indented = machine is not None and machine.lead is not None
        state.parser.marks = machine.marks if machine is not None else None
        return current.flush(ctx) if current is not None else []

    def _batch(
        self, state: _FileState, events: list[LogEvent], ack: AckGroup | None, nbytes: int, ctx: FileContext,
        *, force: bool = False,
    ) -> Batch | None:
        """``events`` as a batch, with the acks that may complete once it is delivered.

        While a partial line or a multiline group is unfinished, each chunk's
        ack gets an extra reference, held until the batch that carries the
        finished record. Past MAX_HELD_BYTES (reading must not stall), what
        open multiline groups hold goes out (their next lines form the next
        record) and the acks are let go.
        """
        grouper = state.grouper
        over = state.held_bytes + nbytes > MAX_HELD_BYTES
        if over and grouper is not None and grouper.open and not force:
            events = events + grouper.cut(ctx)
        unfinished = state.parser.pending_bytes() or (grouper is not None and grouper.open)
        hold = unfinished and not force and not over
        acks: list[AckGroup] = []
        if ack is not None:
            if hold:
                if events:
                    ack.acquire()
                    acks.append(ack)
                state.held.append(ack)
                state.held_bytes += nbytes
                self.tailer.held_changed(nbytes)
            else:
                acks.append(ack)
        if not hold and state.held:
            acks += state.held
            self.tailer.held_changed(-state.held_bytes)
            state.held, state.held_bytes = [], 0
        if not events:
            for group in acks:
                group.release()
            return None
        self.events_out += len(events)
        if self.hub is not None and state.pod is None:
            self.enrichment_misses += len(events)
        return Batch(events, acks, nbytes, ctx)

    def _context(self, file: TailedFile, state: _FileState) -> FileContext:
        hub = self.hub
        pod = namespace = node = None
        if hub is not None:
            pod = hub.pods.get(file.pod_uid) if file.pod_uid else None
            if pod is None and state.pod is not None:
                pod = state.pod  # deleted and purged while the file is still open
            ns_name = pod.namespace if pod is not None else file.namespace
            if hub.namespaces is not None and ns_name:
                namespace = hub.namespaces.get(ns_name)
            node = hub.node
        ctx = state.ctx
        if ctx is not None and pod is state.pod and namespace is state.namespace and node is state.node:
            return ctx
        state.pod, state.namespace, state.node = pod, namespace, node
        was_excluded = state.excluded
        state.excluded = self._excluded(file, pod, namespace)
        if state.excluded and not was_excluded:
            self.files_excluded += 1
            log.debug("file excluded", source=self.component_id, file=file.path)
        if pod is None and hub is not None and not state.resolved:
            warn_limited(
                log,
                ("unknown_pod", self.component_id),
                "no metadata for pod; using what its path says",
                source=self.component_id,
                file=file.path,
            )
        state.resolved = True
        fields = self.enricher.fields(
            file,
            pod,
            namespace if self.config.insert_namespace_fields else None,
            node if self.config.insert_node_fields else None,
        )
        state.ctx = FileContext(fields)
        return state.ctx

    def _excluded(self, file: TailedFile, pod: PodMeta | None, namespace: NamespaceMeta | None) -> bool:
        if pod is not None:
            if any(pod.labels.get(label) == "true" for label in EXCLUDE_LABELS):
                return True
            for annotation in EXCLUDE_CONTAINERS_ANNOTATIONS:
                skip = pod.annotations.get(annotation)
                if skip and file.container in {name.strip() for name in skip.split(",")}:
                    return True
            if self.label_selector and not self.label_selector.matches(pod.labels):
                return True
        elif self.label_selector:
            return True  # an unknown pod cannot be shown to match the selector
        if self.field_selector and not self.field_selector.matches(_pod_fields(file, pod)):
            return True
        if namespace is not None and any(namespace.labels.get(label) == "true" for label in EXCLUDE_LABELS):
            return True
        if self.namespace_selector and (namespace is None or not self.namespace_selector.matches(namespace.labels)):
            return True
        return False


def _pod_fields(file: TailedFile, pod: PodMeta | None) -> dict[str, Any]:
    if pod is None:
        return {"metadata.name": file.pod_name, "metadata.namespace": file.namespace, "metadata.uid": file.pod_uid}
    return {
        "metadata.name": pod.name,
        "metadata.namespace": pod.namespace,
        "metadata.uid": pod.uid,
        "spec.nodeName": pod.node_name,
        "status.podIP": pod.pod_ip,
    }


def tailer_config(config: KubernetesLogsConfig) -> TailerConfig:
    cap = config.max_merged_line_bytes or config.max_line_bytes
    return TailerConfig(
        log_dir=config.log_dir,
        include_paths_glob_patterns=list(config.include_paths_glob_patterns),
        exclude_paths_glob_patterns=list(config.exclude_paths_glob_patterns),
        read_from=config.read_from,
        ignore_older_secs=config.ignore_older_secs,
        max_read_bytes=config.max_read_bytes,
        # a raw line carries the runtime's prefix and, for Docker, JSON escapes
        max_line_bytes=4 * max(cap, 16384) + 1024,
        oldest_first=config.oldest_first,
        rescan_interval_secs=config.rescan_interval_secs,
        rotate_wait_secs=config.rotate_wait_secs,
        max_unacked_bytes=MAX_UNACKED_BYTES,
    )
