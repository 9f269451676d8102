"""Reading the components' own counters for the metric families.

Components keep plain attributes; the area modules (components, files,
sinks, kube) read them through an :class:`AttributeReader`, which leaves a
missing or non-numeric attribute out of the exposition (never a faked zero)
and names it in ``missing`` so a test can catch a renamed attribute.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily

#: the labels of a per-component metric
COMPONENT_LABELS = ["component_id", "component_kind"]

#: (metric name, help, attribute) of a metric with one sample per object
AttributeMetric = tuple[str, str, str]


class AttributeReader:
    """Reads numbers from components; remembers what it looked for and did not find."""

    def __init__(self) -> None:
        #: ``Type.attribute`` names looked for and not found
        self.missing: set[str] = set()

    def number(self, obj: Any, attr: str, *, expected: bool = True) -> float | None:
        """``obj.attr`` if it is a number, else None (named in ``missing`` when ``expected``)."""
        value = getattr(obj, attr, None)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if expected:
                self.note(obj, attr)
            return None
        return value

    def note(self, obj: Any, what: str) -> None:
        self.missing.add(f"{type(obj).__name__}.{what}")

    def per_object(
        self, family: type[CounterMetricFamily | GaugeMetricFamily], spec: AttributeMetric, objects: Mapping[str, Any]
    ) -> CounterMetricFamily | GaugeMetricFamily:
        """One family labelled by ``component_id``: ``spec``'s attribute of each object."""
        name, help, attr = spec
        metric = family(name, help, labels=["component_id"])
        for cid, obj in objects.items():
            value = self.number(obj, attr)
            if value is not None:
                metric.add_metric([cid], value)
        return metric


def component_kind(component: Any) -> str:
    return str(getattr(component, "kind", type(component).__name__))


def mapping(obj: Any, attr: str) -> Mapping[str, Any]:
    """``obj.attr`` if it is a mapping (the topology's components by id), else empty."""
    value = getattr(obj, attr, None)
    return value if isinstance(value, Mapping) else {}


def counts(value: Any) -> Mapping[Any, int]:
    """A ``Counter`` of a component (by status, reason...), or empty if it is something else."""
    return value if isinstance(value, Mapping) else {}
