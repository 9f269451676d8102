"""Vector's documented keys of the ``internal_metrics`` source, with their status here."""

from __future__ import annotations

from logagent.vector_keys.model import VectorKey

_TAGS = "not implemented: the metrics carry no host or pid label (Prometheus adds the scraped instance itself)"

#: component type -> its Vector keys
METRICS_KEYS: dict[str, tuple[VectorKey, ...]] = {
    "internal_metrics": (
        VectorKey("type", "same", "", "internal_metrics"),
        VectorKey("namespace", "same", "the prefix of Vector's metric names (vector_component_sent_events_total ...)", "agent"),
        VectorKey("scrape_interval_secs", "accepted", "the metrics are read at each scrape, never older than the scrape", 15.0),
        VectorKey("tags.host_key", "refused", _TAGS, "host"),
        VectorKey("tags.pid_key", "refused", _TAGS, "pid"),
    ),
}
