"""The elasticsearch, loki and opentelemetry sinks against receivers that check their wire formats."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from logagent.acks import AckGroup, Batch
from logagent.event import FileContext, LogEvent
from logagent.sinks.elasticsearch.sink import ElasticsearchSink, ElasticsearchSinkConfig
from logagent.sinks.http.dead_letter import dead_letter_path
from logagent.sinks.http.config import BatchConfig, RequestConfig, RetryConfig
from logagent.sinks.loki.sink import LokiSink, LokiSinkConfig
from logagent.sinks.opentelemetry.sink import OpentelemetrySink, OpentelemetrySinkConfig
from receivers.backends import BackendReceiver, bulk_pairs, otlp_request
from tests.test_sink_http import run_sink

FAST = {"retry": RetryConfig(initial_backoff_secs=0.01, max_backoff_secs=0.05),
        "batch": BatchConfig(max_events=100, timeout_secs=0.05)}


def make(cls, **options):
    """A config as the YAML loader builds it, from plain values."""
    return msgspec.convert(msgspec.to_builtins(options), cls)


async def started(kind: str, **options) -> BackendReceiver:
    receiver = BackendReceiver(kind=kind, **options)
    await receiver.start()
    return receiver


@pytest.fixture
async def servers():
    made: list[BackendReceiver] = []

    async def make(kind: str, **options) -> BackendReceiver:
        made.append(await started(kind, **options))
        return made[-1]

    yield make
    for server in made:
        await server.stop()


def context(namespace: str, pod: str, container: str = "app", labels: dict | None = None) -> FileContext:
    return FileContext({
        "file": f"/var/log/pods/{namespace}_{pod}_uid-{pod}/{container}/0.log",
        "source_type": "kubernetes_logs",
        "kubernetes": {"pod_name": pod, "pod_namespace": namespace, "container_name": container,
                       "pod_uid": f"uid-{pod}", "pod_node_name": "node-1", "pod_labels": labels or {"app": pod}},
    })


class Acks:
    def __init__(self) -> None:
        self.made = 0
        self.done = 0

    def batch(self, events: list[LogEvent]) -> Batch:
        self.made += 1
        return Batch(events, [AckGroup(on_done=self._done)], sum(len(e.message) for e in events))

    def _done(self) -> None:
        self.done += 1


def events_of(ctx: FileContext, messages: list[str], second: int = 0, stream: str = "stdout") -> list[LogEvent]:
    return [LogEvent(m, stream, f"2026-12-02T10:00:{second + i:02d}.000000001Z", ctx) for i, m in enumerate(messages)]


def dead_letters(tmp_path: Path, sink: str) -> list[dict]:
    path = dead_letter_path(tmp_path, sink)
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


# ---------------------------------------------------------------- elasticsearch


def es_config(url: str, **options) -> ElasticsearchSinkConfig:
    base = url.rsplit("/", 1)[0]
    return make(ElasticsearchSinkConfig, inputs=["in"], endpoints=[base], **{**FAST, **options})


async def test_bulk_bodies_pairwise_with_per_item_retry_and_dead_letter(servers, tmp_path):
    rejected_once: set[str] = set()

    def item_status(document: dict) -> tuple[int, dict | None]:
        message = document["message"]
        if "busy" in message and message not in rejected_once:
            rejected_once.add(message)
            return 429, {"type": "es_rejected_execution_exception", "reason": "write queue is full"}
        if "broken" in message:
            return 400, {"type": "mapper_parsing_exception", "reason": "failed to parse field [level]"}
        return 201, None

    receiver = await servers("elasticsearch", item_status=item_status)
    acks = Acks()
    web = events_of(context("shop", "web"), ["a", "busy 1", "b", "broken 1", "c"])
    db = events_of(context("data", "db"), ["x", "busy 2", "y"], second=30)
    config = es_config(receiver.url, bulk={"index": "logs-{{ kubernetes.pod_namespace }}-%Y.%m.%d", "action": "create"})
    sink = ElasticsearchSink("es", config, data_dir=tmp_path)
    await run_sink(None, [acks.batch(web + db)], sink=sink)

    sent: dict[str, list[str]] = {}
    for entry in receiver.accepted:
        assert entry.path == "/_bulk" and entry.headers["Content-Type"] == "application/x-ndjson"
        for action, document in bulk_pairs(entry.body):
            assert list(action) == ["create"]
            assert action["create"]["_index"] == f"logs-{document['kubernetes']['pod_namespace']}-2026.12.02"
            sent.setdefault(document["message"], []).append(entry.path)
    # every record arrived; the 429s were sent a second time alone (in a body of their own)
    assert sorted(sent) == sorted(["a", "busy 1", "b", "broken 1", "c", "x", "busy 2", "y"])
    retried = [e for e in receiver.accepted if all("busy" in d["message"] for _, d in bulk_pairs(e.body))]
    assert retried and sum(len(bulk_pairs(e.body)) for e in retried) == 2
    assert sink.events_sent == 7 and sink.retries["records"] >= 1
    letters = dead_letters(tmp_path, "es")
    assert [d["record"]["message"] for d in letters] == ["broken 1"]
    assert "mapper_parsing_exception" in letters[0]["reason"] and "failed to parse" in letters[0]["reason"]
    assert acks.done == acks.made == 1


async def test_bulk_index_with_a_missing_field_is_dead_lettered_with_the_template(servers, tmp_path):
    receiver = await servers("elasticsearch")
    acks = Acks()
    no_namespace = FileContext({"file": "/x/0.log", "kubernetes": {"pod_name": "p"}})
    events = events_of(context("shop", "web"), ["ok"]) + events_of(no_namespace, ["lost?"])
    config = es_config(receiver.url, bulk={"index": "logs-{{ kubernetes.pod_namespace }}"})
    sink = ElasticsearchSink("es", config, data_dir=tmp_path)
    await run_sink(None, [acks.batch(events)], sink=sink)
    assert [d["message"] for e in receiver.accepted for _, d in bulk_pairs(e.body)] == ["ok"]
    letters = dead_letters(tmp_path, "es")
    assert [d["record"]["message"] for d in letters] == ["lost?"] and "bulk.index" in letters[0]["reason"]
    assert all(entry.body for entry in receiver.received)  # a request of refused records alone is not sent empty
    assert acks.done == 1


async def test_data_stream_mode_creates_with_timestamp(servers, tmp_path):
    receiver = await servers("elasticsearch")
    config = es_config(receiver.url, mode="data_stream", data_stream={"dataset": "{{ kubernetes.pod_namespace }}"})
    sink = ElasticsearchSink("es", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events_of(context("shop", "web"), ["m"]))], sink=sink)
    ((action, document),) = bulk_pairs(receiver.accepted[0].body)
    assert action == {"create": {"_index": "logs-shop-default"}}
    assert document["@timestamp"] == document["timestamp"] == "2026-12-02T10:00:00.000000001Z"


# ---------------------------------------------------------------- loki


async def test_loki_streams_grouped_and_ordered_with_tenant_and_metadata(servers, tmp_path):
    receiver = await servers("loki")
    a1, a2, b = context("shop", "web-1", labels={"app": "web"}), context("shop", "web-2", labels={"app": "web"}), context("data", "db")
    # two files of one stream (same labels) interleave out of time order across batches
    batches = [events_of(a2, ["a2-late-0", "a2-late-1"], second=20), events_of(a1, ["a1-0", "a1-1"], second=0),
               events_of(b, ["b-0"], second=5), events_of(a1, ["a1-err"], second=10, stream="stderr")]
    acks = Acks()
    config = make(LokiSinkConfig, 
        inputs=["in"], endpoint=receiver.url.rsplit("/", 1)[0], tenant_id="team-a",
        labels={"namespace": "{{ kubernetes.pod_namespace }}", "app": "{{ kubernetes.pod_labels.app }}"},
        structured_metadata={"pod": "{{ kubernetes.pod_name }}"},
        request=RequestConfig(concurrency=1), **{**FAST, "batch": BatchConfig(max_events=100, timeout_secs=0.5)},
    )
    sink = LokiSink("loki", config, data_dir=tmp_path)
    await run_sink(None, [acks.batch(e) for e in batches], sink=sink)

    assert len(receiver.accepted) == 1
    entry = receiver.accepted[0]
    assert entry.path == "/loki/api/v1/push" and entry.headers["X-Scope-OrgID"] == "team-a"
    assert entry.headers["Content-Type"] == "application/json"
    streams = {json.dumps(s["stream"], sort_keys=True): s["values"] for s in json.loads(entry.body)["streams"]}
    web = streams[json.dumps({"app": "web", "namespace": "shop"}, sort_keys=True)]
    assert [json.loads(v[1])["message"] for v in web] == ["a1-0", "a1-1", "a1-err", "a2-late-0", "a2-late-1"]
    assert [int(v[0]) for v in web] == sorted(int(v[0]) for v in web)
    assert [v[2] for v in web] == [{"pod": "web-1"}] * 3 + [{"pod": "web-2"}] * 2
    assert json.loads(web[0][1]) == {**a1.fields, "message": "a1-0", "stream": "stdout",
                                     "timestamp": "2026-12-02T10:00:00.000000001Z"}  # the whole record, codec json
    assert len(streams) == 2 and acks.done == 4


async def test_loki_text_codec_and_label_set_cap(servers, tmp_path):
    receiver = await servers("loki")
    contexts = [context("ns", f"pod-{i}") for i in range(5)]
    config = make(LokiSinkConfig, inputs=["in"], endpoint=receiver.url.rsplit("/", 1)[0], path="/custom/push",
                            labels={"pod": "{{ kubernetes.pod_name }}", "job": "k8s"}, encoding={"codec": "text"},
                            max_label_sets=3, **FAST)
    sink = LokiSink("loki", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events_of(ctx, [f"{ctx.fields['kubernetes']['pod_name']} says hi"] * 2)) for ctx in contexts], sink=sink)

    streams = [s for e in receiver.accepted for s in json.loads(e.body)["streams"]]
    assert all(e.path == "/custom/push" for e in receiver.accepted)
    labels = {json.dumps(s["stream"], sort_keys=True) for s in streams}
    assert len(labels) == 4  # three admitted label sets and the overflow set
    overflow = [s for s in streams if s["stream"] == {"job": "k8s", "logagent_overflow": "true"}]
    assert sum(len(s["values"]) for s in overflow) == 4 == sink.capped_label_set_events
    assert all(v[1].endswith("says hi") for s in streams for v in s["values"])  # text: the message alone
    assert sum(len(s["values"]) for s in streams) == 10
    # and it is a metric
    from types import SimpleNamespace

    from logagent.observe.metrics import TopologyCollector

    families = {f.name: f for f in TopologyCollector(SimpleNamespace(sinks={"loki": sink})).collect()}
    (sample,) = families["logagent_sink_capped_label_set_events"].samples
    assert sample.labels == {"component_id": "loki", "component_kind": "loki"} and sample.value == 4


# ---------------------------------------------------------------- opentelemetry


@pytest.mark.parametrize("encoding", ["protobuf", "json"])
async def test_otlp_records_parse_with_the_official_classes(servers, tmp_path, encoding):
    receiver = await servers("opentelemetry")
    ctx = context("shop", "web", labels={"app": "web", "tier": "front"})
    ctx.fields["kubernetes"]["container_id"] = "containerd://abc123"
    events = events_of(ctx, ["hello", "oops"]) + events_of(ctx, ["boom"], second=5, stream="stderr")
    config = make(OpentelemetrySinkConfig, inputs=["in"], uri=receiver.url.rsplit("/", 1)[0] + "/v1/logs", encoding=encoding, **FAST)
    sink = OpentelemetrySink("otel", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events)], sink=sink)

    (entry,) = receiver.accepted
    assert entry.path == "/v1/logs"
    assert entry.headers["Content-Type"] == ("application/x-protobuf" if encoding == "protobuf" else "application/json")
    request = otlp_request(entry)
    (resource_logs,) = request.resource_logs
    resource = {a.key: a.value.string_value for a in resource_logs.resource.attributes}
    assert resource == {
        "k8s.pod.name": "web", "k8s.namespace.name": "shop", "k8s.container.name": "app", "k8s.pod.uid": "uid-web",
        "k8s.node.name": "node-1", "k8s.pod.label.app": "web", "k8s.pod.label.tier": "front", "container.id": "abc123",
    }
    records = resource_logs.scope_logs[0].log_records
    assert [r.body.string_value for r in records] == ["hello", "oops", "boom"]
    assert records[0].time_unix_nano == 1796205600000000001
    assert [(r.severity_number, r.severity_text) for r in records] == [(9, "INFO"), (9, "INFO"), (17, "ERROR")]
    attributes = {a.key: a.value.string_value for a in records[2].attributes}
    assert attributes == {"log.iostream": "stderr", "log.file.path": ctx.fields["file"]}
    assert resource_logs.scope_logs[0].scope.name == "logagent"


async def test_otlp_level_field_and_partial_success(servers, tmp_path):
    receiver = await servers("opentelemetry", reject_otlp=(1, "log record too old"))
    ctx = FileContext({"file": "/f/0.log", "level": "warning", "kubernetes": {"pod_name": "p"}})
    config = make(OpentelemetrySinkConfig, inputs=["in"], uri=receiver.url, **FAST)
    sink = OpentelemetrySink("otel", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events_of(ctx, ["m"]))], sink=sink)
    record = otlp_request(receiver.accepted[0]).resource_logs[0].scope_logs[0].log_records[0]
    assert (record.severity_number, record.severity_text) == (13, "warning")
    assert sink.rejected_events == 1 and sink.events_sent == 1


async def test_otlp_rejected_request_is_dead_lettered_as_json(servers, tmp_path):
    receiver = await servers("opentelemetry")
    receiver.fail_next(400)
    config = make(OpentelemetrySinkConfig, inputs=["in"], uri=receiver.url, **FAST)
    sink = OpentelemetrySink("otel", config, data_dir=tmp_path)
    await run_sink(None, [Acks().batch(events_of(context("shop", "web"), ["m"]))], sink=sink)
    (letter,) = dead_letters(tmp_path, "otel")
    assert letter["reason"] == "http_400"
    assert letter["record"]["resource"]["k8s.pod.name"] == "web"
    assert letter["record"]["logRecord"]["body"] == {"stringValue": "m"}
    json_format.ParseDict(letter["record"]["logRecord"], ExportLogsServiceRequest().resource_logs.add().scope_logs.add().log_records.add())


def test_loki_rewrite_timestamp_keeps_a_stream_in_order_across_requests():
    from logagent.sinks.loki.push import LabelSetGuard, PushProtocol
    from logagent.sinks.templates import compile_template

    protocol = PushProtocol({"ns": compile_template("{{ kubernetes.pod_namespace }}")}, {}, "text",
                            "rewrite_timestamp", LabelSetGuard(10))
    ctx = context("shop", "web")
    first = protocol.build_body(protocol.encode(events_of(ctx, ["new"], second=30))[0])
    second = protocol.build_body(protocol.encode(events_of(ctx, ["old", "newer"], second=29))[0])
    (stream,) = json.loads(second)["streams"]
    newest = json.loads(first)["streams"][0]["values"][0][0]
    assert [v[1] for v in stream["values"]] == ["old", "newer"]
    assert int(stream["values"][0][0]) == int(newest) + 1 and int(stream["values"][1][0]) == int(newest) + 2
    assert protocol.rewritten_events == 2  # "newer" would now be behind the rewritten "old"
