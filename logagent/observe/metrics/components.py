"""Metrics every component has (events and bytes in and out), and the transforms' errors."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from logagent.observe.metrics.reading import COMPONENT_LABELS, AttributeReader, component_kind, counts, mapping


class ComponentSpec:
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
    ComponentSpec(
        "logagent_component_received_events",
        "Events a component received: lines read from files (sources), records taken in (transforms, sinks).",
        {"source": "events_in", "transform": "events_in", "sink": "events_in"},
        _ALL_ROLES,
    ),
    ComponentSpec(
        "logagent_component_sent_events",
        "Events a component passed on: records emitted (sources, transforms), records delivered (sinks).",
        {"source": "events_out", "transform": "events_out", "sink": "events_sent"},
        _ALL_ROLES,
    ),
    ComponentSpec(
        "logagent_component_received_bytes",
        "Bytes a component received: bytes read from log files (sources), batch bytes taken in (others).",
        {"source": "bytes_in", "transform": "bytes_in", "sink": "bytes_in"},
        frozenset({"source"}),
    ),
    ComponentSpec(
        "logagent_component_sent_bytes",
        "Bytes a component sent: bytes written or posted to the destination (sinks), batch bytes passed on (others).",
        {"source": "bytes_out", "transform": "bytes_out", "sink": "bytes_sent"},
        frozenset({"sink"}),
    ),
)


def component_families(topology: Any, read: AttributeReader) -> list[Metric]:
    families: list[Metric] = []
    for spec in COMPONENT_COUNTERS:
        family = CounterMetricFamily(spec.name, spec.help, labels=COMPONENT_LABELS)
        for role, cid, component in _each_component(topology):
            attr = spec.attrs.get(role)
            if attr is None:
                continue
            value = read.number(component, attr, expected=role in spec.expected)
            if value is not None:
                family.add_metric([cid, component_kind(component)], value)
        families.append(family)
    families.extend(discarded_families(topology))
    return families


def discarded_families(topology: Any) -> list[Metric]:
    """Records transforms dropped on purpose, by reason; per key where a throttle is asked to."""
    discarded = CounterMetricFamily(
        "logagent_component_discarded_events",
        "Events a transform dropped on purpose, by reason: filtered (a filter's condition was false), "
        "throttled, sampled (not kept by sample), duplicate (dedupe).",
        labels=[*COMPONENT_LABELS, "reason"],
    )
    by_key = CounterMetricFamily(
        "logagent_component_discarded_events_by_key",
        "Events a throttle dropped, per key (only with internal_metrics.emit_events_discarded_per_key; "
        "at most 1000 keys per transform, the rest under key=\"_other\").",
        labels=[*COMPONENT_LABELS, "key"],
    )
    keys = GaugeMetricFamily("logagent_throttle_keys", "Keys a throttle holds a budget for (active ones only).",
                             labels=COMPONENT_LABELS)
    for cid, transform in mapping(topology, "transforms").items():
        kind = component_kind(transform)
        dropped = getattr(transform, "events_dropped", None)
        if isinstance(dropped, int):
            discarded.add_metric([cid, kind, "filtered"], dropped)
        for reason, count in counts(getattr(transform, "discarded", None)).items():
            discarded.add_metric([cid, kind, str(reason)], count)
        if getattr(transform, "per_key", False):
            for key, count in counts(getattr(transform, "discarded_by_key", None)).items():
                by_key.add_metric([cid, kind, str(key)], count)
        held = getattr(transform, "held_keys", None)
        if isinstance(held, int):
            keys.add_metric([cid, kind], held)
    return [discarded, by_key, keys]


def transform_families(topology: Any, read: AttributeReader) -> list[Metric]:
    """Condition run-time errors (filter, route) and records passed on unprocessed (parse_json)."""
    conditions = CounterMetricFamily(
        "logagent_condition_runtime_errors",
        "Condition evaluations that failed at run time (counted as false).",
        labels=COMPONENT_LABELS,
    )
    errors = CounterMetricFamily(
        "logagent_component_errors",
        "Records a transform could not process and passed on unchanged, by reason "
        "(parse_json: field_missing, not_json_object, target_conflict).",
        labels=[*COMPONENT_LABELS, "reason"],
    )
    for cid, transform in mapping(topology, "transforms").items():
        kind = component_kind(transform)
        runs = _conditions(transform)
        if runs:
            conditions.add_metric([cid, kind], sum(getattr(c, "runtime_errors", 0) for c in runs))
        for reason, count in counts(getattr(transform, "errors", None)).items():
            errors.add_metric([cid, kind, str(reason)], count)
    return [conditions, errors]


def _conditions(transform: Any) -> list[Any]:
    """A route's conditions, or a filter's one condition."""
    found = list(getattr(transform, "conditions", None) or ())
    single = getattr(transform, "condition", None)
    if single is not None and single not in found:
        found.append(single)
    return found


def _each_component(topology: Any) -> Iterator[tuple[str, str, Any]]:
    for role, attr in (("source", "sources"), ("transform", "transforms"), ("sink", "sinks")):
        for cid, component in mapping(topology, attr).items():
            yield role, cid, component
