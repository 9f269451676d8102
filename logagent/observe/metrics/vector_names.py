"""The agent's metrics under Vector's names, for dashboards and alerts written for Vector.

:class:`VectorNamesCollector` reads the same families as ``/metrics``
(:class:`~logagent.observe.metrics.collector.TopologyCollector`) and gives
those with an equivalent in Vector's ``internal_metrics`` again under Vector's
name and labels (``component_id``, ``component_kind`` = source / transform /
sink, ``component_type`` = the type). The prefix is the ``internal_metrics``
source's ``namespace`` (``vector``). Families without an equivalent keep
their ``logagent_`` names only. ``VECTOR_NAMES`` is the table README shows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

#: our family -> (Vector's name without namespace, extra labels: Vector's name -> ours or a constant)
VECTOR_NAMES: dict[str, tuple[str, dict[str, str]]] = {
    "logagent_component_received_events": ("component_received_events", {}),
    "logagent_component_sent_events": ("component_sent_events", {}),
    "logagent_component_received_bytes": ("component_received_bytes", {}),
    "logagent_component_sent_bytes": ("component_sent_bytes", {}),
    "logagent_component_discarded_events": ("component_discarded_events", {"intentional": "=true"}),
    "logagent_component_errors": ("component_errors", {"error_type": "reason", "stage": "=processing"}),
    "logagent_sink_dropped_events": ("component_discarded_events", {"intentional": "=false"}),
    "logagent_sink_buffer_dropped_events": ("buffer_discarded_events", {"intentional": "=true"}),
    "logagent_sink_queue_events": ("buffer_events", {}),
    "logagent_sink_queue_bytes": ("buffer_byte_size", {}),
    "logagent_files_opened": ("files_added", {}),
    "logagent_files_closed": ("files_unwatched", {}),
    "logagent_file_truncations": ("file_truncations", {}),
    "logagent_checkpoint_writes": ("checkpoints", {}),
    "logagent_parse_errors": ("component_errors", {"error_type": "=parser_failed", "stage": "=processing"}),
    "logagent_build_info": ("build_info", {}),
}

class VectorNamesCollector(Collector):
    """Vector-named copies of ``source``'s families (``source`` is a collector of ours)."""

    def __init__(self, source: Collector, topology: Any, namespace: str = "vector", started_at: float | None = None) -> None:
        self.source = source
        self.topology = topology
        self.namespace = namespace
        #: the process's start (Unix time), for Vector's ``uptime_seconds``
        self.started_at = started_at

    def collect(self) -> Iterator[Metric]:
        components = self._components()
        #: Vector's full name -> (its type, help, label names, labels -> summed value)
        merged: dict[str, tuple[str, str, list[str], dict[tuple[str, ...], float]]] = {}
        for family in self.source.collect():
            target = VECTOR_NAMES.get(family.name)
            if target is None:
                continue
            name, extra = target
            full = f"{self.namespace}_{name}"
            for sample in family.samples:
                if sample.name != family.name and not sample.name.endswith("_total"):
                    continue  # _created and the like
                labels = _vector_labels(sample.labels, extra, components)
                entry = merged.setdefault(full, (family.type, family.documentation, list(labels), {}))
                key = tuple(labels.get(n, "") for n in entry[2])
                entry[3][key] = entry[3].get(key, 0.0) + sample.value
        if self.started_at is not None:
            uptime = GaugeMetricFamily(f"{self.namespace}_uptime_seconds", "Seconds since the agent started.")
            uptime.add_metric([], max(0.0, time.time() - self.started_at))
            yield uptime
        for full, (kind, documentation, names, values) in merged.items():
            family_type = CounterMetricFamily if kind == "counter" else GaugeMetricFamily
            out = family_type(full, documentation, labels=names)
            for key, value in values.items():
                out.add_metric(list(key), value)
            yield out

    def _components(self) -> dict[str, tuple[str, str]]:
        """component id -> (Vector's component_kind: source / transform / sink, its type)."""
        config = getattr(self.topology, "config", None)
        found: dict[str, tuple[str, str]] = {}
        for section, role in (("sources", "source"), ("transforms", "transform"), ("sinks", "sink")):
            for cid, component in (getattr(config, section, None) or {}).items():
                tag = getattr(getattr(type(component), "__struct_config__", None), "tag", None)
                found[cid] = (role, str(tag or ""))
        return found


def _vector_labels(ours: dict[str, str], extra: dict[str, str], components: dict[str, tuple[str, str]]) -> dict[str, str]:
    labels: dict[str, str] = {}
    if "component_id" in ours:
        cid = ours["component_id"]
        role, kind = components.get(cid, ("", ours.get("component_kind", "")))
        labels["component_id"] = cid
        labels["component_kind"] = role
        labels["component_type"] = kind
    for name, value in ours.items():
        if name not in ("component_id", "component_kind", "reason") and name not in labels:
            labels[name] = value
    for name, source in extra.items():
        labels[name] = source[1:] if source.startswith("=") else ours.get(source, "")
    return labels
