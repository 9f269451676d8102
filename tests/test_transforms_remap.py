"""The remap transform on batches: Vector's error and abort semantics, rerouting, acknowledgements, fast paths."""

from __future__ import annotations

import json

import pytest

from logagent.acks import AckGroup, Batch
from logagent.encoding import encode_json
from logagent.event import MERGED_MESSAGE, FileContext, LogEvent
from logagent.transforms.remap import ABORTED, RUNTIME_ERROR, RemapTransform
from logagent.transforms.remap_config import RemapConfig

STAMP = "2026-12-02T10:00:00.123456789Z"


def context() -> FileContext:
    return FileContext({"file": "/var/log/pods/a/0.log", "source_type": "kubernetes_logs",
                        "kubernetes": {"pod_name": "web-0", "pod_labels": {"app": "web"}, "container_id": "c1"}})


def transform(source: str, **options: object) -> RemapTransform:
    return RemapTransform("shape", RemapConfig(inputs=["pods"], source=source, **options))  # type: ignore[arg-type]


def run(t: RemapTransform, messages: list[str], ctx: FileContext | None = None) -> tuple[dict, list, list[int]]:
    ctx = ctx or context()
    released: list[int] = []
    group = AckGroup(lambda: released.append(1))
    events = [LogEvent(m, "stdout", STAMP, ctx) for m in messages]
    outputs = t.process(Batch(events, [group], 100))
    by_output = {name: [json.loads(encode_json(e)) for e in batch.events] for name, batch in outputs}
    return by_output, [batch for _, batch in outputs], released


def release_all(batches: list[Batch]) -> None:
    for batch in batches:
        batch.release()


def test_runtime_error_passes_the_record_unchanged_or_drops_it() -> None:
    source = '.n = to_int!(.message)'
    out, batches, released = run(transform(source), ["12", "x"])
    assert [r.get("n") for r in out[""]] == [12, None] and out[""][1]["message"] == "x"
    release_all(batches)
    assert released == [1]
    t = transform(source, drop_on_error=True)
    out, batches, released = run(t, ["12", "x"])
    assert [r["n"] for r in out[""]] == [12]
    assert t.errors[RUNTIME_ERROR] == 1 and t.events_dropped == 1
    release_all(batches)
    assert released == [1]


def test_abort_drops_or_keeps_and_dropped_records_are_released() -> None:
    source = 'if .message == "drop" { abort }\n.seen = true'
    t = transform(source)
    out, batches, released = run(t, ["drop", "drop"])
    assert out == {} and batches == [] and released == [1] and t.errors[ABORTED] == 2
    out, batches, _ = run(transform(source, drop_on_abort=False), ["drop", "keep"])
    assert [("seen" in r) for r in out[""]] == [False, True]


def test_reroute_dropped_carries_vectors_metadata_dropped() -> None:
    t = transform('if .message == "drop" { abort "not wanted" }', reroute_dropped=True)
    assert t.outputs == ("", "dropped")
    out, batches, released = run(t, ["drop", "keep"])
    assert [r["message"] for r in out[""]] == ["keep"]
    dropped = out["dropped"][0]["metadata"]["dropped"]
    assert dropped == {"reason": "abort", "message": "not wanted", "component_id": "shape",
                       "component_type": "remap", "component_kind": "transform"}
    release_all(batches[:1])
    assert released == []
    release_all(batches[1:])
    assert released == [1]


def test_context_only_program_runs_once_per_context() -> None:
    t = transform("del(.kubernetes.pod_labels)\n.k8s = del(.kubernetes)")
    assert t.context_only
    ctx = context()
    out, _, _ = run(t, ["a", "b"], ctx)
    assert [r["k8s"] for r in out[""]] == [{"pod_name": "web-0", "container_id": "c1"}] * 2
    assert all("kubernetes" not in r and r["timestamp"] == STAMP for r in out[""])
    derived = [v for k, v in ctx.memo.items() if k == t._memo_key]
    assert len(derived) == 1 and ctx.fields["kubernetes"]["pod_labels"] == {"app": "web"}  # the shared one unchanged


def test_merge_idiom_fast_path_gives_the_general_paths_records() -> None:
    t = transform(". = merge(., parse_json!(string!(.message))) ?? .")
    assert t.merge_idiom
    messages = ['{"level":"warn","n":1}', '{"message":"inner","level":"x"}', '{"kubernetes":{"x":1}}', "not json",
                "[1]", "{}", '{"stream":"over"}']
    ctx = context()
    events = [LogEvent(m, "stdout", STAMP, ctx) for m in messages]
    fast = [t._run_merge(e) for e in events]
    slow = [t._run_record(e) for e in events]
    assert fast[0].fields is MERGED_MESSAGE
    for a, b, event in zip(fast, slow, events):
        a = a if type(a) is LogEvent else event
        b = b if type(b) is LogEvent else event
        assert json.loads(encode_json(a)) == json.loads(encode_json(b))
    assert json.loads(encode_json(fast[1]))["message"] == "inner"


