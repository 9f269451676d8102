"""How far behind the writers the agent is: bytes not read, the oldest record not acknowledged, delivery latency.

All three are read at scrape time: the behind bytes are an fstat per open file
minus its read offset, the oldest unacknowledged chunk one look per file at
its oldest chunk in flight, the latency histogram is kept per batch by each
sink (:mod:`logagent.observe.latency`).
"""

from __future__ import annotations

from typing import Any

from prometheus_client.metrics_core import GaugeMetricFamily, HistogramMetricFamily, Metric

from logagent.observe.latency import BUCKETS
from logagent.observe.metrics.reading import COMPONENT_LABELS, AttributeReader, component_kind, mapping


def lag_families(topology: Any, read: AttributeReader, now: float) -> list[Metric]:
    """``now``: the monotonic time the tailers' read stamps compare with."""
    behind = GaugeMetricFamily(
        "logagent_source_behind_bytes",
        "Bytes written to the open log files of a source and not read yet (file sizes minus read offsets).",
        labels=["component_id"],
    )
    oldest = GaugeMetricFamily(
        "logagent_oldest_unacked_age_seconds",
        "Seconds since the oldest chunk of lines a source read and no sink has acknowledged yet was read "
        "(0 when everything read is acknowledged).",
        labels=["component_id"],
    )
    for cid, source in mapping(topology, "sources").items():
        tailer = getattr(source, "tailer", None)
        if tailer is None:
            continue
        value = read.number(tailer, "behind_bytes")
        if value is not None:
            behind.add_metric([cid], value)
        oldest_at = tailer.oldest_unacked_at() if hasattr(tailer, "oldest_unacked_at") else None
        oldest.add_metric([cid], 0.0 if oldest_at is None else max(0.0, now - oldest_at))
    return [behind, oldest, _latency(topology, read)]


def _latency(topology: Any, read: AttributeReader) -> Metric:
    family = HistogramMetricFamily(
        "logagent_delivery_latency_seconds",
        "Seconds from a record's timestamp (the kubelet's write time) to the sink's acknowledgement "
        "(written, answered 2xx or dead-lettered); observed per batch at the age of its oldest record.",
        labels=COMPONENT_LABELS,
    )
    for cid, sink in mapping(topology, "sinks").items():
        latency = getattr(sink, "delivery_latency", None)
        if latency is None:
            read.note(sink, "delivery_latency")
            continue
        cumulative, buckets = 0, []
        for bound, count in zip((*BUCKETS, float("inf")), latency.counts):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
        family.add_metric([cid, component_kind(sink)], buckets, latency.sum)
    return family
