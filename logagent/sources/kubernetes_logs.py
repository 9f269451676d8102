"""The kubernetes_logs source: tailed files -> parsed lines -> enriched batches.

The file side (``files.FileTailer``) and the metadata side (a shared
``MetadataHub``) know nothing of each other; this module joins them. Each
file's context (its output fields, pre-encoded) is built once per metadata
version and shared by every line of the file.
"""

from __future__ import annotations

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
from logagent.sources.enrichment import Enricher
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig
from logagent.sources.selection import parse_field_selector, parse_label_selector

log = structlog.get_logger(__name__)

EXCLUDE_LABEL = "logagent.dev/exclude"
EXCLUDE_CONTAINERS_ANNOTATION = "logagent.dev/exclude-containers"

Emit = Callable[[Batch], Awaitable[None]]

#: records read but not yet delivered, per source: this bounds the agent's
#: memory while a sink is slow or down (the files on disk are the buffer), and
#: what a crash can deliver twice
MAX_UNACKED_BYTES = 2 << 20

#: a logical line still being merged holds back its file's checkpoint, but
#: never more than this (a fragment stream that never ends must not stall
#: reading: the tailer pauses at its unacknowledged-bytes budget)
MAX_HELD_BYTES = 1 << 20


class _FileState:
    """What the source remembers per open file."""

    __slots__ = ("parser", "pod", "namespace", "node", "ctx", "excluded", "resolved", "held", "held_bytes")

    def __init__(self, parser: LineParser) -> None:
        self.parser = parser
        self.pod: PodMeta | None = None
        self.namespace: NamespaceMeta | None = None
        self.node: NodeMeta | None = None
        self.ctx: FileContext | None = None
        self.excluded = False
        self.resolved = False
        #: acks of chunks whose partial-line fragments are still being merged:
        #: they complete with the batch that carries the merged record, so a
        #: checkpoint never lands inside an unfinished logical line
        self.held: list[AckGroup] = []
        self.held_bytes = 0


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
        async def on_chunk(chunk: Chunk) -> None:
            batch = self._process(chunk)
            if batch is not None:
                await emit(batch)

        await self.tailer.run(on_chunk, once=once)

    def stop(self) -> None:
        self.tailer.stop()

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
        parser = state.parser
        events: list[LogEvent] | None = None
        if state.excluded:
            self.events_in += chunk.count
        else:
            lines_in, malformed, truncated = parser.lines_in, parser.malformed, parser.truncated
            if chunk.block is not None:
                events = parser.feed_block(chunk.block, ctx)
            parsed = parser.feed(chunk.lines, chunk.truncated) if events is None and chunk.count else []
            if chunk.eof:
                parsed += parser.flush()
            if parsed:
                made = [LogEvent(message, stream, timestamp, ctx, cut) for message, stream, timestamp, cut in parsed]
                events = events + made if events else made
            self.events_in += parser.lines_in - lines_in
            self.parse_errors += parser.malformed - malformed
            self.lines_truncated += parser.truncated - truncated
        if chunk.eof:
            self._files.pop(file, None)
        state.held.append(chunk.ack)
        state.held_bytes += chunk.nbytes
        acks: list[AckGroup] = []
        if not parser.pending_bytes() or chunk.eof or state.excluded or state.held_bytes > MAX_HELD_BYTES:
            acks, state.held, state.held_bytes = state.held, [], 0
        if not events:
            for ack in acks:
                ack.release()
            return None
        self.events_out += len(events)
        if self.hub is not None and state.pod is None:
            self.enrichment_misses += len(events)
        return Batch(events, acks, chunk.nbytes, ctx)

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
            if pod.labels.get(EXCLUDE_LABEL) == "true":
                return True
            skip = pod.annotations.get(EXCLUDE_CONTAINERS_ANNOTATION)
            if skip and file.container in {name.strip() for name in skip.split(",")}:
                return True
            if self.label_selector and not self.label_selector.matches(pod.labels):
                return True
        elif self.label_selector:
            return True  # an unknown pod cannot be shown to match the selector
        if self.field_selector and not self.field_selector.matches(_pod_fields(file, pod)):
            return True
        if namespace is not None and namespace.labels.get(EXCLUDE_LABEL) == "true":
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
