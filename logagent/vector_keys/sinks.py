"""Vector's documented keys of the sinks logagent implements, with their status here.

From Vector's generated reference (``website/cue/reference/components/sinks/generated/*.cue``
and the keys every sink has). Groups every sink shares are written once. A key
whose value decides is listed twice (``same`` and ``refused``) and has its
predicate in ``SINKS_VALUES``. ``SINK_BODIES`` is the least each sink type needs
besides the key under test (what a table-driven test sets first).
"""

from __future__ import annotations

from typing import Any

from logagent.sinks.common_config import PROXY_REFUSED, REFUSED_CODECS
from logagent.vector_keys.model import VectorKey

_ACKS = "every record is acknowledged end to end, whatever this says: a file's checkpoint moves only once every sink it reached has it"
_DISK = "the log files and their checkpoints are the durable buffer: a sink that falls behind makes the sources wait and read on later"
_METRIC_EVENTS = "applies to metric events only; no metric event reaches a log sink here"
_ADAPTIVE = "adaptive concurrency is not implemented; request.concurrency is a fixed number of requests in flight"
_RATE_LIMIT = ("request rate limits are not implemented; limit the requests in flight with request.concurrency "
               "(the sources wait while the sink is busy)")
_AWS = "AWS request signing is not implemented; use basic or bearer credentials (or a signing proxy)"
_CUSTOM_AUTH = "auth strategy custom is not implemented; set the header with request.headers.Authorization"
_FRAMING = ("only newline_delimited framing (one record a line), and character_delimited with \",\" (a JSON "
            "array) where the body is JSON, are implemented")
_UNCONFINED = "templates here render index names, labels and headers, never file paths: there is nothing to confine"
_SERVER_NAME = "not implemented: the name checked and sent (SNI) is the URI's host"


def _common(kind: str) -> tuple[VectorKey, ...]:
    """The keys Vector gives every sink."""
    return (
        VectorKey("type", "same", "", kind),
        VectorKey("inputs", "same", "", None),
        VectorKey("buffer.type", "same", "memory: the sink's inbox", "memory"),
        VectorKey("buffer.type", "accepted", _DISK, "disk"),
        VectorKey("buffer.max_events", "same", "the inbox's size in events (default: the agent's 20000, not Vector's 500)", 500),
        VectorKey("buffer.max_size", "same", "memory: the inbox's size in bytes; disk: accepted (the files are the buffer)", 268435488),
        VectorKey("buffer.when_full", "same", "block: the sources wait (backpressure)", "block"),
        VectorKey("buffer.when_full", "same", "drop_newest: a batch that finds the inbox full is dropped, counted "
                  "(vector_buffer_discarded_events_total) and acknowledged, so its files read on", "drop_newest"),
        VectorKey("healthcheck.enabled", "same", "checked once at start, before any source reads", True),
        VectorKey("healthcheck.timeout", "same", "", 5.0),
        VectorKey("acknowledgements.enabled", "accepted", _ACKS, True),
        VectorKey("graph.node_attributes", "accepted", "only drawn by `vector graph`; nothing to do when running", {"color": "red"}),
        VectorKey("graph.edge_attributes", "accepted", "only drawn by `vector graph`; nothing to do when running", {"in": {"color": "red"}}),
    )


def _proxy() -> tuple[VectorKey, ...]:
    return (
        VectorKey("proxy.enabled", "same", "no proxy is ever used (true without proxy.http/https is the same)", False),
        VectorKey("proxy.http", "refused", PROXY_REFUSED, "http://proxy:3128"),
        VectorKey("proxy.https", "refused", PROXY_REFUSED, "http://proxy:3128"),
        VectorKey("proxy.no_proxy", "accepted", "no proxy is ever used", ["localhost"]),
    )


def _fields(prefix: str = "encoding") -> tuple[VectorKey, ...]:
    return (
        VectorKey(f"{prefix}.only_fields", "same", "applied to the record on the wire (templates still read it whole)",
                  ["message", "kubernetes.pod_name"]),
        VectorKey(f"{prefix}.except_fields", "same", "applied to the record on the wire", ["file"]),
        VectorKey(f"{prefix}.timestamp_format", "same", "", "unix_ms"),
    )


