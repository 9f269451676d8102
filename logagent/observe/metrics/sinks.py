"""Metrics of the sinks: their inboxes, and the requests of the HTTP-based sinks.

An HTTP-based sink (``http`` and the backends built on it: elasticsearch,
loki, opentelemetry) is recognised by its ``requests`` counter; a sink
without one (console) has none of the request metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from logagent.observe.metrics.reading import COMPONENT_LABELS, AttributeMetric, AttributeReader, component_kind, counts, mapping

#: Counters of every HTTP-based sink, labelled by component.
SINK_REQUEST_COUNTERS: tuple[AttributeMetric, ...] = (
    ("logagent_sink_request_splits",
     "Requests a sink split in halves after a 413 Payload Too Large answer (each half is sent again).", "splits"),
    ("logagent_sink_dead_letter_discarded_events",
     "Records removed from a sink's dead-letter file by its size cap (the oldest first).", "dead_letter_discarded"),
)

#: Counters only some sinks have (read when the attribute exists).
SINK_OPTIONAL_COUNTERS: tuple[AttributeMetric, ...] = (
    ("logagent_sink_capped_label_set_events",
     "Records a loki sink sent with the overflow label set because max_label_sets was reached.",
     "capped_label_set_events"),
    ("logagent_sink_rejected_events",
     "Records an OTLP receiver reported as rejected in partial_success (not sent again).", "rejected_events"),
)

_REASON_LABELS = [*COMPONENT_LABELS, "reason"]


def queue_families(topology: Any, read: AttributeReader) -> list[Metric]:
    events = GaugeMetricFamily("logagent_sink_queue_events", "Events waiting in a sink's inbox.",
                               labels=["component_id"])
    nbytes = GaugeMetricFamily("logagent_sink_queue_bytes", "Bytes waiting in a sink's inbox.",
                               labels=["component_id"])
    ratio = GaugeMetricFamily(
        "logagent_sink_queue_fill_ratio",
        "How full a sink's inbox is, 0 to 1 (the larger of its event and byte fill); 1 means sources wait.",
        labels=["component_id"],
    )
    dropped = CounterMetricFamily(
        "logagent_sink_buffer_dropped_events",
        "Events dropped because a sink's inbox was full (buffer.when_full: drop_newest); they are acknowledged.",
        labels=["component_id"],
    )
    for cid, inbox in mapping(topology, "inboxes").items():
        events.add_metric([cid], inbox.events)
        nbytes.add_metric([cid], inbox.nbytes)
        ratio.add_metric([cid], inbox.fill_ratio())
        if hasattr(inbox, "dropped_events"):
            dropped.add_metric([cid], inbox.dropped_events)
    return [events, nbytes, ratio, dropped]


def sink_families(topology: Any, read: AttributeReader) -> list[Metric]:
    sinks = mapping(topology, "sinks")
    http_sinks = {cid: sink for cid, sink in sinks.items() if hasattr(sink, "requests")}
    return [
        *_request_families(http_sinks, read),
        *(_per_sink(spec, http_sinks, read, expected=True) for spec in SINK_REQUEST_COUNTERS),
        *(_per_sink(spec, sinks, read, expected=False) for spec in SINK_OPTIONAL_COUNTERS),
    ]


def _request_families(sinks: Mapping[str, Any], read: AttributeReader) -> list[Metric]:
    requests = CounterMetricFamily(
        "logagent_sink_requests",
        "Requests a sink sent, by answer: status class (2xx, 4xx, 5xx...) or error (no answer).",
        labels=[*COMPONENT_LABELS, "status"],
    )
    retries = CounterMetricFamily("logagent_sink_retries", "Requests a sink retried, by reason.",
                                  labels=_REASON_LABELS)
    dropped = CounterMetricFamily(
        "logagent_sink_dropped_events",
        "Events a sink gave up on (an answer retrying cannot fix, or retries exhausted), by reason.",
        labels=_REASON_LABELS,
    )
    dead_lettered = CounterMetricFamily(
        "logagent_sink_dead_lettered_events",
        "Of the events a sink gave up on, those written to its dead-letter file, by reason.",
        labels=_REASON_LABELS,
    )
    in_flight = GaugeMetricFamily("logagent_sink_requests_in_flight", "Requests a sink is waiting on.",
                                  labels=COMPONENT_LABELS)
    for cid, sink in sinks.items():
        kind = component_kind(sink)
        for status, count in counts(sink.requests).items():
            requests.add_metric([cid, kind, str(status)], count)
        _add_retries(retries, cid, sink, read)
        for reason, count in counts(getattr(sink, "dropped_events", None)).items():
            dropped.add_metric([cid, kind, str(reason)], count)
        _add_by_reason(dead_lettered, cid, sink, "dead_lettered_events", read)
        value = read.number(sink, "in_flight")
        if value is not None:
            in_flight.add_metric([cid, kind], value)
    return [requests, retries, dropped, in_flight, dead_lettered]


def _add_retries(family: CounterMetricFamily, cid: str, sink: Any, read: AttributeReader) -> None:
    raw = getattr(sink, "retries", None)
    if isinstance(raw, int) and not isinstance(raw, bool):
        read.note(sink, "retries (as a Counter by reason)")
        family.add_metric([cid, component_kind(sink), "unknown"], raw)
    else:
        _add_by_reason(family, cid, sink, "retries", read, expected=False)


def _add_by_reason(
    family: CounterMetricFamily, cid: str, sink: Any, attr: str, read: AttributeReader, *, expected: bool = True
) -> None:
    """One sample per reason of the sink's ``Counter`` ``attr``; a missing one is named."""
    by_reason = getattr(sink, attr, None)
    if not isinstance(by_reason, Mapping):
        if expected:
            read.note(sink, f"{attr} (a Counter by reason)")
        return
    kind = component_kind(sink)
    for reason, count in by_reason.items():
        family.add_metric([cid, kind, str(reason)], count)


def _per_sink(spec: AttributeMetric, sinks: Mapping[str, Any], read: AttributeReader, *, expected: bool) -> Metric:
    name, help, attr = spec
    family = CounterMetricFamily(name, help, labels=COMPONENT_LABELS)
    for cid, sink in sinks.items():
        value = read.number(sink, attr, expected=expected)
        if value is not None:
            family.add_metric([cid, component_kind(sink)], value)
    return family
