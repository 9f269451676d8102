"""Vector's spellings in a raw config, before it is converted to Structs.

``apply_key_list`` walks a component (or the top level) against the one list
of Vector's keys (``logagent.vector_keys``): a refused key is an error with the
list's note, a listed key the Struct has no field for is taken out (its
behaviour is ours already). ``unsupported_type`` says what to use instead of
a Vector component type logagent does not have.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import msgspec

from logagent.config_errors import ConfigError, unwrap_type
from logagent.vector_keys import ALL_KEYS, ALL_VALUES, VectorKey

_COLLECTOR = "the opentelemetry sink to an OpenTelemetry Collector that has an exporter for it"
_METRICS = "metrics from logs are not implemented here; count in the backend (a Loki or Elasticsearch query)"
_REMAP = "a remap transform (VRL's parse_* functions, set and del of fields)"

#: Vector component types logagent does not implement -> what to use instead
UNSUPPORTED_TYPES: dict[str, dict[str, str]] = {
    "sources": {
        "host_metrics": "node_exporter beside the agent: logagent collects logs only",
        "internal_logs": "the agent's own logs go to stderr, so a kubernetes_logs source reads them from its pod's log file",
        "file": "kubernetes_logs reads /var/log/pods; other files of the node are not collected by logagent",
        "journald": "a node collector that reads the journal (e.g. Fluent Bit's systemd input): logagent reads pod logs only",
        "docker_logs": "kubernetes_logs (it reads the runtime's files under /var/log/pods, docker's json-file included)",
        "vector": "nothing: logagent is a node agent with no receiving side; ship from each node straight to the backend",
        "kafka": "nothing: logagent reads pod logs only",
        "aws_s3": "nothing: logagent reads pod logs only",
        "aws_sqs": "nothing: logagent reads pod logs only",
        "datadog_agent": "nothing: logagent reads pod logs only",
        "splunk_hec": "nothing: logagent reads pod logs only",
        "http_server": "nothing: logagent reads pod logs only",
        "http": "nothing: logagent reads pod logs only",
        "socket": "nothing: logagent reads pod logs only",
        "syslog": "nothing: logagent reads pod logs only",
        "opentelemetry": "nothing: logagent reads pod logs only (the opentelemetry sink sends)",
        "prometheus_scrape": "Prometheus itself: logagent collects logs only",
        "statsd": "nothing: logagent collects logs only",
        "demo_logs": "a pod that writes the lines, read by kubernetes_logs",
        "stdin": "nothing: logagent reads pod logs only",
        "exec": "nothing: logagent reads pod logs only",
        "fluent": "nothing: logagent reads pod logs only",
        "logstash": "nothing: logagent reads pod logs only",
    },
    "transforms": {
        "lua": "a remap transform (VRL)",
        "reduce": "the kubernetes_logs source's `multiline` option joins the lines of one record; other reductions "
                  "are not implemented",
        "aggregate": _METRICS,
        "log_to_metric": _METRICS,
        "metric_to_log": _METRICS,
        "tag_cardinality_limit": "nothing: logagent handles logs only",
        "aws_ec2_metadata": "a remap transform setting the fields from the environment (`get_env_var`)",
        "exclusive_route": "a route whose conditions exclude each other, or filters",
        "json_parser": "the parse_json transform, or " + _REMAP,
        "regex_parser": _REMAP,
        "grok_parser": _REMAP,
        "logfmt_parser": _REMAP,
        "key_value_parser": _REMAP,
        "add_fields": _REMAP,
        "remove_fields": _REMAP,
        "rename_fields": _REMAP,
        "coercer": _REMAP,
        "split": _REMAP,
        "tokenizer": _REMAP,
        "ansi_stripper": _REMAP,
        "merge": "the kubernetes_logs source's `auto_partial_merge` (on by default)",
        "concat": _REMAP,
        "field_filter": "a filter transform",
        "swimlanes": "a route transform",
        "sampler": "the sample transform",
        "wasm": _REMAP,
    },
    "sinks": {
        "vector": "a sink for the backend the aggregator wrote to (elasticsearch, loki, opentelemetry, http)",
        "kafka": "an http sink to a Kafka REST proxy, or " + _COLLECTOR,
        "aws_s3": _COLLECTOR,
        "gcp_cloud_storage": _COLLECTOR,
        "azure_blob": _COLLECTOR,
        "aws_cloudwatch_logs": _COLLECTOR,
        "gcp_stackdriver_logs": _COLLECTOR,
        "azure_monitor_logs": _COLLECTOR,
        "clickhouse": "an http sink to ClickHouse's HTTP interface (`INSERT ... FORMAT JSONEachRow` in the uri's query)",
        "datadog_logs": "an http sink to Datadog's logs intake with the `DD-API-KEY` header",
        "splunk_hec_logs": "an http sink to the HEC raw endpoint (`/services/collector/raw`) with an "
                           "`Authorization: Splunk <token>` header",
        "file": "the console sink (stdout, collected by the kubelet) or an http sink",
        "socket": "an http sink",
        "blackhole": "a filter whose condition is `false` (its records are dropped and counted)",
        "prometheus_remote_write": _METRICS,
        "datadog_metrics": _METRICS,
        "statsd": _METRICS,
        "redis": _COLLECTOR,
        "nats": _COLLECTOR,
        "pulsar": _COLLECTOR,
        "amqp": _COLLECTOR,
        "papertrail": _COLLECTOR,
        "humio_logs": "an http sink to Humio's (LogScale's) structured ingest API",
        "new_relic": "an http sink to New Relic's log API, or the opentelemetry sink to its OTLP endpoint",
        "axiom": "an http sink to Axiom's ingest API, or the opentelemetry sink to its OTLP endpoint",
        "honeycomb": "the opentelemetry sink to Honeycomb's OTLP endpoint",
        "websocket": "an http sink",
    },
}


def unsupported_type(section: str, kind: str) -> str | None:
    """Why a Vector type is refused and what to use instead (None: not a Vector type we know of)."""
    instead = UNSUPPORTED_TYPES.get(section, {}).get(kind)
    if instead is None:
        return None
    return f"Vector's `{kind}` is not implemented by logagent; use instead: {instead}"


# ---------------------------------------------------------------- the key list


def normalise_globals(raw: dict[str, Any]) -> None:
    """Vector's short forms of global keys: ``acknowledgements: true`` is ``{enabled: true}``."""
    if isinstance(raw.get("acknowledgements"), bool):
        raw["acknowledgements"] = {"enabled": raw["acknowledgements"]}