def _codec(prefix: str, codecs: tuple[str, ...], pretty: bool) -> tuple[VectorKey, ...]:
    keys = [VectorKey(f"{prefix}.codec", "same", "", codec) for codec in codecs]
    keys += _refused_codecs(prefix, codecs)
    keys += [
        *_fields(prefix),
        VectorKey(f"{prefix}.metric_tag_values", "accepted", _METRIC_EVENTS, "single"),
    ]
    if pretty:
        keys.append(VectorKey(f"{prefix}.json.pretty", "same", "", True))
    for options in ("avro", "cef", "csv", "gelf", "protobuf", "syslog"):
        if options != "protobuf" or "otlp" not in codecs:
            keys.append(VectorKey(f"{prefix}.{options}", "refused", f"the {options} codec is not supported: "
                                  f"{REFUSED_CODECS[options]}", {}))
    return tuple(keys)


def _refused_codecs(prefix: str, implemented: tuple[str, ...]) -> list[VectorKey]:
    """One refusal per codec (the config refuses each with its own reason, which is the note)."""
    return [VectorKey(f"{prefix}.codec", "refused", f"{codec} is not supported: {why}", codec)
            for codec, why in sorted(REFUSED_CODECS.items()) if codec not in implemented]


def _framing(prefix: str = "framing", json_array: bool = True, refused: str = "") -> tuple[VectorKey, ...]:
    keys = [VectorKey(f"{prefix}.method", "same", "", "newline_delimited")]
    if json_array:
        keys += [
            VectorKey(f"{prefix}.method", "same", "with codec json: a JSON array, as Vector's http sink", "character_delimited"),
            VectorKey(f"{prefix}.character_delimited.delimiter", "same", "\",\" only (a JSON array)", ","),
        ]
    note = refused or _FRAMING
    keys += [
        VectorKey(f"{prefix}.method", "refused", note, "length_delimited"),
        VectorKey(f"{prefix}.length_delimited", "refused", note, {"length_field_length": 4}),
        VectorKey(f"{prefix}.max_frame_length", "refused", note, 8388608),
    ]
    return tuple(keys)


def _batch(prefix: str = "") -> tuple[VectorKey, ...]:
    return tuple(VectorKey(f"{prefix}batch.{name}", "same", "", value)
                 for name, value in (("max_bytes", 1000000), ("max_events", 1000), ("timeout_secs", 2.0)))


def _request(prefix: str = "", headers: bool = True) -> tuple[VectorKey, ...]:
    keys = [
        VectorKey(f"{prefix}request.timeout_secs", "same", "", 60),
        VectorKey(f"{prefix}request.concurrency", "same", "a fixed number of requests in flight", 8),
        VectorKey(f"{prefix}request.concurrency", "accepted", "adaptive runs the default fixed concurrency (4 requests in "
                  "flight); none is 1", "adaptive"),
        VectorKey(f"{prefix}request.retry_attempts", "same", "the same as retry.max_attempts", 10),
        VectorKey(f"{prefix}request.retry_initial_backoff_secs", "same", "the same as retry.initial_backoff_secs", 1),
        VectorKey(f"{prefix}request.retry_max_duration_secs", "same", "the same as retry.max_backoff_secs", 30),
        VectorKey(f"{prefix}request.retry_jitter_mode", "same", "Full: full-jitter backoff (the only mode here)", "Full"),
        VectorKey(f"{prefix}request.retry_jitter_mode", "refused", "only full-jitter backoff (Full) is implemented", "None"),
        VectorKey(f"{prefix}request.rate_limit_num", "refused", _RATE_LIMIT, 100),
        VectorKey(f"{prefix}request.rate_limit_duration_secs", "same", "only with rate_limit_num, which is refused", 1),
        VectorKey(f"{prefix}request.adaptive_concurrency", "refused", _ADAPTIVE, {"initial_concurrency": 2}),
    ]
    if headers:
        keys.append(VectorKey(f"{prefix}request.headers", "same", "fixed values; a templated value is refused (a "
                              "request carries many records)", {"X-Source": "logagent"}))
    return tuple(keys)


