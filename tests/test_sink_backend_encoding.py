"""The backend protocols' whole-run encodings give exactly what record-by-record encoding gives.

Loki, OTLP and Elasticsearch encode a run of one file's records in a few
calls for the whole run; anything unusual is encoded record by record. These
tests hold the two ways to the same bytes (or the same parsed messages) on
awkward input, and check the bodies with the backends' own parsers.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import ScopeLogs

from logagent.encoding import encode_json
from logagent.event import FileContext, LogEvent
from logagent.sinks.elasticsearch.bulk import BulkProtocol
from logagent.sinks.loki.push import LabelSetGuard, PushProtocol
from logagent.sinks.opentelemetry.logs import LogsProtocol
from logagent.sinks.templates import compile_template, parse_field_path
from logagent.sinks.timestamps import kubelet_nanos, kubelet_nanos_texts, unix_nanos, unix_nanos_text
from tests.test_sink_backends import context

AWKWARD = [
    'plain', 'with "quotes"', 'a","b', 'a\\",\\"b', 'ends with a backslash \\', '\\"', '"', '', ' ',
    'tab\there', 'control \x01\x1f', 'unicode é ✓ 🚀', '{"json": ["inside", 1]}', '","stream":"x"', 'line\u2028sep',
]


def run_of(ctx: FileContext, messages: list[str], start_second: int = 0, step_ms: int = 300) -> list[LogEvent]:
    """Records of one file, stdout and stderr mixed, over a few seconds."""
    events = []
    for i, message in enumerate(messages):
        millis = start_second * 1000 + i * step_ms
        stamp = f"2026-12-02T10:{millis // 60000 % 60:02d}:{millis // 1000 % 60:02d}.{millis % 1000:03d}{i:06d}Z"
        events.append(LogEvent(message, "stderr" if i % 3 == 0 else "stdout", stamp, ctx))
    return events


def loki(codec: str = "json", metadata: dict | None = None, labels: dict | None = None) -> PushProtocol:
    labels = labels or {"namespace": "{{ kubernetes.pod_namespace }}", "app": "{{ kubernetes.pod_labels.app }}"}
    return PushProtocol({k: compile_template(v) for k, v in labels.items()},
                        {k: compile_template(v) for k, v in (metadata or {}).items()}, codec, "accept", LabelSetGuard(100))


def records_of(parts: list[bytes]) -> list[bytes]:
    """Each record's parts joined (where a record's parts split it may differ between the ways)."""
    return [b"\n".join((parts[i], b"".join(parts[i + 1 : i + 5]))) for i in range(0, len(parts), 5)]


# ---------------------------------------------------------------- timestamps


def test_kubelet_nanos_match_the_record_by_record_conversion():
    stamps = [f"2026-12-02T10:00:{i % 7:02d}.{i * 7919 % 10**9:09d}Z" for i in range(50)]
    texts, raw = kubelet_nanos_texts(stamps)
    assert texts.split(b"\n") == [unix_nanos_text(s).encode() for s in stamps]
    assert raw.split(b"\n") == [s.encode() for s in stamps]
    one_second = [f"2026-12-02T10:00:05.{i:09d}Z" for i in range(5)]
    assert kubelet_nanos(one_second) == [unix_nanos(s) for s in one_second]
    # in order (filled run by run), over a minute boundary, and many seconds (looked up one by one)
    for seconds in (3, 40):
        start = datetime(2026, 12, 2, 10, 59, 40)
        ordered = sorted((start + timedelta(seconds=i // 2)).strftime("%Y-%m-%dT%H:%M:%S") + f".{i * 7919 % 10**9:09d}Z"
                         for i in range(seconds * 2))
        assert kubelet_nanos(ordered) == [unix_nanos(s) for s in ordered]


@pytest.mark.parametrize("stamp", [
    None, "2026-12-02T10:00:00.123Z", "2026-12-02T10:00:00.123456789+00:00", "2026-12-02T10:00:00.12345678xZ",
    "1999-12-02T10:00:00.000000000Z", "2026-13-02T10:00:00.000000000Z", "2026-12-02T10:00:00.12345678٣Z",
])
def test_kubelet_nanos_refuse_other_forms(stamp):
    assert kubelet_nanos_texts(["2026-12-02T10:00:00.000000000Z", stamp]) is None


# ---------------------------------------------------------------- loki


@pytest.mark.parametrize("codec", ["json", "text"])
@pytest.mark.parametrize("metadata", [None, {"pod": "{{ kubernetes.pod_name }}"}])
def test_loki_run_encoding_equals_record_by_record(codec, metadata):
    events = run_of(context("shop", "web"), AWKWARD * 3)
    protocol = loki(codec, metadata)
    whole = protocol._encode_run(events)
    assert whole is not None
    assert records_of(whole) == records_of(protocol._encode_each(events)[0])
    (stream,) = json.loads(protocol.build_body(whole))["streams"]
    lines = [value[1] for value in stream["values"]]
    if codec == "json":
        assert lines == [encode_json(e).decode() for e in events]
        assert [json.loads(line)["message"] for line in lines] == [e.message for e in events]
    else:
        assert lines == [e.message for e in events]
    assert [value[0] for value in stream["values"]] == [unix_nanos_text(e.timestamp) for e in events]
    assert all(value[2:] == ([{"pod": "web"}] if metadata else []) for value in stream["values"])


@pytest.mark.parametrize("codec", ["json", "text"])
def test_loki_records_the_run_cannot_take_are_encoded_one_by_one(codec):
    ctx = context("shop", "web")
    good = run_of(ctx, ["a", "b"])
    odd = [
        LogEvent("no timestamp", "stdout", None, ctx),
        LogEvent("offset", "stdout", "2026-12-02T12:00:00.5+02:00", ctx),
        LogEvent(None, "stdout", "2026-12-02T10:00:00.000000002Z", ctx, fields={"message": {"k": 1}}),
        LogEvent("cut", "stdout", "2026-12-02T10:00:00.000000003Z", ctx, truncated=True),
        LogEvent("parsed", "stdout", "2026-12-02T10:00:00.000000004Z", ctx, fields={"level": "warn"}),
        LogEvent("bad \udcff byte", "stdout", "2026-12-02T10:00:00.000000005Z", ctx),
    ]
    for event in odd:
        protocol = loki(codec)
        events = [*good, event]
        assert protocol._encode_run(events) is None
        parts, skipped = protocol.encode(events)
        assert skipped == 0
        (stream,) = json.loads(protocol.build_body(parts))["streams"]
        assert len(stream["values"]) == 3
        assert all(len(value[0]) == 19 and value[0].isdigit() for value in stream["values"])
        if codec == "json":
            assert all(isinstance(json.loads(value[1]), dict) for value in stream["values"])


def test_loki_streams_merge_runs_in_time_order_and_body_size_is_exact():
    protocol = loki()
    a, b, other = context("shop", "a", labels={"app": "web"}), context("shop", "b", labels={"app": "web"}), context("db", "c")
    parts = []
    for ctx, start in ((a, 0), (other, 1), (b, 0), (a, 5), (b, 3)):
        parts += protocol.encode(run_of(ctx, [f"{ctx.fields['kubernetes']['pod_name']}-{start}-{i}" for i in range(4)],
                                        start_second=start))[0]
    body = protocol.build_body(parts)
    assert protocol.body_size(parts, sum(map(len, parts))) == len(body)
    assert b"".join(protocol.body_pieces(parts, 3)) == body
    streams = {json.dumps(s["stream"], sort_keys=True): s["values"] for s in json.loads(body)["streams"]}
    web = streams['{"app": "web", "namespace": "shop"}']
    assert len(web) == 16 and len(streams['{"app": "c", "namespace": "db"}']) == 4
    assert [int(v[0]) for v in web] == sorted(int(v[0]) for v in web)
    record = json.loads(protocol.record(parts[:5]))
    assert record["stream"] == {"app": "web", "namespace": "shop"} and json.loads(record["values"][0][1])["message"] == "a-0-0"
    assert protocol.build_body([]) == b'{"streams":[]}' and protocol.body_size([], 0) == len(b'{"streams":[]}')


def test_loki_label_set_cap_counts_every_record_of_a_run():
    protocol = PushProtocol({"pod": compile_template("{{ kubernetes.pod_name }}")}, {}, "json", "accept", LabelSetGuard(1))
    protocol.encode(run_of(context("ns", "first"), ["x"] * 3))
    parts, _ = protocol.encode(run_of(context("ns", "second"), ["y"] * 4))
    assert protocol.guard.capped_events == 4
    assert set(parts[0::5]) == {b'{"logagent_overflow":"true"}'}


# ---------------------------------------------------------------- opentelemetry


def otlp_records(protocol: LogsProtocol, parts: list[bytes]) -> list:
    request = ExportLogsServiceRequest.FromString(protocol.build_body(parts))
    records = [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    for record in records:
        record.observed_time_unix_nano = 0
    return records


def otlp() -> LogsProtocol:
    return LogsProtocol("protobuf", [parse_field_path(p) for p in ("level", "parsed.level")])


def test_otlp_run_encoding_equals_record_by_record():
    events = run_of(context("shop", "web"), AWKWARD * 2)
    protocol = otlp()
    whole, _ = protocol.encode(events)
    each, _ = protocol._encode_each(events)
    assert otlp_records(protocol, whole) == otlp_records(protocol, each)
    records = otlp_records(protocol, whole)
    assert [r.body.string_value for r in records] == [e.message for e in events]
    assert [r.time_unix_nano for r in records] == [unix_nanos(e.timestamp) for e in events]
    assert [r.severity_text for r in records] == ["ERROR" if e.stream == "stderr" else "INFO" for e in events]
    assert all(len(ScopeLogs.FromString(part).log_records) == 1 for part in whole[1::2])


def test_otlp_odd_records_and_resources_grouped():
    protocol = otlp()
    a, b = context("shop", "a"), context("shop", "b")
    runs = [run_of(a, ["a0", "a1"]), run_of(b, ["b0"]), [
        LogEvent("bad \udcff byte", "stdout", "2026-12-02T10:00:00.000000005Z", a),
        LogEvent(None, "stdout", None, a, fields={"message": "moved"}),
        LogEvent("cut", "stderr", "2026-12-02T12:00:00.5+02:00", a, truncated=True),
    ]]
    parts = [part for run in runs for part in protocol.encode(run)[0]]
    request = ExportLogsServiceRequest.FromString(protocol.build_body(parts))
    by_pod = {next(x.value.string_value for x in rl.resource.attributes if x.key == "k8s.pod.name"): rl for rl in request.resource_logs}
    (scope,) = by_pod["a"].scope_logs
    assert scope.scope.name == "logagent"
    bodies = [r.body.string_value for r in scope.log_records]
    assert bodies == ["a0", "a1", "bad \ufffd byte", '"moved"', "cut"]
    assert scope.log_records[4].time_unix_nano == unix_nanos("2026-12-02T10:00:00.5Z")
    assert {x.key: x.value.bool_value for x in scope.log_records[4].attributes}["logagent.truncated"] is True
    assert [r.body.string_value for r in by_pod["b"].scope_logs[0].log_records] == ["b0"]
    letter = json.loads(protocol.record(parts[:2]))
    assert letter["resource"]["k8s.pod.name"] == "a" and letter["logRecord"]["body"] == {"stringValue": "a0"}


# ---------------------------------------------------------------- elasticsearch


@pytest.mark.parametrize("index", ["logs-{{ kubernetes.pod_namespace }}-%Y.%m.%d", "logs-%Y.%m.%d.%H", "fixed"])
def test_bulk_run_action_lines_equal_record_by_record(index):
    ctx = context("shop", "web")
    stamps = ["2026-12-02T23:59:59.900000000Z", "2026-12-03T00:00:00.100000000Z", "2026-12-02T23:59:59.950000000Z"]
    mixed = [LogEvent(f"m{i}", "stdout", stamp, ctx) for i, stamp in enumerate(stamps)]
    same_day = [LogEvent(f"s{i}", "stdout", f"2026-12-02T10:00:0{i}.000000000Z", ctx) for i in range(3)]
    for events in (mixed, same_day):
        protocol = BulkProtocol(compile_template(index), "index", data_stream=False)
        parts, _ = protocol.encode(events)
        expected = [BulkProtocol(compile_template(index), "index", data_stream=False)._action(e) for e in events]
        assert parts[0::3] == expected
        assert [json.loads(parts[i + 1] + parts[i + 2]) for i in range(0, len(parts), 3)] == [json.loads(encode_json(e)) for e in events]
    if index.startswith("logs-{{"):
        assert json.loads(BulkProtocol(compile_template(index), "index", False).encode(mixed)[0][3])["index"]["_index"] == "logs-shop-2026.12.03"