def apply_key_list(section: str, kind: str, body: dict[str, Any], struct_type: type, prefix: str) -> list[ConfigError]:
    """Refuse the refused keys of ``body`` and take out the listed ones ``struct_type`` has no field for."""
    keys = ALL_KEYS.get(section, {}).get(kind, ())
    values = ALL_VALUES.get(section, {}).get(kind, {})
    by_path: dict[str, list[VectorKey]] = {}
    for key in keys:
        by_path.setdefault(key.path, []).append(key)
    errors: list[ConfigError] = []
    for path, entries in by_path.items():
        refused = next((e for e in entries if e.status == "refused"), None)
        kept = [e for e in entries if e.status != "refused"]
        accepts: Callable[[Any], bool] = values.get(path, lambda _value: True)
        for segments, value in _find(body, path.split(".")):
            where = ".".join(segments)
            if refused is not None and (not kept or not accepts(value)):
                errors.append(ConfigError(refused.note, f"{prefix}.{where}" if prefix else where))
                _remove(body, segments, struct_type)
            elif not struct_has(struct_type, segments):
                _remove(body, segments, struct_type)
    return errors


def _find(data: Any, pattern: list[str], done: tuple[str, ...] = ()) -> list[tuple[list[str], Any]]:
    """Every (key path, value) in ``data`` matching the dotted ``pattern`` (``*``: any key)."""
    if not pattern:
        return [(list(done), data)]
    if not isinstance(data, dict):
        return []
    head, rest = pattern[0], pattern[1:]
    names = [k for k in data if isinstance(k, str)] if head == "*" else ([head] if head in data else [])
    found: list[tuple[list[str], Any]] = []
    for name in names:
        found.extend(_find(data[name], rest, (*done, name)))
    return found


def _remove(body: dict[str, Any], segments: list[str], struct_type: type) -> None:
    """Delete the key, and parents it leaves empty that the Struct does not know."""
    parents = [body]
    for seg in segments[:-1]:
        parents.append(parents[-1][seg])
    del parents[-1][segments[-1]]
    for depth in range(len(segments) - 1, 0, -1):
        if parents[depth] or struct_has(struct_type, segments[:depth]):
            break
        del parents[depth - 1][segments[depth - 1]]


def struct_has(struct_type: Any, segments: list[str]) -> bool:
    """Whether the Struct accepts the key path (a mapping field accepts any key below it)."""
    tp = unwrap_type(struct_type)
    for seg in segments:
        if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            if seg not in tp.__struct_fields__ and seg != tp.__struct_config__.tag_field:
                return False
            tp = unwrap_type(typing.get_type_hints(tp).get(seg, Any))
        elif typing.get_origin(tp) is dict or tp is Any:
            return True
        else:
            structs = [a for a in typing.get_args(tp) if isinstance(a, type) and issubclass(a, msgspec.Struct)]
            if not structs:
                return True
            tp = structs[0]
            if seg not in tp.__struct_fields__ and seg != tp.__struct_config__.tag_field:
                return False
            tp = unwrap_type(typing.get_type_hints(tp).get(seg, Any))
    return True