def _tls(prefix: str = "") -> tuple[VectorKey, ...]:
    return (
        VectorKey(f"{prefix}tls.ca_file", "same", "", "/etc/tls/ca.crt"),
        VectorKey(f"{prefix}tls.crt_file", "same", "", "/etc/tls/tls.crt"),
        VectorKey(f"{prefix}tls.key_file", "same", "", "/etc/tls/tls.key"),
        VectorKey(f"{prefix}tls.key_pass", "same", "", "secret"),
        VectorKey(f"{prefix}tls.alpn_protocols", "same", "", ["http/1.1"]),
        VectorKey(f"{prefix}tls.verify_certificate", "same", "false also turns off verify_hostname's check", True),
        VectorKey(f"{prefix}tls.verify_hostname", "same", "", True),
        VectorKey(f"{prefix}tls.server_name", "refused", _SERVER_NAME, "es.internal"),
        VectorKey(f"{prefix}tls.min_tls_version", "same", "the OpenShift logging operator's Vector", "VersionTLS12"),
        VectorKey(f"{prefix}tls.ciphersuites", "same", "the OpenShift logging operator's Vector; TLS 1.3 suites are "
                  "the TLS library's", "ECDHE-RSA-AES128-GCM-SHA256"),
    )


def _auth(prefix: str = "", extra: bool = True) -> tuple[VectorKey, ...]:
    keys = [
        VectorKey(f"{prefix}auth.strategy", "same", "basic or bearer", "bearer"),
        VectorKey(f"{prefix}auth.strategy", "refused", _AWS, "aws"),
        VectorKey(f"{prefix}auth.user", "same", "", "agent"),
        VectorKey(f"{prefix}auth.password", "same", "", "s3cret"),
        VectorKey(f"{prefix}auth.token", "same", "", "t0ken"),
    ]
    if extra:
        keys += [
            VectorKey(f"{prefix}auth.value", "refused", _CUSTOM_AUTH, "Custom x"),
            VectorKey(f"{prefix}auth.service", "refused", _AWS, "es"),
            VectorKey(f"{prefix}auth.auth", "refused", _AWS, {"region": "us-east-1"}),
        ]
    return tuple(keys)


def _http_common(prefix: str = "") -> tuple[VectorKey, ...]:
    return (
        VectorKey(f"{prefix}compression", "same", "", "gzip"),
        VectorKey(f"{prefix}compression", "refused", "snappy and zlib are not implemented here; use gzip or zstd", "zlib"),
        *_batch(prefix),
        *_request(prefix),
        *_tls(prefix),
        VectorKey(f"{prefix}dangerously_allow_unconfined_template_resolution", "accepted", _UNCONFINED, True),
    )


_RETRY_STRATEGY = (
    VectorKey("retry_strategy.type", "same", "default: 408, 429 and 5xx are retried", "default"),
    VectorKey("retry_strategy.type", "refused", "retry strategies other than default are not implemented: 408, 429 "
              "and 5xx answers are retried, other answers go to the dead-letter file", "all"),
    VectorKey("retry_strategy.status_codes", "refused", "retry strategies other than default are not implemented: "
              "408, 429 and 5xx answers are retried, other answers go to the dead-letter file", [503]),
)

_CONSOLE = (
    *_common("console"),
    VectorKey("healthcheck.uri", "refused", "the console has no destination to check", "http://localhost/health"),
    VectorKey("target", "same", "", "stderr"),
    *_codec("encoding", ("json", "text"), pretty=True),
    VectorKey("encoding.codec", "accepted", "raw_message is the message alone, as text", "raw_message"),
    *_framing(json_array=False, refused="the console writes one record a line (newline_delimited)"),
    VectorKey("framing.method", "refused", "the console writes one record a line (newline_delimited)", "character_delimited"),
)

