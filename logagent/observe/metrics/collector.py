"""The collector: the agent's metric families, read from a running topology at scrape time.

Components keep plain attributes (ints, ``Counter``s, cheap properties) and
never touch a metrics library on the hot path; :class:`TopologyCollector`
reads them when ``/metrics`` is scraped and yields metric families, one area
module each (components, files, sinks, kube) plus the agent-wide ones here.

Labels are bounded by the configuration and by protocol vocabularies only:
``component_id``, ``component_kind``, ``resource`` (pods, namespaces, nodes),
``verb``, ``status`` (a status class such as ``2xx`` or ``error``) and
``reason``. Nothing is ever labelled per pod, per container or per file.

Scrapes run on the event loop thread (the API server lives there), the same
thread that mutates the counters, so every read sees a consistent value.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import structlog
from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

import logagent
from logagent.observe.metrics.components import component_families, transform_families
from logagent.observe.metrics.files import checkpoint_families, source_families
from logagent.observe.metrics.kube import kube_families
from logagent.observe.metrics.lag import lag_families
from logagent.observe.metrics.reading import AttributeReader
from logagent.observe.metrics.sinks import queue_families, sink_families
from logagent.observe.ratelimit import RateLimitedLogger

log = structlog.get_logger(__name__)

#: every label name the metrics use (``le``: a histogram bucket); none of them identifies a pod or a file
#: (``key`` is a throttle's key, only when its config asks for it, and capped per transform)
LABEL_NAMES = frozenset({"component_id", "component_kind", "resource", "verb", "status", "reason", "version", "result",
                         "le", "key"})

#: a section of the exposition: (topology, reader) -> its families
Section = Callable[[Any, AttributeReader], list[Metric]]


class TopologyCollector(Collector):
    """Yields the agent's metric families from a running topology's counters.

    ``missing_attributes`` collects ``Type.attribute`` names this collector
    looked for and did not find (their samples are left out, not faked).
    """

    def __init__(self, topology: Any, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.topology = topology
        self.clock = clock
        self.reader = AttributeReader()
        self._errors = RateLimitedLogger(log, 300.0)

    @property
    def missing_attributes(self) -> set[str]:
        return self.reader.missing

    def collect(self) -> Iterator[Metric]:
        sections: tuple[tuple[str, Section], ...] = (
            ("agent", agent_families),
            ("checkpoints", checkpoint_families),
            ("components", component_families),
            ("sources", source_families),
            ("lag", lambda topology, read: lag_families(topology, read, time.monotonic())),
            ("transforms", transform_families),
            ("queues", queue_families),
            ("sinks", sink_families),
            ("kube", lambda topology, read: kube_families(topology, read, self.clock())),
            ("reloads", reload_families),
        )
        for name, section in sections:
            try:
                families = section(self.topology, self.reader)
            except Exception as exc:
                # a scrape must not fail because one component misbehaves
                self._errors.warning(name, "metrics section failed", section=name, error=repr(exc))
                continue
            yield from families


def agent_families(topology: Any, read: AttributeReader) -> list[Metric]:
    info = GaugeMetricFamily("logagent_build_info", "The agent's version (value is always 1).", labels=["version"])
    info.add_metric([logagent.__version__], 1)
    ready = GaugeMetricFamily("logagent_ready", "1 when sinks are started and metadata is synced, else 0.")
    ready.add_metric([], 1 if getattr(topology, "ready", False) else 0)
    return [info, ready]


def reload_families(topology: Any, read: AttributeReader) -> list[Metric]:
    """Config reloads (none under ``--once``, which does not reload)."""
    stats = getattr(topology, "reloads", None)
    if stats is None:
        return []
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


def build_registry(topology: Any, *, process_metrics: bool = True) -> tuple[CollectorRegistry, TopologyCollector]:
    """A dedicated registry (never the global one) holding the topology's
    collector and, unless disabled, the process collector (memory, CPU, fds)."""
    registry = CollectorRegistry()
    collector = TopologyCollector(topology)
    registry.register(collector)
    if process_metrics:
        ProcessCollector(namespace="logagent", registry=registry)
    return registry, collector
