"""Vector's documented keys of the globals logagent implements, with their status here."""

from __future__ import annotations

from typing import Any

from logagent.vector_keys.model import VectorKey

_NO_GRAPHQL = (
    "there is no GraphQL API here; the API serves /health, /ready, /metrics and /tap, "
    "and `logagent tap` / `logagent top` stand in for `vector tap` / `vector top`"
)
_UTC = "times here are UTC (kubelet timestamps carry their zone), so `UTC` asks for nothing else"
_NOT_UTC = (
    "a default time zone other than UTC is not implemented: VRL functions here read and write zone-less "
    "times as UTC; remove the key or set `UTC`"
)
_FIELD_NAMES = (
    "records here always carry the line in `message` and the time in `timestamp`; rename a field "
    "with a remap transform (e.g. `.msg = del(.message)`)"
)
_NO_SCHEMA = "Vector's schema system (log namespaces, type checking) is not implemented: records keep the legacy layout"

#: component type (for globals: "global") -> its Vector keys
GLOBALS_KEYS: dict[str, tuple[VectorKey, ...]] = {
    "global": (
        VectorKey("data_dir", "same", "", "/var/lib/vector"),
        VectorKey("api.enabled", "same", "", True),
        VectorKey("api.address", "same", "", "127.0.0.1:8686"),
        VectorKey("api.playground", "accepted", _NO_GRAPHQL, False),
        VectorKey("api.graphql", "accepted", _NO_GRAPHQL, True),
        VectorKey(
            "acknowledgements.enabled",
            "accepted",
            "records are always acknowledged end to end: a file offset is checkpointed only once every sink it "
            "went to has delivered (or dead-lettered) it, so `true` is what happens and `false` asks for less",
            True,
        ),
        VectorKey("timezone", "accepted", _UTC, "UTC"),
        VectorKey("timezone", "refused", _NOT_UTC, "America/New_York"),
        VectorKey(
            "expire_metrics_secs",
            "accepted",
            "metrics are read from the running components at scrape time, so a component a reload removed "
            "disappears at once and there is nothing to expire",
            300.0,
        ),
        VectorKey("expire_metrics", "accepted", "Vector's older form of `expire_metrics_secs`: nothing expires here",
                  {"secs": 300, "nsecs": 0}),
        VectorKey("expire_metrics_per_metric_set", "accepted", "as `expire_metrics_secs`: nothing expires here", []),
        VectorKey("buffer_utilization_ewma_half_life_seconds", "accepted", "tunes gauges logagent does not export", 5.0),
        VectorKey("latency_ewma_alpha", "accepted", "tunes gauges logagent does not export", 0.9),
        VectorKey(
            "metrics_storage_refresh_period",
            "refused",
            "VRL's metric functions (`get_vector_metric` ...) are not implemented, so there is no cache to refresh",
            60.0,
        ),
        VectorKey("log_schema.message_key", "same", "", ".message"),
        VectorKey("log_schema.message_key", "refused", _FIELD_NAMES, ".msg"),
        VectorKey("log_schema.timestamp_key", "same", "", ".timestamp"),
        VectorKey("log_schema.timestamp_key", "refused", _FIELD_NAMES, ".ts"),
        VectorKey("log_schema.source_type_key", "same", "", ".source_type"),
        VectorKey("log_schema.source_type_key", "refused", _FIELD_NAMES, ".kind"),
        VectorKey("log_schema.host_key", "accepted", "the kubernetes_logs source adds no host field, in Vector and here", ".hostname"),
        VectorKey("log_schema.metadata_key", "accepted", "Vector's event metadata is not part of records here", ".metadata"),
        VectorKey("schema.log_namespace", "same", "false: the legacy layout, the only one here", False),
        VectorKey("schema.log_namespace", "refused", _NO_SCHEMA, True),
        VectorKey("schema.enabled", "same", "false: no schema checks, as here", False),
        VectorKey("schema.enabled", "refused", _NO_SCHEMA, True),
        VectorKey("schema.validation", "same", "false: no schema checks, as here", False),
        VectorKey("schema.validation", "refused", _NO_SCHEMA, True),
        VectorKey("telemetry.tags.emit_service", "same", "false: no such tag, as here", False),
        VectorKey("telemetry.tags.emit_service", "refused", "component metrics here are labelled by component only (bounded labels)", True),
        VectorKey("telemetry.tags.emit_source", "same", "false: no such tag, as here", False),
        VectorKey("telemetry.tags.emit_source", "refused", "component metrics here are labelled by component only (bounded labels)", True),
        VectorKey("proxy.enabled", "accepted", "nothing is proxied: no proxy endpoint can be set", True),
        VectorKey("proxy.no_proxy", "accepted", "nothing is proxied: no proxy endpoint can be set", ["localhost"]),
        VectorKey("proxy.http", "refused", "the HTTP sinks connect directly; proxies are not implemented", "http://proxy:3128"),
        VectorKey("proxy.https", "refused", "the HTTP sinks connect directly; proxies are not implemented", "http://proxy:3128"),
        VectorKey("wildcard_matching", "same", "an `inputs` wildcard (`kube_*`) that matches nothing: an error "
                  "(`strict`, the default) or dropped (`relaxed`)", "relaxed"),
        VectorKey(
            "enrichment_tables",
            "refused",
            "enrichment tables (and VRL's `get_enrichment_table_record`) are not implemented",
            {"t": {"type": "file"}},
        ),
        VectorKey(
            "secret",
            "refused",
            "secret backends are not implemented; pass secrets as environment variables (`${VAR}`) or files "
            "(the sinks' `*_file` options)",
            {"s": {"type": "exec", "command": ["cat"]}},
        ),
        VectorKey(
            "tests",
            "refused",
            "Vector's unit tests (`vector test`) are not run here; keep them in a file only Vector reads",
            [],
        ),
        VectorKey("provider", "refused", "remote config providers are not implemented; mount the config as files", {"type": "http"}),
    ),
}


def _utc(value: Any) -> bool:
    return isinstance(value, str) and value.strip().upper() in {"UTC", "ETC/UTC", "Z", "GMT", "ETC/GMT", "UTC0"}


def _field(name: str):  # type: ignore[no-untyped-def]
    return lambda value: isinstance(value, str) and value.lstrip(".") == name


#: path -> the values the same/accepted entry stands for (others get the refused entry's note)
GLOBALS_VALUES: dict[str, dict[str, Any]] = {
    "global": {
        "timezone": _utc,
        "log_schema.message_key": _field("message"),
        "log_schema.timestamp_key": _field("timestamp"),
        "log_schema.source_type_key": _field("source_type"),
        "schema.log_namespace": lambda v: v is False,
        "schema.enabled": lambda v: v is False,
        "schema.validation": lambda v: v is False,
        "telemetry.tags.emit_service": lambda v: v is False,
        "telemetry.tags.emit_source": lambda v: v is False,
    }
}