_HTTP = (
    *_common("http"),
    *_proxy(),
    VectorKey("healthcheck.uri", "same", "GET at start; no check without it, as in Vector", "http://collector/health"),
    VectorKey("uri", "same", "", "http://collector:8080/logs"),
    VectorKey("method", "same", "post or put", "put"),
    VectorKey("method", "refused", "only post and put send a body of records", "get"),
    *_codec("encoding", ("json", "text"), pretty=False),
    VectorKey("encoding.json.pretty", "refused", "a pretty-printed record spans lines; the http sink sends one record "
              "a line or a compact array", True),
    *_framing(),
    VectorKey("payload_prefix", "same", "with a JSON array body (codec json without framing)", '{"data":'),
    VectorKey("payload_suffix", "same", "", "}"),
    *_RETRY_STRATEGY,
    *_auth(),
    *_http_common(),
)

_ES_REFUSED_VERSION = ("external document versioning is not implemented; documents are written with "
                       "Elasticsearch's internal versioning")

_ELASTICSEARCH = (
    *_common("elasticsearch"),
    *_proxy(),
    VectorKey("healthcheck.uri", "same", "replaces GET <endpoint>/_cluster/health", "http://es:9200/_cluster/health"),
    VectorKey("endpoints", "same", "", ["http://es-1:9200", "http://es-2:9200"]),
    VectorKey("endpoint", "same", "the same as endpoints: [<it>]", "http://es:9200"),
    VectorKey("mode", "same", "", "data_stream"),
    VectorKey("api_version", "same", "auto reads the version from GET / at start; v6 sends _type (doc_type)", "v6"),
    VectorKey("doc_type", "same", "sent with api_version v6 (or an auto-detected 6)", "_doc"),
    VectorKey("suppress_type_name", "same", "", True),
    VectorKey("query", "same", "URL parameters of every _bulk request", {"_msg_field": "message"}),
    VectorKey("query.*", "same", "Vector's {value} form too; type vrl is refused", {"value": "message", "type": "string"}),
    VectorKey("query.*", "refused", "vrl query values are not supported; give the value itself", {"value": ".a", "type": "vrl"}),
    VectorKey("pipeline", "same", "sent as ?pipeline=", "parse-logs"),
    VectorKey("id_key", "same", "a string field becomes _id and leaves the document", "request_id"),
    VectorKey("bulk.index", "same", "", "logs-{{ kubernetes.pod_namespace }}-%Y.%m.%d"),
    VectorKey("bulk.action", "same", "index or create", "create"),
    VectorKey("bulk.version", "refused", _ES_REFUSED_VERSION, "{{ version }}"),
    VectorKey("bulk.version_type", "same", "internal", "internal"),
    VectorKey("bulk.version_type", "refused", _ES_REFUSED_VERSION, "external"),
    VectorKey("bulk.template_fallback_index", "refused", "not implemented: a record whose index does not render goes "
              "to the dead-letter file with the reason", "logs-fallback"),
    VectorKey("data_stream.type", "same", "", "logs"),
    VectorKey("data_stream.dataset", "same", "", "kubernetes"),
    VectorKey("data_stream.namespace", "same", "", "{{ kubernetes.pod_namespace }}"),
    VectorKey("data_stream.auto_routing", "same", "false (ours by default; Vector's default is true)", False),
    VectorKey("data_stream.auto_routing", "refused", "not implemented: documents go to the data stream named by "
              "data_stream.type/dataset/namespace and are not changed; set it to false", True),
    VectorKey("data_stream.sync_fields", "same", "false (ours by default; Vector's default is true)", False),
    VectorKey("data_stream.sync_fields", "refused", "not implemented: documents go to the data stream named by "
              "data_stream.type/dataset/namespace and are not changed; set it to false", True),
    VectorKey("distribution.retry_initial_backoff_secs", "same", "", 2),
    VectorKey("distribution.retry_max_duration_secs", "same", "", 600),
    *_fields(),
    VectorKey("request_retry_partial", "accepted", "items answered 429 or 5xx are always sent again, the others go to "
              "the dead-letter file", True),
    VectorKey("opensearch_service_type", "same", "managed", "managed"),
    VectorKey("opensearch_service_type", "refused", "serverless needs AWS request signing, which is not implemented",
              "serverless"),
    VectorKey("metrics", "accepted", _METRIC_EVENTS, {"host_tag": "host"}),
    *_auth(extra=False),
    VectorKey("auth.access_key_id", "refused", _AWS, "AKIAIOSFODNN7EXAMPLE"),
    VectorKey("auth.region", "refused", _AWS, "us-east-1"),
    *_http_common(),
)

