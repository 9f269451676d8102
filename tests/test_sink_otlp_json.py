"""OTLP ``encoding: json`` written by msgspec, checked with ``google.protobuf.json_format.Parse`` into the official classes.

The JSON body must parse into exactly the request the protobuf encoding
builds from the same records (the OTLP JSON mapping: lowerCamelCase,
64-bit integers as strings, enums as numbers), fast path and record by
record alike.
"""

from __future__ import annotations

import json

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from logagent.event import FileContext, LogEvent
from logagent.sinks.opentelemetry.logs import LogsProtocol
from logagent.sinks.opentelemetry.logs_json import JsonLogsProtocol
from logagent.sinks.templates import parse_field_path
from tests.test_sink_backend_encoding import AWKWARD, run_of
from tests.test_sink_backends import context

SEVERITY = [parse_field_path(p) for p in ("level", "parsed.level")]


def parsed(body: bytes) -> ExportLogsServiceRequest:
    request = json_format.Parse(body, ExportLogsServiceRequest())
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                record.observed_time_unix_nano = 0
    return request


def both(runs: list[list[LogEvent]]) -> tuple[ExportLogsServiceRequest, ExportLogsServiceRequest, bytes]:
    protobuf, as_json = LogsProtocol("protobuf", SEVERITY), JsonLogsProtocol(SEVERITY)
    proto_parts = [part for run in runs for part in protobuf.encode(run)[0]]
    json_parts = [part for run in runs for part in as_json.encode(run)[0]]
    expected = ExportLogsServiceRequest.FromString(protobuf.build_body(proto_parts))
    for resource_logs in expected.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                record.observed_time_unix_nano = 0
    body = as_json.build_body(json_parts)
    return parsed(body), expected, body


def test_json_body_parses_into_the_protobuf_request():
    a, b = context("shop", "a"), context("shop", "b")
    runs = [run_of(a, AWKWARD * 2), run_of(b, ["b0", "b1"]), run_of(a, ["a again"], start_second=9)]
    got, expected, body = both(runs)
    assert got == expected
    assert len(got.resource_logs) == 2
    document = json.loads(body)
    record = document["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    assert isinstance(record["timeUnixNano"], str) and record["timeUnixNano"].isdigit()  # int64 as a string
    assert isinstance(record["observedTimeUnixNano"], str)
    assert isinstance(record["severityNumber"], int)  # enums as numbers
    assert record["body"] == {"stringValue": AWKWARD[0]}


def test_odd_records_take_the_record_by_record_way_and_still_match():
    a = context("shop", "a")
    runs = [[
        LogEvent("bad \udcff byte", "stdout", "2026-12-02T10:00:00.000000005Z", a),
        LogEvent(None, "stdout", None, a, fields={"message": "moved"}),
        LogEvent("cut", "stderr", "2026-12-02T12:00:00.5+02:00", a, truncated=True),
        LogEvent('{"level":"warn"}', "stdout", "2026-12-02T10:00:01.000000000Z", a, fields={"parsed": {"level": "warn", "n": 2**40}}),
    ], run_of(FileContext({"file": "/x.log"}), ["no kubernetes fields"])]
    got, expected, _ = both(runs)
    assert got == expected
    records = [r for rl in got.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert records[0].body.string_value == "bad \ufffd byte"
    assert records[3].severity_number == 13


def test_dead_letter_record_is_json_of_the_record():
    protocol = JsonLogsProtocol(SEVERITY)
    parts, _ = protocol.encode(run_of(context("shop", "a"), ["one"]))
    letter = json.loads(protocol.record(parts[:2]))
    assert letter["resource"]["k8s.pod.name"] == "a"
    record = json_format.ParseDict(letter["logRecord"], LogRecord())
    assert record.body.string_value == "one"