def test_timestamp_is_a_timestamp_and_written_back_as_rfc3339() -> None:
    out, _, _ = run(transform('.year = format_timestamp!(.timestamp, "%Y")\n.later = .timestamp'), ["m"])
    assert out[""][0]["year"] == "2026" and out[""][0]["later"] == STAMP and out[""][0]["timestamp"] == STAMP


@pytest.mark.parametrize("options, key", [({"files": ["x.vrl"]}, "files"), ({"timezone": "Europe/Paris"}, "timezone")])
def test_unsupported_options_are_refused_by_name(options: dict, key: str) -> None:
    with pytest.raises(ValueError, match=f"^{key}: "):
        RemapConfig(inputs=["p"], source=".a = 1", **options).validate()  # type: ignore[arg-type]


# -- records as Vector's remap emits them, checked against Vector's VRL (vrl-python) ----------------------------

#: vrl-python takes no timestamp values: the kubelet's text becomes one first, as Vector's source gives it
_TIMESTAMP_PROLOGUE = 'if exists(.timestamp) { .timestamp = parse_timestamp(.timestamp, "%+") ?? .timestamp }\n'


def vector_output(source: str, record: dict) -> list[dict]:
    """The records Vector's remap emits for ``record`` (legacy namespace; a runtime error passes it unchanged)."""
    vrl_python = pytest.importorskip("vrl_python")
    from logagent.vrl.timestamps import format_rfc3339
    from logagent.vrl.value import Timestamp
    from tests.vrl_oracle import vrl_value

    def text(value: object) -> object:
        if type(value) is tuple:
            return format_rfc3339(Timestamp(value[1]))
        if type(value) is dict:
            return {k: text(v) for k, v in value.items()}
        if type(value) is list:
            return [text(v) for v in value]
        return value

    try:
        root = text(vrl_value(vrl_python.VRLRuntime().execute(_TIMESTAMP_PROLOGUE + source, record).processed_event))
    except RuntimeError:
        return [record]
    if type(root) is dict:
        return [root]
    if type(root) is list:
        return [item if type(item) is dict else {"message": item} for item in root]
    return [{"message": root}]


VECTOR_SHAPES = [
    # the event replaced by a value that is not an object: an array is one record per item, anything else the message
    ". = parse_json!(.message)",
    '. = [{"n": 1}, {"n": 2, "timestamp": .timestamp}, "text"]',
    ". = .message\n.after = 1",
    '. = "only " + string!(.message)',
    # unnest: one record per item of the array at the path (a runtime error leaves the record as it was)
    ".items = parse_json(.message) ?? []\n. = unnest!(.items)",
    # the record's timestamp, stream and truncation may hold any value, as in Vector
    ".timestamp = to_unix_timestamp!(.timestamp)",
    ".timestamp = null\n.stream = 5\n.truncated = false",
    '.timestamp, err = parse_timestamp(.message, "%Y")',
    'del(.timestamp)\n.timestamp = .stream',
]
SHAPE_MESSAGES = ['[{"a": 1}, 2, null, "x"]', '"text"', "[]", '{"b": 1, "timestamp": "x"}', "null", "2026"]


@pytest.mark.parametrize("source", VECTOR_SHAPES)
def test_records_are_vectors_for_any_event_value(source: str) -> None:
    out, batches, released = run(transform(source), SHAPE_MESSAGES)
    ctx = context()
    expected = [r for m in SHAPE_MESSAGES for r in vector_output(source, {**ctx.fields, "message": m, "stream": "stdout",
                                                                          "timestamp": STAMP})]
    assert out.get("", []) == expected
    release_all(batches)
    assert released == [1]


def test_a_non_string_timestamp_is_read_back_by_later_components() -> None:
    t = transform(".timestamp = to_unix_timestamp!(.timestamp)\n.stream = null")
    ctx = context()
    (_, batch), = t.process(Batch([LogEvent("m", "stdout", STAMP, ctx)], [AckGroup()], 10))
    event = batch.events[0]
    assert event.get("timestamp") == 1796205600 and event.timestamp is None
    assert event.get("stream") is None and event.has("stream") and event.to_dict()["stream"] is None
    (_, again), = transform(".seen = .timestamp").process(Batch([event], [AckGroup()], 10))
    assert json.loads(encode_json(again.events[0]))["seen"] == 1796205600


def test_batch_of_records_some_without_message() -> None:
    """A remap before this one may have deleted some records' message: the batch reads it as absent."""
    dropper = transform('if .message == "drop" { del(.message) }')
    out, _, _ = run(dropper, ["drop", '{"x": 1}', "text"])
    ctx = context()
    events = [LogEvent(r.get("message"), r["stream"], r["timestamp"], ctx) for r in out[""]]
    assert events[0].message is None and events[0].fields is None
    parser = transform('structured, err = parse_json(.message)\nif err == null { .parsed_data = structured }')
    outputs = parser.process(Batch(events, [AckGroup()], 100))
    records = [json.loads(encode_json(e)) for _, batch in outputs for e in batch.events]
    assert [r.get("message") for r in records] == [None, '{"x": 1}', "text"]
    assert [r.get("parsed_data") for r in records] == [None, {"x": 1}, None]
    assert "message" not in records[0] and not parser.errors