_LOKI = (
    *_common("loki"),
    *_proxy(),
    VectorKey("healthcheck.uri", "same", "replaces GET <endpoint>/ready", "http://loki:3100/ready"),
    VectorKey("endpoint", "same", "", "http://loki:3100"),
    VectorKey("path", "same", "", "/loki/api/v1/push"),
    VectorKey("labels", "same", "templates", {"namespace": "{{ kubernetes.pod_namespace }}"}),
    VectorKey("labels", "same", "a key ending in * takes every key of an object field (characters Loki refuses "
              "in a label name become _)", {'"pod_labels_*"': "{{ kubernetes.pod_labels }}"}),
    VectorKey("structured_metadata", "same", "", {"pod": "{{ kubernetes.pod_name }}"}),
    VectorKey("tenant_id", "same", "a static tenant (templates are refused)", "team-a"),
    VectorKey("out_of_order_action", "same", "drop: counted as out_of_order and acknowledged", "drop"),
    VectorKey("remove_label_fields", "same", "", True),
    VectorKey("remove_structured_metadata_fields", "same", "", True),
    VectorKey("remove_timestamp", "same", "Vector's default is true, ours false (the line keeps its timestamp)", True),
    *_codec("encoding", ("json", "text"), pretty=False),
    VectorKey("encoding.json.pretty", "refused", "a Loki line is one line", True),
    *_auth(),
    *_http_common(),
)

_OTLP = "protocol."
_OPENTELEMETRY = (
    *_common("opentelemetry"),
    *_proxy(),
    VectorKey("healthcheck.uri", "same", "GET at start; no check without it, as in Vector", "http://collector:13133/"),
    VectorKey("protocol.type", "same", "http (OTLP/HTTP)", "http"),
    VectorKey("protocol.uri", "same", "", "http://collector:4318/v1/logs"),
    VectorKey("protocol.method", "same", "post", "post"),
    VectorKey("protocol.encoding.codec", "same", "OTLP/protobuf, built from the record (Vector needs an OTLP-shaped event)", "otlp"),
    VectorKey("protocol.encoding.codec", "same", "OTLP/protobuf (the protobuf options must name ExportLogsServiceRequest)", "protobuf"),
    VectorKey("protocol.encoding.codec", "same", "the records themselves as JSON, as Vector sends them (OTLP-shaped by "
              "a remap transform): a JSON array (with payload_prefix/suffix), or ndjson with newline framing", "json"),
    *_refused_codecs("protocol.encoding", ("otlp", "protobuf", "json")),
    VectorKey("protocol.encoding.protobuf", "same", "", {"desc_file": "/etc/otlp.desc", "use_json_names": False,
              "message_type": "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest"}),
    *_fields("protocol.encoding"),
    VectorKey("protocol.headers", "same", "the same as protocol.request.headers", {"X-Tenant": "a"}),
    *_framing("protocol.framing"),
    VectorKey("protocol.payload_prefix", "same", "with codec json", '{"resourceLogs":'),
    VectorKey("protocol.payload_suffix", "same", "with codec json", "}"),
    VectorKey("protocol.acknowledgements.enabled", "accepted", _ACKS, True),
    VectorKey("protocol.retry_strategy", "refused", "retry strategies other than default are not implemented: 408, 429 "
              "and 5xx answers are retried, other answers go to the dead-letter file", {"type": "all"}),
    *_http_common(_OTLP),
    *_auth(_OTLP),
)

