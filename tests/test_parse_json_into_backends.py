"""parse_json's shared record forms (MessageFields, MERGED_MESSAGE) reach each backend's wire format whole.

parse_json gives records whose fields are a shared marker rather than a dict
of their own; the backend protocols encode runs of one file in bulk. Every
field of the parsed object must come out in the Elasticsearch document, the
Loki line and the OTLP attributes, exactly as ``LogEvent.to_dict`` sees it.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

from logagent.event import MERGED_MESSAGE, MessageFields
from logagent.sinks.elasticsearch.bulk import BulkProtocol
from logagent.sinks.loki.push import LabelSetGuard, PushProtocol
from logagent.sinks.opentelemetry.logs import LogsProtocol
from logagent.sinks.templates import compile_template, parse_field_path
from tests.test_transforms_parse_json import context, event, run, transform

MESSAGES = ['{"level":"error","code":7,"user":{"id":"u1"}}', '{"level":"info","code":8,"user":{"id":"u2"}}']


def parsed_events(target: str) -> list:
    ctx = context()
    out = run(transform(target), [event(m, ctx) for m in MESSAGES], ctx)
    expected_marker = MERGED_MESSAGE if target == "." else None
    if expected_marker is not None:
        assert all(e.fields is MERGED_MESSAGE for e in out)
    else:
        assert all(type(e.fields) is MessageFields for e in out)
    return out


@pytest.mark.parametrize("target", ["parsed", "."])
def test_bulk_documents_hold_the_parsed_fields(target):
    events = parsed_events(target)
    protocol = BulkProtocol(compile_template("logs-{{ kubernetes.pod_name }}"), "create", False)
    parts, _ = protocol.encode(events)
    lines = protocol.build_body(parts).decode().splitlines()
    documents = [json.loads(line) for line in lines[1::2]]
    assert documents == [e.to_dict() for e in events]
    assert all(json.loads(line) == {"create": {"_index": "logs-web-0"}} for line in lines[0::2])


@pytest.mark.parametrize("target", ["parsed", "."])
def test_loki_lines_hold_the_parsed_fields(target):
    events = parsed_events(target)
    protocol = PushProtocol({"app": compile_template("{{ kubernetes.pod_labels.app }}")}, {}, "json", "accept",
                            LabelSetGuard(100))
    parts, _ = protocol.encode(events)
    body = json.loads(protocol.build_body(parts))
    (stream,) = body["streams"]
    assert stream["stream"] == {"app": "web"}
    assert [json.loads(line) for _, line in stream["values"]] == [e.to_dict() for e in events]


@pytest.mark.parametrize("target", ["parsed", "."])
def test_otlp_attributes_and_severity_come_from_the_parsed_fields(target):
    events = parsed_events(target)
    level = "parsed.level" if target == "parsed" else "level"
    protocol = LogsProtocol("protobuf", [parse_field_path(level)])
    parts, _ = protocol.encode(events)
    request = ExportLogsServiceRequest.FromString(protocol.build_body(parts))
    records = [r for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert [(r.severity_number, r.severity_text) for r in records] == [(17, "error"), (9, "info")]
    assert [r.body.string_value for r in records] == MESSAGES
    for record, message in zip(records, MESSAGES):
        attributes = {a.key: a.value for a in record.attributes}
        parsed = json.loads(message)
        if target == "parsed":
            kv = {v.key: v.value for v in attributes["parsed"].kvlist_value.values}
        else:
            kv = attributes
        assert kv["code"].int_value == parsed["code"]
        assert kv["level"].string_value == parsed["level"]
