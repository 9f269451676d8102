"""Prometheus metrics read from the components' own counters at scrape time.

Components keep plain attributes (ints, ``Counter``s, cheap properties) and
never touch a metrics library on the hot path; :class:`TopologyCollector`
reads them when ``/metrics`` is scraped and yields metric families.

Labels are bounded by the configuration and by protocol vocabularies only:
``component_id``, ``component_kind``, ``resource`` (pods, namespaces, nodes),
``verb``, ``status`` (a status class such as ``2xx`` or ``error``) and
``reason``. Nothing is ever labelled per pod, per container or per file.

Scrapes run on the event loop thread (the API server lives there), the same
thread that mutates the counters, so every read sees a consistent value.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

import logagent
from logagent.observe.ratelimit import RateLimitedLogger

log = structlog.get_logger(__name__)

#: kinds of objects the metadata hub may watch
RESOURCES = ("pods", "namespaces", "nodes")

#: every label name this module uses; none of them identifies a pod or a file
LABEL_NAMES = frozenset({"component_id", "component_kind", "resource", "verb", "status", "reason", "version", "result"})

_COMPONENT = ["component_id", "component_kind"]


class _Spec:
    """A per-component metric: which attribute it reads, per role."""

    __slots__ = ("name", "help", "attrs", "expected")

    def __init__(self, name: str, help: str, attrs: Mapping[str, str], expected: frozenset[str]) -> None:
        self.name = name
        self.help = help
        #: role (source, transform, sink) -> attribute name
        self.attrs = attrs
        #: roles on which a missing attribute is a gap worth reporting
        self.expected = expected


_ALL_ROLES = frozenset({"source", "transform", "sink"})

COMPONENT_COUNTERS = (
    _Spec(
        "logagent_component_received_events",
        "Events a component received: lines read from files (sources), records taken in (transforms, sinks).",
        {"source": "events_in", "transform": "events_in", "sink": "events_in"},
        _ALL_ROLES,
    ),
    _Spec(
        "logagent_component_sent_events",
        "Events a component passed on: records emitted (sources, transforms), records delivered (sinks).",
        {"source": "events_out", "transform": "events_out", "sink": "events_sent"},
        _ALL_ROLES,
    ),
    _Spec(
        "logagent_component_received_bytes",
        "Bytes a component received: bytes read from log files (sources), batch bytes taken in (others).",
        {"source": "bytes_in", "transform": "bytes_in", "sink": "bytes_in"},
        frozenset({"source"}),
    ),
    _Spec(
        "logagent_component_sent_bytes",
        "Bytes a component sent: bytes written or posted to the destination (sinks), batch bytes passed on (others).",
        {"source": "bytes_out", "transform": "bytes_out", "sink": "bytes_sent"},
        frozenset({"sink"}),
    ),
    _Spec(
        "logagent_component_discarded_events",
        "Events a component dropped on purpose (a filter's condition was false).",
        {"transform": "events_dropped"},
        frozenset(),
    ),
)

SOURCE_COUNTERS = (
    ("logagent_parse_errors", "Malformed log lines (neither CRI nor Docker json-file), passed on whole.", "parse_errors"),
    ("logagent_lines_truncated", "Records cut at the line size limit.", "lines_truncated"),
    ("logagent_enrichment_misses", "Records whose pod was unknown to the metadata store (enriched from the path only).",
     "enrichment_misses"),
    ("logagent_files_excluded", "Files excluded by label, annotation or selector.", "files_excluded"),
    ("logagent_multiline_records", "Records joined from two or more lines by multiline grouping.", "multiline_records"),
    ("logagent_multiline_lines", "Lines that went into multiline records.", "multiline_lines"),
    ("logagent_multiline_splits", "Multiline groups cut at max_lines or max_bytes (the rest began a new record).",
     "multiline_splits"),
    ("logagent_multiline_timeouts", "Multiline groups emitted because no line joined them for timeout_ms.",
     "multiline_timeouts"),
)

TAILER_COUNTERS = (
    ("logagent_file_bytes_read", "Bytes read from log files.", "bytes_read"),
    ("logagent_files_opened", "Log files opened for tailing.", "files_opened"),
    ("logagent_files_closed", "Log files closed (rotated away, deleted or no longer included).", "files_closed"),
    ("logagent_files_closed_unread", "Log files closed with data left unread (rotate_wait_secs expired).",
     "files_closed_unread"),
    ("logagent_file_bytes_unread_on_close", "Bytes left unread in files closed before their end.", "bytes_unread_on_close"),
    ("logagent_file_truncations", "Log files that shrank below the read offset (copy-truncate) and were read again from 0.",
     "truncations"),
    ("logagent_backpressure_pauses", "Times reading paused because too many bytes were unacknowledged.",
     "backpressure_pauses"),
)

TAILER_GAUGES = (
    ("logagent_files_open", "Log files open for tailing.", "files_open"),
    ("logagent_files_open_deleted", "Open log files that were deleted on disk (kept open to read them to the end).",
     "files_open_deleted"),
    ("logagent_checkpoint_lag_bytes", "Bytes of open files past their checkpoint (read or not, not yet acknowledged).",
     "checkpoint_lag_bytes"),
    ("logagent_unacked_bytes", "Bytes read and handed on that no sink has acknowledged yet.", "unacked_bytes"),
)

CHECKPOINT_COUNTERS = (
    ("logagent_checkpoint_writes", "Checkpoint file writes (temp file + rename).", "writes"),
    ("logagent_checkpoint_syncs", "Writes of the fsync'ed checkpoint copy.", "syncs"),
    ("logagent_checkpoint_write_errors", "Checkpoint writes that failed (disk full, read-only data_dir); retried.",
     "write_errors"),
)

#: Counters only some sinks have (read when the attribute exists).
SINK_OPTIONAL_COUNTERS = (
    ("logagent_sink_capped_label_set_events",
     "Records a loki sink sent with the overflow label set because max_label_sets was reached.",
     "capped_label_set_events"),
    ("logagent_sink_rejected_events",
     "Records an OTLP receiver reported as rejected in partial_success (not sent again).", "rejected_events"),
)

KIND_COUNTERS = (
    ("logagent_kube_relists", "Full relists after the apiserver answered 410 Gone.", "relists"),
    ("logagent_kube_watch_restarts", "Watch streams that ended or broke and were started again.", "watch_restarts"),
    ("logagent_kube_events", "Watch events (added, modified, deleted) applied to the store.", "events"),
    ("logagent_kube_bookmarks", "Watch bookmarks received.", "bookmarks"),
    ("logagent_kube_decode_errors", "Watch lines or list pages that could not be decoded (skipped).", "decode_errors"),
    ("logagent_kube_request_errors", "Failed apiserver requests or broken streams (each followed by a backoff).",
     "request_errors"),
    ("logagent_kube_throttled", "429 Too Many Requests answers from the apiserver.", "throttled"),
)


class TopologyCollector(Collector):
    """Yields the agent's metric families from a running topology's counters.

    ``missing_attributes`` collects ``Type.attribute`` names this collector
    looked for and did not find (their samples are left out, not faked).
    """

    def __init__(self, topology: Any, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.topology = topology
        self.clock = clock
        self.missing_attributes: set[str] = set()
        self._errors = RateLimitedLogger(log, 300.0)

    def collect(self) -> Iterator[Metric]:
        sections: tuple[Callable[[], list[Metric]], ...] = (
            self._agent,
            self._components,
            self._sources,
            self._conditions,
            self._transform_errors,
            self._queues,
            self._sinks,
            self._kube,
            self._reloads,
        )
        for section in sections:
            try:
                families = section()
            except Exception as exc:
                # a scrape must not fail because one component misbehaves
                self._errors.warning(section.__name__, "metrics section failed", section=section.__name__,
                                     error=repr(exc))
                continue
            yield from families

    # ------------------------------------------------------------- sections

    def _agent(self) -> list[Metric]:
        info = GaugeMetricFamily("logagent_build_info", "The agent's version (value is always 1).", labels=["version"])
        info.add_metric([logagent.__version__], 1)
        ready = GaugeMetricFamily("logagent_ready", "1 when sinks are started and metadata is synced, else 0.")
        ready.add_metric([], 1 if getattr(self.topology, "ready", False) else 0)
        return [info, ready, *self._checkpoints()]

    def _checkpoints(self) -> list[Metric]:
        store = getattr(self.topology, "checkpoints", None)
        families = []
        for name, help, attr in CHECKPOINT_COUNTERS:
            value = self._number(store, attr) if store is not None else None
            if value is not None:
                family = CounterMetricFamily(name, help)
                family.add_metric([], value)
                families.append(family)
        return families

    def _components(self) -> list[Metric]:
        families = []
        for spec in COMPONENT_COUNTERS:
            family = CounterMetricFamily(spec.name, spec.help, labels=_COMPONENT)
            for role, cid, component in self._each_component():
                attr = spec.attrs.get(role)
                if attr is None:
                    continue
                value = self._number(component, attr, expected=role in spec.expected)
                if value is not None:
                    family.add_metric([cid, _kind(component)], value)
            families.append(family)
        return families

    def _sources(self) -> list[Metric]:
        families: list[Metric] = []
        sources = _mapping(self.topology, "sources")
        for name, help, attr in SOURCE_COUNTERS:
            family = CounterMetricFamily(name, help, labels=["component_id"])
            for cid, source in sources.items():
                value = self._number(source, attr)
                if value is not None:
                    family.add_metric([cid], value)
            families.append(family)
        tailers = {cid: getattr(source, "tailer", None) for cid, source in sources.items()}
        tailers = {cid: tailer for cid, tailer in tailers.items() if tailer is not None}
        for name, help, attr in TAILER_GAUGES:
            gauge = GaugeMetricFamily(name, help, labels=["component_id"])
            for cid, tailer in tailers.items():
                value = self._number(tailer, attr)
                if value is not None:
                    gauge.add_metric([cid], value)
            families.append(gauge)
        for name, help, attr in TAILER_COUNTERS:
            family = CounterMetricFamily(name, help, labels=["component_id"])
            for cid, tailer in tailers.items():
                value = self._number(tailer, attr)
                if value is not None:
                    family.add_metric([cid], value)
            families.append(family)
        return families

    def _conditions(self) -> list[Metric]:
        family = CounterMetricFamily(
            "logagent_condition_runtime_errors",
            "Condition evaluations that failed at run time (counted as false).",
            labels=_COMPONENT,
        )
        for cid, transform in _mapping(self.topology, "transforms").items():
            conditions = list(getattr(transform, "conditions", None) or ())
            single = getattr(transform, "condition", None)
            if single is not None and single not in conditions:
                conditions.append(single)
            if conditions:
                family.add_metric([cid, _kind(transform)], sum(getattr(c, "runtime_errors", 0) for c in conditions))
        return [family]

    def _transform_errors(self) -> list[Metric]:
        family = CounterMetricFamily(
            "logagent_component_errors",
            "Records a transform could not process and passed on unchanged, by reason "
            "(parse_json: field_missing, not_json_object, target_conflict).",
            labels=[*_COMPONENT, "reason"],
        )
        for cid, transform in _mapping(self.topology, "transforms").items():
            for reason, count in _counts(getattr(transform, "errors", None)).items():
                family.add_metric([cid, _kind(transform), str(reason)], count)
        return [family]

    def _queues(self) -> list[Metric]:
        events = GaugeMetricFamily("logagent_sink_queue_events", "Events waiting in a sink's inbox.",
                                   labels=["component_id"])
        nbytes = GaugeMetricFamily("logagent_sink_queue_bytes", "Bytes waiting in a sink's inbox.",
                                   labels=["component_id"])
        ratio = GaugeMetricFamily(
            "logagent_sink_queue_fill_ratio",
            "How full a sink's inbox is, 0 to 1 (the larger of its event and byte fill); 1 means sources wait.",
            labels=["component_id"],
        )
        for cid, inbox in _mapping(self.topology, "inboxes").items():
            events.add_metric([cid], inbox.events)
            nbytes.add_metric([cid], inbox.nbytes)
            ratio.add_metric([cid], inbox.fill_ratio())
        return [events, nbytes, ratio]

    def _sinks(self) -> list[Metric]:
        labels_reason = [*_COMPONENT, "reason"]
        requests = CounterMetricFamily(
            "logagent_sink_requests",
            "Requests a sink sent, by answer: status class (2xx, 4xx, 5xx...) or error (no answer).",
            labels=[*_COMPONENT, "status"],
        )
        retries = CounterMetricFamily("logagent_sink_retries", "Requests a sink retried, by reason.",
                                      labels=labels_reason)
        dropped = CounterMetricFamily(
            "logagent_sink_dropped_events",
            "Events a sink gave up on (an answer retrying cannot fix, or retries exhausted), by reason.",
            labels=labels_reason,
        )
        in_flight = GaugeMetricFamily("logagent_sink_requests_in_flight", "Requests a sink is waiting on.",
                                      labels=_COMPONENT)
        for cid, sink in _mapping(self.topology, "sinks").items():
            kind = _kind(sink)
            if not hasattr(sink, "requests"):
                continue  # a sink without requests (console) has none of these
            for status, count in _counts(sink.requests).items():
                requests.add_metric([cid, kind, str(status)], count)
            raw_retries = getattr(sink, "retries", None)
            if isinstance(raw_retries, Mapping):
                for reason, count in _counts(raw_retries).items():
                    retries.add_metric([cid, kind, str(reason)], count)
            elif isinstance(raw_retries, int):
                self.missing_attributes.add(f"{type(sink).__name__}.retries (as a Counter by reason)")
                retries.add_metric([cid, kind, "unknown"], raw_retries)
            for reason, count in _counts(getattr(sink, "dropped_events", None)).items():
                dropped.add_metric([cid, kind, str(reason)], count)
            value = self._number(sink, "in_flight")
            if value is not None:
                in_flight.add_metric([cid, kind], value)
        families: list[Metric] = [requests, retries, dropped, in_flight]
        for name, help, attr in SINK_OPTIONAL_COUNTERS:
            family = CounterMetricFamily(name, help, labels=_COMPONENT)
            for cid, sink in _mapping(self.topology, "sinks").items():
                value = self._number(sink, attr, expected=False)
                if value is not None:
                    family.add_metric([cid, _kind(sink)], value)
            families.append(family)
        return families

    def _kube(self) -> list[Metric]:
        hub = getattr(self.topology, "hub", None)
        synced = GaugeMetricFamily("logagent_kube_synced", "1 when every watched resource has its initial state.")
        if hub is None:
            return [synced]
        synced.add_metric([], 1 if hub.synced else 0)
        stats: Mapping[str, Any] = hub.stats
        families: list[Metric] = [synced, self._kube_requests(stats)]
        for name, help, attr in KIND_COUNTERS:
            family = CounterMetricFamily(name, help, labels=["resource"])
            for resource, kind_stats in stats.items():
                value = self._number(kind_stats, attr)
                if value is not None:
                    family.add_metric([resource], value)
            families.append(family)
        return families + _kube_store(hub, stats) + [self._kube_since_last_event(stats)] + _namespace_mode_families(hub)

    def _kube_requests(self, stats: Mapping[str, Any]) -> Metric:
        requests = CounterMetricFamily(
            "logagent_kube_requests",
            "Requests to the apiserver by resource, verb (list, watch) and answer status class "
            '("unknown" while the watcher does not record answers).',
            labels=["resource", "verb", "status"],
        )
        for resource, kind_stats in stats.items():
            by_answer = getattr(kind_stats, "requests", None)
            if isinstance(by_answer, Mapping):
                for (verb, status), count in by_answer.items():
                    requests.add_metric([resource, str(verb), str(status)], count)
                continue
            self.missing_attributes.add(f"{type(kind_stats).__name__}.requests")
            for verb in ("list", "watch"):
                value = self._number(kind_stats, f"{verb}_requests")
                if value is not None:
                    requests.add_metric([resource, verb, "unknown"], value)
        return requests

    def _kube_since_last_event(self, stats: Mapping[str, Any]) -> Metric:
        since = GaugeMetricFamily(
            "logagent_kube_seconds_since_last_event",
            "Seconds since the last watch event or bookmark of a resource (absent until the first).",
            labels=["resource"],
        )
        now = self.clock()
        for resource, kind_stats in stats.items():
            if not hasattr(kind_stats, "last_event_at"):
                self.missing_attributes.add(f"{type(kind_stats).__name__}.last_event_at")
                continue
            last = kind_stats.last_event_at
            if last is not None:
                since.add_metric([resource], max(0.0, now - last))
        return since

    def _reloads(self) -> list[Metric]:
        stats = getattr(self.topology, "reloads", None)
        if stats is None:
            return []  # --once: no reloading
        reloads = CounterMetricFamily(
            "logagent_config_reloads",
            "Config reloads by result: applied, rejected (invalid, or needs a restart), failed (could not be applied).",
            labels=["result"],
        )
        for result, count in stats.counts.items():
            reloads.add_metric([result], count)
        digest = GaugeMetricFamily(
            "logagent_config_hash", "The first 48 bits of the SHA-256 of the running config file, as a number."
        )
        digest.add_metric([], stats.hash_value)
        applied = GaugeMetricFamily(
            "logagent_config_last_reload_success_timestamp_seconds",
            "When the running config was applied by a reload (Unix time; absent before the first).",
        )
        if stats.last_applied_at is not None:
            applied.add_metric([], stats.last_applied_at)
        return [reloads, digest, applied]

    # -------------------------------------------------------------- helpers

    def _each_component(self) -> Iterator[tuple[str, str, Any]]:
        for role, attr in (("source", "sources"), ("transform", "transforms"), ("sink", "sinks")):
            for cid, component in _mapping(self.topology, attr).items():
                yield role, cid, component

    def _number(self, obj: Any, attr: str, *, expected: bool = True) -> float | None:
        value = getattr(obj, attr, None)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if expected:
                self.missing_attributes.add(f"{type(obj).__name__}.{attr}")
            return None
        return value


def _kind(component: Any) -> str:
    return str(getattr(component, "kind", type(component).__name__))


def _mapping(obj: Any, attr: str) -> Mapping[str, Any]:
    value = getattr(obj, attr, None)
    return value if isinstance(value, Mapping) else {}


def _counts(value: Any) -> Mapping[Any, int]:
    return value if isinstance(value, Mapping) else {}


def _kube_store(hub: Any, stats: Mapping[str, Any]) -> list[Metric]:
    objects = GaugeMetricFamily("logagent_kube_store_objects", "Objects held in the metadata store.",
                                labels=["resource"])
    for resource, count in _store_sizes(hub).items():
        if resource in stats:
            objects.add_metric([resource], count)
    retained = GaugeMetricFamily(
        "logagent_kube_store_deleted_retained",
        "Deleted objects kept for delay_deletion_ms so late log lines still find their metadata.",
        labels=["resource"],
    )
    graveyard = getattr(getattr(hub, "pods", None), "graveyard_size", None)
    if isinstance(graveyard, int):
        retained.add_metric(["pods"], graveyard)
    return [objects, retained]
def _namespace_mode_families(hub: Any) -> list[Metric]:
    """kubernetes.namespace_metadata: the mode chosen, and the lookup cache (lookup mode)."""
    mode = GaugeMetricFamily(
        "logagent_kube_namespace_mode",
        "1 for the namespace mode in use (watch or lookup) and why: configured, counted (auto), "
        "count_unknown (auto could not count namespaces).",
        labels=["mode", "reason"],
    )
    choice = getattr(hub, "namespace_mode", None)
    if choice is not None:
        mode.add_metric([choice.mode, choice.reason], 1)
    lookups = CounterMetricFamily(
        "logagent_kube_namespace_lookups",
        "Namespace GETs of the lookup mode by result: ok (new labels), unchanged, not_found, forbidden, "
        "throttled, error.",
        labels=["result"],
    )
    cached = GaugeMetricFamily("logagent_kube_namespace_lookup_cached", "Namespaces held by the lookup mode.")
    oldest = GaugeMetricFamily(
        "logagent_kube_namespace_lookup_oldest_age_seconds",
        "Seconds since the least recently fetched cached namespace was fetched (absent when none is cached).",
    )
    lookup = getattr(hub, "namespace_lookup", None)
    if lookup is None:
        return [mode]
    for result, count in lookup.lookup_stats.results.items():
        lookups.add_metric([result], count)
    cached.add_metric([], len(lookup))
    age = lookup.oldest_age()
    if age is not None:
        oldest.add_metric([], age)
    return [mode, lookups, cached, oldest]


def _store_sizes(hub: Any) -> dict[str, int]:
    sizes = {"pods": len(hub.pods)}
    if getattr(hub, "namespaces", None) is not None:
        sizes["namespaces"] = len(hub.namespaces)
    sizes["nodes"] = 1 if getattr(hub, "node", None) is not None else 0
    return sizes


def build_registry(topology: Any, *, process_metrics: bool = True) -> tuple[CollectorRegistry, TopologyCollector]:
    """A dedicated registry (never the global one) holding the topology's
    collector and, unless disabled, the process collector (memory, CPU, fds)."""
    registry = CollectorRegistry()
    collector = TopologyCollector(topology)
    registry.register(collector)
    if process_metrics:
        ProcessCollector(namespace="logagent", registry=registry)
    return registry, collector