_PROMETHEUS_EXPORTER = (
    *_common("prometheus_exporter"),
    VectorKey("healthcheck.uri", "refused", "the exporter has no destination to check", "http://localhost/health"),
    VectorKey("address", "same", "serves metrics only (never a record), so a network address is fine", "0.0.0.0:9090"),
    VectorKey("auth.strategy", "same", "what a scrape must send: basic or bearer", "bearer"),
    VectorKey("auth.token", "same", "", "scrape-token"),
    VectorKey("auth.user", "same", "", "prometheus"),
    VectorKey("auth.password", "same", "", "s3cret"),
    VectorKey("auth.strategy", "refused", _AWS, "aws"),
    VectorKey("buckets", "refused", "not implemented: Vector builds these from metric events; the agent's own "
              "histograms keep their buckets (leave buckets, quantiles, distributions_as_summaries unset)", [0.1, 1.0]),
    VectorKey("quantiles", "refused", "not implemented: Vector builds these from metric events; the agent's own "
              "histograms keep their buckets (leave buckets, quantiles, distributions_as_summaries unset)", [0.5]),
    VectorKey("distributions_as_summaries", "same", "false", False),
    VectorKey("flush_period_secs", "accepted", "metrics are read live at each scrape, so none goes stale", 60),
    VectorKey("suppress_timestamp", "accepted", "samples never carry timestamps here (Prometheus stamps them at the scrape)", True),
    VectorKey("default_namespace", "accepted", "every metric here has a namespace (logagent_, or the source's)", "service"),
    VectorKey("tls.enabled", "same", "serves HTTPS with crt_file and key_file", False),
    VectorKey("tls.crt_file", "same", "", "/etc/tls/tls.crt"),
    VectorKey("tls.key_file", "same", "", "/etc/tls/tls.key"),
    VectorKey("tls.key_pass", "same", "", "secret"),
    VectorKey("tls.ca_file", "same", "scrapers must show a certificate it signed", "/etc/tls/ca.crt"),
    VectorKey("tls.verify_certificate", "same", "false: a scraper's certificate is asked for, not required", True),
    VectorKey("tls.verify_hostname", "accepted", "a server checks no host name", True),
    VectorKey("tls.alpn_protocols", "same", "", ["http/1.1"]),
    VectorKey("tls.min_tls_version", "same", "the OpenShift logging operator's Vector", "VersionTLS12"),
    VectorKey("tls.ciphersuites", "same", "the OpenShift logging operator's Vector", "ECDHE-RSA-AES128-GCM-SHA256"),
    VectorKey("tls.server_name", "refused", "not implemented for the exporter (it is the server)", "metrics.local"),
)

#: component type -> its Vector keys
SINKS_KEYS: dict[str, tuple[VectorKey, ...]] = {
    "console": _CONSOLE,
    "http": _HTTP,
    "elasticsearch": _ELASTICSEARCH,
    "loki": _LOKI,
    "opentelemetry": _OPENTELEMETRY,
    "prometheus_exporter": _PROMETHEUS_EXPORTER,
}

def _values(kind: str) -> dict[str, Any]:
    values: dict[str, Any] = {
        "framing.method": lambda v: v in ("newline_delimited", "character_delimited"),
        "request.retry_jitter_mode": lambda v: v == "Full",
        "compression": lambda v: v not in ("snappy", "zlib"),
    }
    return values


#: type -> path -> whether a value is one the same/accepted entries stand for (others get the refused note)
SINKS_VALUES: dict[str, dict[str, Any]] = {kind: _values(kind) for kind in SINKS_KEYS}
SINKS_VALUES["http"]["method"] = lambda v: v in ("post", "put")
SINKS_VALUES["elasticsearch"].update({
    "bulk.version_type": lambda v: v == "internal",
    "data_stream.auto_routing": lambda v: v is False,
    "data_stream.sync_fields": lambda v: v is False,
    "opensearch_service_type": lambda v: v == "managed",
    "auth.strategy": lambda v: v in ("basic", "bearer"),
})
for _kind in ("http", "loki", "prometheus_exporter"):
    SINKS_VALUES[_kind]["auth.strategy"] = lambda v: v in ("basic", "bearer")
