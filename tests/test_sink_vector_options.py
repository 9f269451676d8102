"""Vector's sink keys doing what they do in Vector, on the wire of real receivers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from logagent.acks import AckGroup, Batch
from logagent.builders import new_inbox
from logagent.config import ConfigError, parse_config
from logagent.queue import DroppingQueue
from logagent.sinks.console import ConsoleSink, ConsoleSinkConfig
from logagent.sinks.elasticsearch.sink import ElasticsearchSink, ElasticsearchSinkConfig
from logagent.sinks.http.sink import HttpSinkConfig
from logagent.sinks.loki.sink import LokiSink, LokiSinkConfig
from receivers.backends import BackendReceiver, bulk_pairs
from receivers.ndjson import Receiver
from tests.agent_process import offline_config
from tests.logwriter import format_line, pod_dir_name
from tests.test_sink_backends import FAST, Acks, context, events_of, make
from tests.test_sink_http import run_sink

REPO = Path(__file__).resolve().parent.parent
STAMP_NS = 1796205600_000000001  # 2026-12-02T10:00:00.000000001Z


@pytest.fixture
async def servers():
    made: list[Receiver] = []

    async def start(kind: str | None = None, **options) -> Receiver:
        receiver = BackendReceiver(kind=kind, **options) if kind else Receiver(**options)
        await receiver.start()
        made.append(receiver)
        return receiver

    yield start
    for server in made:
        await server.stop()


def sink_config(text: str):
    """The one sink of a config written as a Vector user writes it."""
    config = parse_config("sources: {k: {type: kubernetes_logs}}\nsinks:\n  out: " + text + "\n", {})
    return config.sinks["out"]


# ---------------------------------------------------------------- encoding


async def test_console_only_fields_and_unix_timestamp_are_what_is_written(tmp_path):
    path = tmp_path / "out.ndjson"
    config = sink_config("{type: console, inputs: [k], encoding: {codec: json, only_fields: [message, timestamp, "
                         "kubernetes.pod_name], timestamp_format: unix}}")
    assert isinstance(config, ConsoleSinkConfig)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        sink = ConsoleSink("out", config, fd=fd)
        inbox = new_inbox(config)
        await inbox.put(Batch(events_of(context("shop", "web"), ["a", "b"]), [AckGroup()], 2))
        inbox.close()
        await sink.run(inbox)
        await sink.stop()
    finally:
        os.close(fd)
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert records == [{"message": "a", "timestamp": 1796205600, "kubernetes": {"pod_name": "web"}},
                       {"message": "b", "timestamp": 1796205601, "kubernetes": {"pod_name": "web"}}]


async def test_http_except_fields_and_unix_ms_on_the_wire(servers):
    receiver = await servers()
    config = sink_config(f"{{type: http, inputs: [k], uri: '{receiver.url}', encoding: {{codec: json, "
                         "except_fields: [kubernetes.pod_labels, file], timestamp_format: unix_ms}, "
                         "framing: {method: newline_delimited}, batch: {timeout_secs: 0.05}}")
    assert isinstance(config, HttpSinkConfig) and config.body_format == "ndjson"
    acks = Acks()
    await run_sink(config, [acks.batch(events_of(context("shop", "web"), ["a", "b"]))])
    records = [record for entry in receiver.accepted for record in entry.records()]
    assert [r["message"] for r in records] == ["a", "b"]
    assert [r["timestamp"] for r in records] == [STAMP_NS // 10**6, STAMP_NS // 10**6 + 1000]
    assert all("file" not in r and "pod_labels" not in r["kubernetes"] and r["kubernetes"]["pod_name"] == "web"
               for r in records)
    assert acks.done == acks.made == 1


async def test_http_json_codec_without_framing_is_an_array_with_payload_prefix(servers):
    receiver = await servers()
    config = sink_config(f"{{type: http, inputs: [k], uri: '{receiver.url}', encoding: {{codec: json}}, "
                         "payload_prefix: '{\"data\":', payload_suffix: '}', batch: {timeout_secs: 0.05}}")
    await run_sink(config, [Acks().batch(events_of(context("shop", "web"), ["a", "b"]))])
    (entry,) = receiver.accepted
    assert entry.headers["Content-Type"] == "application/json"
    assert [r["message"] for r in json.loads(entry.body)["data"]] == ["a", "b"]


async def test_http_text_codec_sends_the_messages(servers):
    receiver = await servers()
    config = sink_config(f"{{type: http, inputs: [k], uri: '{receiver.url}', encoding: {{codec: text}}, "
                         "batch: {timeout_secs: 0.05}}")
    await run_sink(config, [Acks().batch(events_of(context("shop", "web"), ["first line", "second"]))])
    (entry,) = receiver.accepted
    assert entry.body == b"first line\nsecond\n" and entry.headers["Content-Type"].startswith("text/plain")


# ---------------------------------------------------------------- elasticsearch


async def test_elasticsearch_query_pipeline_id_key_and_v6_type(servers, tmp_path):
    receiver = await servers("elasticsearch")
    base = receiver.url.rsplit("/", 1)[0]
    config = make(ElasticsearchSinkConfig, inputs=["in"], endpoints=[base], api_version="v6",
                  query={"_msg_field": "message", "_stream_fields": "kubernetes.pod_name"}, pipeline="parse",
                  id_key="request_id", **FAST)
    ctx = context("shop", "web")
    ctx.fields["request_id"] = "r-1"
    sink = ElasticsearchSink("es", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events_of(ctx, ["a"]))], sink=sink)
    (entry,) = receiver.accepted
    assert sorted(entry.query.split("&")) == ["_msg_field=message", "_stream_fields=kubernetes.pod_name", "pipeline=parse"]
    ((action, document),) = bulk_pairs(entry.body)
    assert action == {"index": {"_type": "_doc", "_index": "logagent-2026.12.02", "_id": "r-1"}}
    assert "request_id" not in document and document["message"] == "a"


@pytest.mark.parametrize("version, doc_type", [("6.8.23", "_doc"), ("7.17.0", None), ("8.11.1", None)])
async def test_elasticsearch_api_version_auto_asks_the_cluster(servers, tmp_path, version, doc_type):
    receiver = await servers("elasticsearch", es_version=version)
    config = make(ElasticsearchSinkConfig, inputs=["in"], endpoints=[receiver.url.rsplit("/", 1)[0]], **FAST)
    sink = ElasticsearchSink("es", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events_of(context("shop", "web"), ["a"]))], sink=sink)
    assert [path for path, _ in receiver.probes] == ["/"]
    ((action, _),) = bulk_pairs(receiver.accepted[0].body)
    assert action["index"].get("_type") == doc_type


# ---------------------------------------------------------------- loki


def loki_lines(receiver: BackendReceiver) -> list[tuple[dict, str, str]]:
    return [(stream["stream"], value[0], value[1]) for entry in receiver.accepted
            for stream in json.loads(entry.body)["streams"] for value in stream["values"]]


async def test_loki_remove_label_fields_and_timestamp_keep_the_labels(servers, tmp_path):
    receiver = await servers("loki")
    config = make(LokiSinkConfig, inputs=["in"], endpoint=receiver.url.rsplit("/", 1)[0],
                  labels={"namespace": "{{ kubernetes.pod_namespace }}"}, remove_label_fields=True,
                  remove_timestamp=True, encoding={"codec": "json", "except_fields": ["file"]}, **FAST)
    sink = LokiSink("loki", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events_of(context("shop", "web"), ["a"]))], sink=sink)
    ((labels, nanos, line),) = loki_lines(receiver)
    record = json.loads(line)
    assert labels == {"namespace": "shop"} and nanos == str(STAMP_NS)
    assert "timestamp" not in record and "file" not in record and "pod_namespace" not in record["kubernetes"]
    assert record["message"] == "a" and record["kubernetes"]["pod_name"] == "web"


async def test_loki_out_of_order_drop_counts_and_acknowledges(servers, tmp_path):
    receiver = await servers("loki")
    config = make(LokiSinkConfig, inputs=["in"], endpoint=receiver.url.rsplit("/", 1)[0],
                  out_of_order_action="drop", **FAST)
    sink = LokiSink("loki", config, data_dir=tmp_path)
    acks = Acks()
    ctx = context("shop", "web")
    newer, older = events_of(ctx, ["new"], second=30), events_of(ctx, ["old"], second=1)
    await run_sink(None, [acks.batch(newer), acks.batch(older)], sink=sink)
    assert [json.loads(line)["message"] for _, _, line in loki_lines(receiver)] == ["new"]
    assert sink.out_of_order_dropped_events == 1 and sink.dropped_events["out_of_order"] == 1
    assert acks.done == acks.made == 2


# ---------------------------------------------------------------- buffer


async def test_drop_newest_drops_counts_and_acknowledges():
    config = sink_config("{type: console, inputs: [k], buffer: {type: memory, max_events: 3, when_full: drop_newest}}")
    inbox = new_inbox(config)
    assert isinstance(inbox, DroppingQueue) and inbox.max_events == 3
    acks = Acks()
    ctx = context("shop", "web")
    for second in range(5):  # two records a batch: the second batch finds the inbox full
        await asyncio.wait_for(inbox.put(acks.batch(events_of(ctx, ["a", "b"], second=2 * second))), 1)
    assert len(inbox) == 2 and inbox.dropped_events == 6 and inbox.dropped_batches == 3
    assert acks.done == 3  # dropped batches are acknowledged at once: their files read on


def test_block_and_disk_buffers_keep_backpressure():
    for text in ("buffer: {type: memory, max_events: 50}", "buffer: {type: disk, max_size: 268435488}"):
        inbox = new_inbox(sink_config("{type: console, inputs: [k], " + text + "}"))
        assert not isinstance(inbox, DroppingQueue)
    assert new_inbox(sink_config("{type: console, inputs: [k], buffer: {max_events: 50}}")).max_events == 50


@pytest.mark.parametrize("text, message", [
    ("buffer: {type: disk, max_size: 1000, when_full: drop_newest}", "sinks.out.buffer.when_full: drop_newest cannot be honoured with type disk"),
    ("buffer: [{type: memory}, {type: disk, max_size: 1000}]", "sinks.out.buffer: chained buffers"),
    ("encoding: {codec: avro}", "sinks.out.encoding.codec: avro is not supported"),
    ("encoding: {codec: json, only_fields: [a], except_fields: [b]}", "sinks.out.encoding.except_fields: set only_fields or except_fields"),
    ("healthcheck: {uri: 'http://x/'}", "sinks.out.healthcheck.uri: the console has no destination"),
])
def test_keys_that_cannot_be_honoured_say_why(text, message):
    with pytest.raises(ConfigError) as caught:
        sink_config("{type: console, inputs: [k], " + text + "}")
    assert str(caught.value).startswith(message), str(caught.value)


# ---------------------------------------------------------------- healthchecks


def write_pod(log_dir: Path) -> None:
    directory = log_dir / pod_dir_name("shop", "web", "uid-web") / "app"
    directory.mkdir(parents=True)
    (directory / "0.log").write_bytes(b"".join(format_line("shop/web", i, 50) for i in range(10)))


async def run_agent(config: Path) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "logagent", "run", "--config", str(config),
                                                "--once", cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, stderr = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode, stderr.decode()


async def test_unhealthy_sink_with_require_healthy_exits_before_reading(servers, tmp_path):
    receiver = await servers("elasticsearch", health_status=503)
    write_pod(tmp_path / "pods")
    sink = f"  out:\n    type: elasticsearch\n    inputs: [pods]\n    endpoints: ['{receiver.url.rsplit('/', 1)[0]}']\n"
    config = offline_config(tmp_path, tmp_path / "pods", sink=sink, extra="")
    config.write_text("healthchecks: {require_healthy: true}\n" + config.read_text())
    code, stderr = await run_agent(config)
    assert code == 78, stderr[-2000:]
    assert "sinks.out: GET " in stderr and "/_cluster/health: answered 503" in stderr
    assert not receiver.received and "started" not in stderr.split("sinks unhealthy")[0]


async def test_unhealthy_sink_without_require_healthy_logs_and_delivers(servers, tmp_path):
    receiver = await servers("loki", health_status=503)
    write_pod(tmp_path / "pods")
    sink = f"  out:\n    type: loki\n    inputs: [pods]\n    endpoint: '{receiver.url.rsplit('/', 1)[0]}'\n"
    code, stderr = await run_agent(offline_config(tmp_path, tmp_path / "pods", sink=sink))
    assert code == 0, stderr[-2000:]
    assert "healthcheck failed" in stderr and "/ready: answered 503" in stderr
    assert receiver.accepted_records == 10
    assert [path for path, _ in receiver.probes] == ["/ready"]


def test_healthcheck_disabled_makes_no_check():
    from logagent.sinks.healthcheck import check_uri

    assert check_uri(sink_config("{type: loki, inputs: [k], endpoint: 'http://l:3100', healthcheck: {enabled: false}}")) is None
    assert check_uri(sink_config("{type: loki, inputs: [k], endpoint: 'http://l:3100', healthcheck: false}")) is None
    assert check_uri(sink_config("{type: http, inputs: [k], uri: 'http://h/'}")) is None
    assert check_uri(sink_config("{type: http, inputs: [k], uri: 'http://h/', healthcheck: {uri: 'http://h/up'}}")) == "http://h/up"
    assert msgspec.structs.asdict(parse_config("healthchecks: {enabled: false}\n", {}).healthchecks) == {
        "enabled": False, "require_healthy": False}


# ---------------------------------------------------------------- opentelemetry, Vector's codec json


async def test_opentelemetry_codec_json_sends_the_records_as_vector_does(servers, tmp_path):
    """pganalyze's config: a remap shapes each record as an OTLP ResourceLogs; the sink wraps them in
    {"resourceLogs": [...]} with payload_prefix/suffix, and the Collector parses that."""
    from logagent.event import FileContext, LogEvent
    from logagent.sinks.opentelemetry.sink import OpentelemetrySink
    from receivers.backends import otlp_request

    receiver = await servers("opentelemetry")
    config = sink_config(
        f"{{type: opentelemetry, inputs: [k], protocol: {{type: http, uri: '{receiver.url}', method: post, "
        "encoding: {codec: json}, framing: {method: character_delimited, character_delimited: {delimiter: ','}}, "
        "payload_prefix: '{\"resourceLogs\":', payload_suffix: '}', batch: {timeout_secs: 0.05}, "
        "request: {headers: {content-type: application/json}}}}")
    shaped = FileContext({"resource": {"attributes": [{"key": "k8s.pod.name", "value": {"stringValue": "web"}}]}})
    events = [LogEvent(None, None, None, shaped, fields={"scopeLogs": [{"logRecords": [{"body": {"stringValue": m}}]}]})
              for m in ("a", "b")]
    sink = OpentelemetrySink("otel", config, data_dir=tmp_path)
    await run_sink(None, [Batch(events, [AckGroup()], 100)], sink=sink)
    (entry,) = receiver.accepted
    content_types = [v for k, v in entry.headers.items() if k.lower() == "content-type"]
    assert content_types == ["application/json"], entry.headers
    request = otlp_request(entry)
    assert [r.body.string_value for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records] == ["a", "b"]
    assert request.resource_logs[0].resource.attributes[0].value.string_value == "web"


def test_tls_minimum_version_and_ciphers_reach_the_context():
    import ssl

    from logagent.sinks.http.tls import build_ssl_context

    config = sink_config("{type: http, inputs: [k], uri: 'https://h/', tls: {min_tls_version: VersionTLS12, "
                         "ciphersuites: 'TLS_AES_128_GCM_SHA256,ECDHE-RSA-AES128-GCM-SHA256', verify_certificate: false}}")
    context = build_ssl_context(config.tls)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2 and context.verify_mode == ssl.CERT_NONE
    assert {c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"} == {"ECDHE-RSA-AES128-GCM-SHA256"}


async def test_loki_label_expansion_as_vector_writes_it(servers, tmp_path):
    receiver = await servers("loki")
    config = sink_config(f"{{type: loki, inputs: [k], endpoint: '{receiver.url.rsplit('/', 1)[0]}', labels: "
                         "{'\"pod_labels_*\"': '{{ kubernetes.pod_labels }}', ns: '{{ kubernetes.pod_namespace }}'}, "
                         "batch: {timeout_secs: 0.05}}")
    sink = LokiSink("loki", config, data_dir=tmp_path)
    ctx = context("shop", "web", labels={"app.kubernetes.io/name": "web", "tier": "front", "n": 3})
    await run_sink(None, [Acks().batch(events_of(ctx, ["a"]))], sink=sink)
    ((labels, _, _),) = loki_lines(receiver)
    assert labels == {"ns": "shop", "pod_labels_app_kubernetes_io_name": "web", "pod_labels_tier": "front", "pod_labels_n": "3"}


def test_loki_label_expansion_takes_one_object_field():
    with pytest.raises(ConfigError, match="a key ending in \\* takes one object field"):
        sink_config("{type: loki, inputs: [k], endpoint: 'http://l', labels: {'x_*': 'a-{{ kubernetes.pod_labels }}'}}")


def test_a_reload_adding_an_unhealthy_sink_fails_when_healthy_sinks_are_required(tmp_path):
    """As Vector: a reload checks the sinks it adds; with require_healthy an unhealthy one keeps the old pipeline."""
    import signal

    from tests.agent_process import AgentProcess
    from tests.test_reload import append, filter_config, records, reload_and_wait, wait_until

    pods = tmp_path / "pods"
    log_file = pods / "ns_pod_uid-1" / "app" / "0.log"
    config = filter_config(tmp_path, pods, 'contains(string!(.message), "a")', extra_top="healthchecks: {require_healthy: true}\n")
    good = config.read_text()
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("started")
            # nothing listens on port 9: the added sink's healthcheck gets no answer
            config.write_text(good + "  ship: {type: http, inputs: [keep], uri: 'http://127.0.0.1:9/', "
                                     "healthcheck: {uri: 'http://127.0.0.1:9/health', timeout: 2}}\n")
            event = reload_and_wait(agent, "config reload failed")
            assert event["error"].startswith("healthchecks failed and healthchecks.require_healthy is set: sinks.ship: GET ")
            append(log_file, ["a after"])
            wait_until(lambda: [r["message"] for r in records(out_path)] == ["a after"], "old pipeline", agent=agent)
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()


def test_a_templated_header_is_refused_not_sent_as_text():
    with pytest.raises(ConfigError, match="sinks.out.request.headers.X-Level: templated header values are not implemented"):
        sink_config("{type: http, inputs: [k], uri: 'http://h/', request: {headers: {X-Level: '{{ level }}'}}}")
