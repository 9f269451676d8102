"""Vector's ``internal_metrics`` source: the agent's own metrics, for a ``prometheus_exporter`` sink.

It makes no records. The agent's metrics are read from the running components
when the exporter is scraped (:mod:`logagent.observe.metrics`), so this
source is configuration only: its ``namespace`` names Vector's metrics
(``vector_component_received_events_total`` ...), and the graph checks
(``graph.py``) let it feed ``prometheus_exporter`` sinks only. The log
topology leaves it out (:func:`log_sources`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec


class InternalMetricsTags(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    host_key: str | None = None
    pid_key: str | None = None


class InternalMetricsConfig(msgspec.Struct, tag="internal_metrics", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    #: the prefix of Vector's metric names (``<namespace>_component_sent_events_total``)
    namespace: str = "vector"
    #: accepted: the metrics are read at each scrape, never older than the scrape
    scrape_interval_secs: float = 1.0
    tags: InternalMetricsTags = msgspec.field(default_factory=InternalMetricsTags)

    def validate(self) -> None:
        if not self.namespace or not self.namespace.replace("_", "a").isalnum() or self.namespace[0].isdigit():
            raise ValueError(f"namespace: not a Prometheus name prefix, got {self.namespace!r}")
        if not self.scrape_interval_secs > 0:
            raise ValueError("scrape_interval_secs: must be greater than 0")
        for name in ("host_key", "pid_key"):
            if getattr(self.tags, name) is not None:
                raise ValueError(f"tags.{name}: not implemented: the metrics carry no host or pid label "
                                 "(Prometheus adds the scraped instance itself)")


def is_metrics_source(config: Any) -> bool:
    return isinstance(config, InternalMetricsConfig)


def log_sources(sources: Mapping[str, Any]) -> dict[str, Any]:
    """The sources that read logs (every source but ``internal_metrics``)."""
    return {cid: config for cid, config in sources.items() if not isinstance(config, InternalMetricsConfig)}