SINKS_VALUES["console"]["framing.method"] = lambda v: v == "newline_delimited"
SINKS_VALUES["opentelemetry"]["protocol.framing.method"] = lambda v: v in ("newline_delimited", "character_delimited")
SINKS_VALUES["http"]["retry_strategy.type"] = lambda v: v == "default"
SINKS_VALUES["opentelemetry"].update({
    "protocol.compression": lambda v: v not in ("snappy", "zlib"),
    "protocol.request.retry_jitter_mode": lambda v: v == "Full",
    "protocol.auth.strategy": lambda v: v in ("basic", "bearer"),
})

#: what each sink type needs besides the key under test (and its inputs)
SINK_BODIES: dict[str, dict[str, Any]] = {
    "console": {},
    "http": {"uri": "http://collector:8080/logs"},
    "elasticsearch": {"endpoints": ["http://es:9200"]},
    "loki": {"endpoint": "http://loki:3100"},
    "opentelemetry": {"protocol": {"type": "http", "uri": "http://collector:4318/v1/logs"}},
    "prometheus_exporter": {},
}

_CODEC_JSON = {"encoding": {"codec": "json"}}

#: (type, key) -> what else that key needs set to load (Vector needs the same companions)
SINK_COMPANIONS: dict[tuple[str, str], dict[str, Any]] = {
    **{(kind, f"encoding.{name}"): _CODEC_JSON for kind in ("console", "http")
       for name in ("only_fields", "except_fields", "timestamp_format", "metric_tag_values", "json.pretty")},
    ("http", "framing.method"): _CODEC_JSON,
    ("http", "payload_prefix"): {"encoding": "json"},
    ("http", "payload_suffix"): {"encoding": "json"},
    ("elasticsearch", "endpoint"): {"endpoints": []},
    ("opentelemetry", "protocol.encoding.protobuf"): {"protocol": {"encoding": {"codec": "protobuf"}}},
    **{("opentelemetry", f"protocol.{name}"): {"protocol": {"encoding": {"codec": "json"}}}
       for name in ("encoding.only_fields", "encoding.except_fields", "encoding.timestamp_format", "framing.method",
                    "framing.character_delimited.delimiter", "payload_prefix", "payload_suffix")},
    ("http", "framing.character_delimited.delimiter"): {**_CODEC_JSON, "framing": {"method": "character_delimited"}},
    ("opentelemetry", "protocol.framing.character_delimited.delimiter"): {
        "protocol": {"encoding": {"codec": "json"}, "framing": {"method": "character_delimited"}}},
    ("prometheus_exporter", "tls.enabled"): {},
    **{("prometheus_exporter", f"tls.{name}"): {"tls": {"crt_file": "/etc/tls/tls.crt"}}
       for name in ("key_file",)},
    **{(kind, f"{prefix}tls.key_file"): {f"{prefix}tls": {"crt_file": "/etc/tls/tls.crt"}}
       for kind in SINKS_KEYS for prefix in ("", "protocol.")},
    **{(kind, f"{prefix}auth.{name}"): {f"{prefix}auth": auth} for kind in SINKS_KEYS for prefix in ("", "protocol.")
       for name, auth in (("strategy", {"token": "t0ken"}), ("token", {"strategy": "bearer"}),
                          ("user", {"strategy": "basic", "password": "p"}), ("password", {"strategy": "basic", "user": "u"}))},
}

#: the global keys that belong to the sinks (listed with the globals)
HEALTHCHECKS_KEYS: tuple[VectorKey, ...] = (
    VectorKey("healthchecks.enabled", "same", "false: no sink is checked at start", False),
    VectorKey("healthchecks.require_healthy", "same", "a failed check stops the start (exit 78) before any source reads", True),
)
