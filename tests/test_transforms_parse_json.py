"""parse_json: objects under a target or merged, everything else untouched and counted, and every view of the record."""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec
import pytest

from logagent.acks import AckGroup, Batch
from logagent.config import ConfigError, parse_config
from logagent.encoding import encode_json, encode_ndjson, encode_ndjson_parts, encode_text
from logagent.event import MERGED_MESSAGE, FileContext, LogEvent, MessageFields, resolved
from logagent.sinks.http.records import encode_record
from logagent.transforms.filter import FilterConfig, FilterTransform
from logagent.transforms.parse_json import ParseJsonConfig, ParseJsonTransform
from logagent.transforms.remap import RemapTransform
from logagent.transforms.remap_config import RemapConfig
from logagent.transforms.route import RouteConfig, RouteTransform
from logagent.vrl.condition import compile_condition

TS = "2026-12-02T10:00:00.000000001Z"
FILE = "/var/log/pods/ns_web-0_uid/app/0.log"


def context() -> FileContext:
    return FileContext({"file": FILE, "source_type": "kubernetes_logs",
                        "kubernetes": {"pod_name": "web-0", "pod_labels": {"app": "web"}}})


def event(message: str, ctx: FileContext | None = None, stream: str | None = "stdout", ts: str | None = TS) -> LogEvent:
    return LogEvent(message, stream, ts, ctx or context())


def transform(target: str, field: str = "message", drop_field: bool = False) -> ParseJsonTransform:
    config = ParseJsonConfig(inputs=["in"], target=target, field=field, drop_field=drop_field)
    config.validate()
    return ParseJsonTransform("p", config)


def run(t: ParseJsonTransform | FilterTransform | RouteTransform, events: list[LogEvent],
        ctx: FileContext | None = None) -> list[LogEvent]:
    done: list[int] = []
    outputs = t.process(Batch(events, [AckGroup(on_done=lambda: done.append(1))], 100, ctx))
    out = [e for _, b in outputs for e in b.events]
    for _, b in outputs:
        b.release()
    return out


def one(t: ParseJsonTransform, ev: LogEvent) -> LogEvent:
    (out,) = run(t, [ev])
    return out


def record(ev: LogEvent) -> dict[str, Any]:
    """The record as every encoder and accessor sees it; they must all agree."""
    expected = ev.to_dict()
    assert json.loads(encode_json(ev)) == expected
    assert encode_ndjson([ev, ev]) == encode_json(ev) + b"\n" + encode_json(ev) + b"\n"
    assert b"".join(encode_ndjson_parts([ev])) == encode_json(ev) + b"\n"
    assert json.loads(encode_record(ev)) == expected
    for key, value in expected.items():
        assert ev.get(key) == value, key
    for key in ("message", "stream", "timestamp", "truncated", "level", "parsed", "file"):
        if key not in expected:
            assert ev.get(key) is None, key
    return expected


def base(message: str | None = None, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = dict(context().fields)
    if message is not None:
        rec["message"] = message
    rec |= {"stream": "stdout", "timestamp": TS}
    return rec | extra


JSON = '{"level":"error","msg":"boom","n":3,"nested":{"a":[1,2,{"b":null}]},"ok":true}'
OBJ = json.loads(JSON)


@pytest.mark.parametrize("target", ["parsed", ".parsed", ' .parsed '])
def test_object_under_a_target_key(target: str) -> None:
    original = event(JSON)
    out = one(transform(target), original)
    assert record(out) == base(JSON, parsed=OBJ)
    assert out.ctx is original.ctx
    assert original.fields is None and record(original) == base(JSON)  # the input event is never changed


@pytest.mark.parametrize("text", [
    '[1, 2, {"a": 1}]', '"a string"', "42", "-1.5", "true", "null", "", "   ", "plain text line", "{not json}",
    '{"a": 1', '{"a": 1} trailing', "{'single': 'quotes'}", '{"a":"\\ud800"}',
])
def test_anything_but_an_object_passes_unchanged_and_is_counted(text: str) -> None:
    t = transform("parsed")
    events = [event(text), event(text, stream="stderr")]
    batch = Batch(events, [AckGroup()], 10, events[0].ctx)
    [(port, out)] = t.process(batch)
    assert out is batch and out.events[0] is events[0]  # nothing parsed: the same batch goes on
    assert record(out.events[0]) == base(text)
    assert t.errors == {"not_json_object": 2}
    assert t.events_in == t.events_out == 2


def test_the_message_is_kept_as_written_and_read_decoded() -> None:
    text = '{"b": 1.50, "a": [1, 2], "n": 12345678901234567890123, "u": "\\u00e9t\\u00e9"}'
    out = one(transform("parsed"), event(text))
    # validated, not decoded: the record shares one MessageFields, its message is the object's text
    assert type(out.fields) is MessageFields and out.fields is one(transform("parsed"), event("{}")).fields
    assert list(out.fields) == ["parsed"] and out.message == text
    with pytest.raises(TypeError):
        out.fields["other"] = 1
    assert copy.deepcopy(out).get("parsed") == out.get("parsed")
    dropped = one(transform("parsed", drop_field=True), event(text))
    assert type(dropped.fields["parsed"]) is msgspec.Raw and dropped.get("parsed") == out.get("parsed")
    assert record(dropped) == {k: v for k, v in record(out).items() if k != "message"}
    assert encode_json(out).endswith(b',"parsed":' + text.encode() + b"}")
    assert out.get("parsed") == {"b": 1.5, "a": [1, 2], "n": 12345678901234567890123, "u": "\u00e9t\u00e9"}
    assert record(out)["parsed"] == out.get("parsed")
    # valid JSON that msgspec does not decode (beyond the float range) is still taken, read as infinity
    big = one(transform("parsed"), event('{"big": 1e999}'))
    assert big.get("parsed") == {"big": float("inf")} and record(big)["parsed"] == {"big": float("inf")}
    merged = one(transform("."), event('{"big": -1e999}'))
    assert merged.get("big") == float("-inf")
    # a line break inside the object (a multiline record) is decoded now, so the output stays one line
    pretty = one(transform("parsed"), event('{\n  "a": 1\n}'))
    assert pretty.fields == {"parsed": {"a": 1}} and b"\n" not in encode_json(pretty)


def test_leading_whitespace_and_mixed_batches_keep_order() -> None:
    t = transform("parsed")
    texts = ["first", '  {"a": 1}', "[1]", '\t{"b": {"c": 2}}\n', "last"]
    out = run(t, [event(x) for x in texts], context())
    assert [e.message for e in out] == texts
    assert [e.get("parsed") for e in out] == [None, {"a": 1}, None, {"b": {"c": 2}}, None]
    assert t.errors == {"not_json_object": 3}


def test_parsed_batch_has_no_shared_context() -> None:
    t = transform("parsed")
    ctx = context()
    [(_, out)] = t.process(Batch([event(JSON, ctx), event("x", ctx)], [AckGroup()], 10, ctx))
    assert out.ctx is None  # a batch's ctx promises events without per-record fields


def test_nested_target_creates_the_objects_on_the_way() -> None:
    out = one(transform(".app.log.json"), event(JSON))
    assert record(out) == base(JSON, app={"log": {"json": OBJ}})


def test_target_inside_a_context_field_copies_it_and_leaves_the_context_alone() -> None:
    ctx = context()
    before = copy.deepcopy(ctx.fields)
    out = one(transform(".kubernetes.app"), event(JSON, ctx))
    kube = dict(before["kubernetes"], app=OBJ)
    assert record(out) == base(JSON) | {"kubernetes": kube}
    assert ctx.fields == before  # shared by every line of the file: never changed
    assert "kubernetes" not in out.ctx.fields and out.ctx.fields["file"] == FILE
    # the derived context is made once per context and key
    assert one(transform(".kubernetes.app"), event(JSON, ctx)).ctx is out.ctx


def test_a_target_through_a_non_object_is_a_conflict_and_changes_nothing() -> None:
    t = transform(".file.parsed")
    original = event(JSON)
    assert one(t, original) is original
    assert t.errors == {"target_conflict": 1}
    t2 = transform(".parsed.inner")
    first = one(transform("parsed"), event('{"inner": 1, "x": 2}'))
    t3 = transform(".parsed.x.y")
    assert one(t3, first) is first  # .parsed.x is 2
    assert t3.errors == {"target_conflict": 1}
    assert record(one(t2, first))["parsed"] == {"inner": {"inner": 1, "x": 2}, "x": 2}


def test_target_replaces_what_is_there() -> None:
    first = one(transform("parsed"), event('{"a": 1}'))
    second = one(transform("parsed"), LogEvent('{"b": 2}', first.stream, first.timestamp, first.ctx, False, first.fields))
    assert record(second)["parsed"] == {"b": 2}
    assert first.get("parsed") == {"a": 1}


def test_merge_adds_new_keys_and_never_overwrites() -> None:
    text = json.dumps({"level": "warn", "file": "/etc/passwd", "kubernetes": {"evil": 1}, "stream": "x",
                       "timestamp": "yesterday", "truncated": True, "message": "inner", "user": {"id": 7}})
    out = one(transform("."), event(text))
    assert record(out) == base(text, level="warn", user={"id": 7})
    t = transform(".")
    clash_only = one(t, event('{"file": "x", "message": "y"}'))
    assert clash_only.fields is None and record(clash_only) == base('{"file": "x", "message": "y"}')


def test_merge_keeps_keys_an_earlier_parse_added() -> None:
    first = one(transform("."), event('{"level": "info", "a": 1}'))
    again = LogEvent('{"level": "error", "b": 2}', first.stream, first.timestamp, first.ctx, False, first.fields)
    out = one(transform("."), again)
    assert record(out) == base('{"level": "error", "b": 2}', level="info", a=1, b=2)


def test_merge_adds_a_key_that_is_null_in_the_context_record_only_if_absent() -> None:
    ctx = FileContext({})  # a record with no context fields at all
    out = one(transform("."), event('{"file": "f", "level": null}', ctx))
    rec = record(out)
    assert rec == {"message": '{"file": "f", "level": null}', "stream": "stdout", "timestamp": TS,
                   "file": "f", "level": None}


def test_drop_field_with_merge_takes_the_inner_message() -> None:
    t = transform(".", drop_field=True)
    out = one(t, event('{"message": "hello", "level": "info"}'))
    assert record(out) == base("hello", level="info")
    assert out.message == "hello" and encode_text(out) == b"hello"
    # a message that is not a string stays a JSON value
    odd = one(t, event('{"message": {"text": "hi"}, "level": "info"}'))
    assert record(odd) == base() | {"message": {"text": "hi"}, "level": "info"}
    assert odd.message is None and encode_text(odd) == b'{"text":"hi"}'
    # no message in the object: the record has none
    bare = one(t, event('{"msg": "hi"}'))
    assert record(bare) == base(msg="hi")
    assert "message" not in json.loads(encode_json(bare)) and encode_text(bare) == b""


def test_drop_field_under_a_target() -> None:
    out = one(transform("parsed", drop_field=True), event(JSON))
    assert record(out) == base(parsed=OBJ)
    assert out.message is None
    # an unparsed record keeps its field
    kept = one(transform("parsed", drop_field=True), event("not json"))
    assert kept.message == "not json"


@pytest.mark.parametrize("stream, ts, truncated", [("stdout", TS, False), (None, None, False), ("weird", None, True),
                                                   (None, TS, True)])
def test_records_without_message_are_valid_json_in_every_shape(stream: str | None, ts: str | None,
                                                              truncated: bool) -> None:
    for ctx in (context(), FileContext({})):
        ev = LogEvent('{"a": 1}', stream, ts, ctx, truncated)
        for t in (transform(".", drop_field=True), transform("parsed", drop_field=True)):
            out = one(t, ev)
            rec = record(out)
            assert "message" not in rec
        empty = one(transform(".", drop_field=True), LogEvent("{}", stream, ts, ctx, truncated))
        assert empty.fields == {} and "message" not in record(empty)


def test_field_from_an_earlier_parse_and_drop_it() -> None:
    inner = json.dumps({"payload": json.dumps({"order": 5, "items": [1]}), "level": "info"})
    first = one(transform("parsed"), event(inner))
    second = one(transform("order", field=".parsed.payload", drop_field=True), first)
    assert record(second) == base(inner, parsed={"level": "info"}, order={"order": 5, "items": [1]})
    assert record(first) == base(inner, parsed=json.loads(inner))  # the earlier event is untouched
    # the same into the parsed object itself
    third = one(transform(".parsed.payload", field=".parsed.payload"), first)
    assert record(third)["parsed"] == {"payload": {"order": 5, "items": [1]}, "level": "info"}


def test_later_transforms_on_a_record_whose_object_is_its_message() -> None:
    """A record holding the shared MessageFields is edited through a copy, in every way a later parse_json can."""
    text = '{"level": "info", "n": 1}'
    first = one(transform("parsed"), event(text))
    assert type(first.fields) is MessageFields
    again = one(transform("copy"), first)  # the message into a second key
    assert record(again) == base(text, parsed=obj_of(text), copy=obj_of(text))
    merged = one(transform("."), first)  # merged next to the parsed key, which it does not overwrite
    assert record(merged) == base(text, parsed=obj_of(text), level="info", n=1)
    dropped = one(transform("other", drop_field=True), first)  # the message dropped, the parsed key stays
    assert record(dropped) == base(None, parsed=obj_of(text), other=obj_of(text))
    replaced = one(transform("parsed"), first)  # the same key again: replaced by the same object
    assert record(replaced) == record(first)
    assert type(first.fields) is MessageFields and record(first) == base(text, parsed=obj_of(text))


def obj_of(text: str) -> dict[str, Any]:
    return json.loads(text)


def test_field_inside_the_context_dropped() -> None:
    ctx = FileContext({"file": FILE, "kubernetes": {"pod_annotations": {"cfg": '{"x": 1}', "other": "y"}}})
    out = one(transform("cfg", field=".kubernetes.pod_annotations.cfg", drop_field=True), event("line", ctx))
    assert record(out) == {"file": FILE, "kubernetes": {"pod_annotations": {"other": "y"}}, "message": "line",
                           "stream": "stdout", "timestamp": TS, "cfg": {"x": 1}}
    assert ctx.fields["kubernetes"]["pod_annotations"]["cfg"] == '{"x": 1}'


def test_a_missing_or_non_string_field_is_counted() -> None:
    t = transform("x", field=".parsed.payload")
    ev = event("plain")
    assert one(t, ev) is ev
    first = one(transform("parsed"), event('{"payload": {"already": "object"}}'))
    assert one(t, first) is first
    assert t.errors == {"field_missing": 2}


def test_filter_and_route_read_parsed_fields() -> None:
    parse = transform("parsed")
    events = run(parse, [event('{"level": "error"}'), event('{"level": "info"}'), event("text")], context())
    errors = FilterTransform("f", FilterConfig(inputs=["p"], condition='.parsed.level == "error"'))
    assert [e.get("parsed") for e in run(errors, events)] == [{"level": "error"}]
    route = RouteTransform("r", RouteConfig(inputs=["p"], route={"err": '.parsed.level == "error"',
                                                                 "parsed": "exists(.parsed)"}))
    got = {port: [e.message for e in b.events] for port, b in route.process(Batch(events, [AckGroup()], 1))}
    assert got == {"err": ['{"level": "error"}'], "parsed": ['{"level": "error"}', '{"level": "info"}'],
                   "_unmatched": ["text"]}


def test_exists_is_true_for_a_parsed_null_as_in_vrl() -> None:
    """VRL's exists() tells a missing field from a null one; so must conditions on parsed records."""
    ctx = context()
    texts = ['{"gone": null, "level": "info"}', '{"level": "info"}']
    lazy = run(transform("."), [event(text, ctx) for text in texts], ctx)  # validated, decoded when read
    decoded = run(transform("."), [event(text + " ", ctx) for text in texts], ctx)  # decoded into dicts
    under = run(transform("parsed"), [event('{"gone": null}', ctx)], ctx)
    assert lazy[0].fields is MERGED_MESSAGE and type(decoded[0].fields) is dict
    for merged in (lazy, decoded):
        _exists_agrees_with_vrl(merged)
    assert compile_condition("exists(.parsed.gone)")(under[0]) is True
    assert compile_condition("exists(.parsed.other)")(under[0]) is False
    # a null in the file's context is present too; per-line keys the record lacks are not
    ctx = FileContext({"file": FILE, "kubernetes": {"pod_name": "web-0"}, "owner": None})
    bare = LogEvent(None, None, None, ctx, False, {"x": 1})
    assert [compile_condition(f"exists(.{key})")(bare) for key in ("owner", "x", "message", "stream", "timestamp",
                                                                  "truncated")] == [True, True] + [False] * 4
    assert compile_condition("exists(.message)")(LogEvent(None, None, None, ctx, False, {"message": None}))


def _exists_agrees_with_vrl(merged: list[LogEvent]) -> None:
    assert merged[0].get("gone") is None and "gone" in record(merged[0])
    for text, expected in [("exists(.gone)", [True, False]), ("!exists(.gone)", [False, True]),
                           ("is_null(.gone)", [True, True]), ("exists(.level)", [True, True]),
                           ("exists(.missing)", [False, False])]:
        condition = compile_condition(text)
        assert [condition(e) for e in merged] == expected, text
        # the batch way of a filter (a metadata-only condition answered per context) agrees
        kept = run(FilterTransform("f", FilterConfig(inputs=["p"], condition=text)), merged)
        assert [e in kept for e in merged] == expected, text


def test_metadata_only_memo_is_not_stale_for_merged_keys() -> None:
    """``.level`` reads no per-line key, so it is cached per context; a merged ``level`` must still count."""
    ctx = context()
    condition = FilterTransform("f", FilterConfig(inputs=["p"], condition='.level == "error"'))
    assert condition._batch_condition.metadata_only
    # the context alone has no level: the memo learns "false" for this context
    assert run(condition, [event("x", ctx)], ctx) == []
    assert run(condition, [event("x", ctx)], None) == []
    parsed = run(transform("."), [event('{"level": "error"}', ctx), event('{"level": "info"}', ctx),
                                  event("plain", ctx)], ctx)
    kept = run(condition, parsed)
    assert [e.get("level") for e in kept] == ["error"]
    # records of one batch of objects are merged without decoding: the condition decodes them
    lazy = run(transform("."), [event('{"level": "error"}', ctx), event('{"level": "info"}', ctx)], ctx)
    assert all(e.fields is MERGED_MESSAGE for e in lazy)
    assert [e.get("level") for e in run(condition, lazy)] == ["error"]
    assert [e.get("level") for e in run(condition, lazy + [event("x", ctx)])] == ["error"]
    # a route on the same shape, several conditions
    route = RouteTransform("r", RouteConfig(inputs=["p"], route={"err": '.level == "error"',
                                                                 "web": '.kubernetes.pod_name == "web-0"'}))
    got = {port: [e.get("level") for e in b.events] for port, b in route.process(Batch(parsed, [AckGroup()], 1))}
    assert got == {"err": ["error"], "web": ["error", "info", None]}


def test_metadata_only_memo_is_not_stale_for_a_context_key_a_record_changed() -> None:
    ctx = context()
    by_pod = FilterTransform("f", FilterConfig(inputs=["p"], condition='.kubernetes.app.level == "error"'))
    assert run(by_pod, [event("x", ctx)], ctx) == []
    parsed = run(transform(".kubernetes.app"), [event('{"level": "error"}', ctx), event("x", ctx)], ctx)
    assert [e.message for e in run(by_pod, parsed)] == ['{"level": "error"}']
    # conditions on context keys the record did not change still use the (derived) context's memo
    by_name = FilterTransform("g", FilterConfig(inputs=["p"], condition='.file == "%s"' % FILE))
    assert len(run(by_name, parsed)) == 2
    pod = FilterTransform("h", FilterConfig(inputs=["p"], condition='.kubernetes.pod_name == "web-0"'))
    assert len(run(pod, parsed)) == 2


def test_message_conditions_on_dropped_messages() -> None:
    out = run(transform(".", drop_field=True), [event('{"message": "m", "a": 1}'), event('{"a": 2}'),
                                                event('{"message": 5}')])
    eq = FilterTransform("f", FilterConfig(inputs=["p"], condition='.message == "m"'))
    assert [e.get("a") for e in run(eq, out)] == [1]
    missing = FilterTransform("f", FilterConfig(inputs=["p"], condition="!exists(.message)"))
    assert [e.get("a") for e in run(missing, out)] == [2]
    number = FilterTransform("f", FilterConfig(inputs=["p"], condition=".message == 5"))
    assert [e.get("message") for e in run(number, out)] == [5]


CONFIG = """
sources:
  s: {type: kubernetes_logs}
transforms:
  p: %s
sinks:
  out: {type: console, inputs: [p]}
"""


@pytest.mark.parametrize("body, path, text", [
    ("{type: parse_json, inputs: [s]}", "transforms.p.target", "missing required key"),
    ("{type: parse_json, inputs: [s], target: 'a..b'}", "transforms.p.target", 'got "a..b"'),
    ("{type: parse_json, inputs: [s], target: ''}", "transforms.p.target", "expected a field path"),
    ("{type: parse_json, inputs: [s], target: '.a.\"b'}", "transforms.p.target", "expected a field path"),
    ("{type: parse_json, inputs: [s], target: .stream}", "transforms.p.target", "set by the source"),
    ("{type: parse_json, inputs: [s], target: message}", "transforms.p.target", "set by the source"),
    ("{type: parse_json, inputs: [s], target: x, field: .}", "transforms.p.field", "expected a field path"),
    ("{type: parse_json, inputs: [s], target: x, drop_field: maybe}", "transforms.p.drop_field", "true or false"),
    ("{type: parse_json, inputs: [s], target: x, into: y}", "transforms.p.into", "unknown key"),
])
def test_config_errors_name_the_key(body: str, path: str, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(CONFIG % body, {})
    assert info.value.path == path and text in str(info.value), str(info.value)


def test_config_defaults() -> None:
    config = parse_config(CONFIG % "{type: parse_json, inputs: [s], target: .}", {})
    p = config.transforms["p"]
    assert isinstance(p, ParseJsonConfig) and (p.field, p.target, p.drop_field) == ("message", ".", False)


def test_errors_are_exposed_by_reason(tmp_path: Any) -> None:
    from prometheus_client import generate_latest

    from logagent.observe.metrics import build_registry
    from logagent.topology import Topology

    text = f"""
data_dir: {tmp_path}
api: {{enabled: false}}
kubernetes: {{node_name: n, snapshot: {tmp_path / 'none.json'}}}
sources:
  s: {{type: kubernetes_logs, log_dir: {tmp_path}}}
transforms:
  p: {{type: parse_json, inputs: [s], target: .file.x}}
sinks:
  out: {{type: console, inputs: [p]}}
"""
    topology = Topology(parse_config(text, {}))
    parse = topology.transforms["p"]
    assert isinstance(parse, ParseJsonTransform)
    run(parse, [event("x"), event("[1]"), event('{"a": 1}')])
    registry, collector = build_registry(topology, process_metrics=False)
    labels = {"component_id": "p", "component_kind": "parse_json"}
    get = registry.get_sample_value
    assert get("logagent_component_errors_total", labels | {"reason": "not_json_object"}) == 2
    assert get("logagent_component_errors_total", labels | {"reason": "target_conflict"}) == 1
    assert get("logagent_component_received_events_total", labels) == 3
    assert get("logagent_component_sent_events_total", labels) == 3
    assert b"logagent_component_errors_total" in generate_latest(registry)
    assert not collector.missing_attributes


@pytest.mark.parametrize("drop_field", [False, True])
def test_a_batch_of_objects_takes_the_batch_way_with_the_same_records(drop_field: bool) -> None:
    ctx = context()
    texts = [json.dumps({"i": i, "level": "info"}) for i in range(5)] + [' {"lead": "space"}']
    events = [event(x, ctx, stream="stderr" if i % 2 else "stdout") for i, x in enumerate(texts)]
    events[3] = LogEvent(texts[3], None, None, ctx, True)
    t = transform("parsed", drop_field=drop_field)
    whole = run(t, events, ctx)  # one context: the C-level way
    one_by_one = [one(transform("parsed", drop_field=drop_field), e) for e in events]  # no batch ctx
    assert [record(e) for e in whole] == [record(e) for e in one_by_one]
    assert [e.get("parsed") for e in whole] == [json.loads(x) for x in texts]
    assert all(e.message is None for e in whole) if drop_field else [e.message for e in whole] == texts
    assert whole[3].truncated and whole[3].stream is None and not t.errors
    # one line that is not an object, or one with a line break: record by record, the same results
    mixed = run(t, events + [event("plain", ctx), event('{"a":\n1}', ctx)], ctx)
    assert [record(e) for e in mixed[:6]] == [record(e) for e in whole]
    assert mixed[6].message == "plain" and mixed[6].fields is None
    assert mixed[7].get("parsed") == {"a": 1} and b"\n" not in encode_json(mixed[7])
    assert t.errors == {"not_json_object": 1}
    # a context that already has the target key: record by record, and the key is replaced per record
    clash = FileContext({"parsed": "from the context", "file": FILE})
    out = run(transform("parsed"), [event('{"a": 1}', clash)], clash)
    assert record(out[0])["parsed"] == {"a": 1} and clash.fields["parsed"] == "from the context"


def test_a_batch_of_objects_merged_the_batch_way_gives_the_same_records() -> None:
    ctx = context()
    texts = [json.dumps({"i": i, "level": "info", "nested": {"n": [i, None]}}) for i in range(5)] + ['{"z":1} ']
    events = [event(x, ctx, stream="stderr" if i % 2 else "stdout") for i, x in enumerate(texts)]
    events[3] = LogEvent(texts[3], None, None, ctx, True)
    t = transform(".")
    t._parse = lambda e: pytest.fail("took the record-by-record way")  # type: ignore[method-assign]
    whole = run(t, events, ctx)  # one context: decoded with one map, the dicts taken as they are
    del t._parse
    one_by_one = [one(transform("."), e) for e in events]  # no batch ctx: record by record
    assert [record(e) for e in whole] == [record(e) for e in one_by_one]
    assert [{k: e.get(k) for k in json.loads(x)} for e, x in zip(whole, texts)] == [json.loads(x) for x in texts]
    assert [e.message for e in whole] == texts and whole[3].truncated and whole[3].stream is None and not t.errors
    # a trailing space: decoded, the dicts are the fields; else only validated, written from the texts
    assert all(type(e.fields) is dict for e in whole)
    plain = run(transform("."), events[:5], ctx)
    assert all(e.fields is MERGED_MESSAGE for e in plain)
    assert [record(e) for e in plain] == [record(e) for e in whole[:5]]
    assert encode_json(plain[0]).endswith(b"," + texts[0][1:].encode())
    assert copy.deepcopy(plain[0]).fields is MERGED_MESSAGE and not any(e.fields is MERGED_MESSAGE for e in one_by_one)
    with pytest.raises(TypeError):
        plain[0].fields["x"] = 1  # type: ignore[index]
    twice = run(transform("."), [event('{"a":1,"b":0,"a":2}', ctx)], ctx)[0]  # written as is, read as decoded
    assert twice.fields is MERGED_MESSAGE and record(twice)["a"] == 2 and twice.get("a") == 2
    big = run(transform("."), [event('{"big":1e999,"x":[1]}', ctx)], ctx)[0]  # beyond msgspec's floats: read as inf
    assert big.fields is MERGED_MESSAGE and record(big)["big"] == float("inf") and b"1e999" in encode_json(big)
    # any message the batch way cannot take sends the whole batch record by record, with the same results
    for extra, error in [("plain", "not_json_object"), ("[1]", "not_json_object"), ("{}", None), ("{ }", None),
                         ('{"file": "mine", "new": 1}', None), ('{"message": "inner", "stream": "x"}', None),
                         ('{"a":\n1}', None), ('{"a": 1', "not_json_object"), ('{"a": 1}}', "not_json_object"),
                         ('{"a": 1},{"b": 2}', "not_json_object"), ('{"kubernetes": null, "new": 1}', None)]:
        for before, expected in [(events, whole), (events[:5], plain)]:  # decoded and validated-only batches
            t = transform(".")
            mixed = run(t, before + [event(extra, ctx)], ctx)
            assert [record(e) for e in mixed[:-1]] == [record(e) for e in expected], extra
            assert t.errors == ({error: 1} if error else {}), extra
            last = record(mixed[-1])
            assert last["file"] == FILE and last["message"] == extra and last["stream"] == "stdout", extra
            assert last["kubernetes"] == ctx.fields["kubernetes"], extra
    assert record(run(transform("."), [event('{"file": "mine", "new": 1}', ctx)], ctx)[0])["new"] == 1
    # beyond the float range msgspec does not decode: record by record, read as infinity
    assert run(transform("."), events + [event('{"big": 1e999}', ctx)], ctx)[6].get("big") == float("inf")


@pytest.mark.parametrize("target", ["parsed", "."])
def test_a_metadata_condition_still_runs_once_per_context_after_parse_json(target: str) -> None:
    ctx = context()
    parsed = run(transform(target), [event('{"level": "error"}', ctx) for _ in range(50)] + [event("x", ctx)], ctx)
    lazy = run(transform(target), [event('{"level": "error"}', ctx) for _ in range(50)], ctx)
    parsed = lazy + parsed[50:]  # merged: MERGED_MESSAGE records, and one without fields
    keep = FilterTransform("f", FilterConfig(inputs=["p"], condition='.kubernetes.pod_name == "web-0"'))
    calls = []
    inner = keep._batch_condition.condition
    keep._batch_condition.condition = lambda record: calls.append(1) or inner(record)  # type: ignore[assignment]
    assert run(keep, parsed) == parsed
    other = FileContext(dict(ctx.fields, kubernetes={"pod_name": "db-0"}))
    assert run(keep, parsed + [event("y", other)]) == parsed
    assert len(calls) == 2  # once per context, although every record but one has its own fields


def test_a_batch_of_objects_keeps_its_context_promise_for_other_keys() -> None:
    ctx = context()
    texts = ['{"level": "error"}', '{"level": "info"}', '{"level": "error", "x": 1}']
    [(_, out)] = transform("parsed").process(Batch([event(x, ctx) for x in texts], [AckGroup()], 10, ctx))
    assert out.ctx is None and out.ctx_with_fields == (ctx, frozenset({"parsed"}))
    calls = []
    pod = FilterTransform("f", FilterConfig(inputs=["p"], condition='.kubernetes.pod_name == "web-0"'))
    inner = pod._batch_condition.condition
    pod._batch_condition.condition = lambda record: calls.append(1) or inner(record)  # type: ignore[assignment]
    [(_, kept)] = pod.process(out)
    assert kept.events == out.events and len(calls) == 1
    # a condition reading the target key is evaluated per record, whatever the promise
    errors = FilterTransform("g", FilterConfig(inputs=["p"], condition='.parsed.level == "error"'))
    assert errors._batch_condition.metadata_only
    [(_, got)] = errors.process(out)
    assert [e.message for e in got.events] == [texts[0], texts[2]]
    assert got.ctx_with_fields == out.ctx_with_fields  # subsets keep the promise
    route = RouteTransform("r", RouteConfig(inputs=["p"], route={"err": '.parsed.level == "error"',
                                                                 "web": '.kubernetes.pod_name == "web-0"'}))
    routed = {port: [e.message for e in b.events] for port, b in route.process(got)}
    assert routed == {"err": [texts[0], texts[2]], "web": [texts[0], texts[2]]}


def test_parse_json_and_remap_write_a_changed_context_key_the_same_way() -> None:
    """One set of rules (``record_fields``): the key moves into the record, one derived context for both."""
    ctx = FileContext({"file": FILE, "level": "from the context", "kubernetes": {"pod_name": "web-0"}})
    parsed = run(transform("level"), [event('{"n": 1}', ctx)])[0]
    remap = RemapTransform("r", RemapConfig(inputs=["in"], source='.level = parse_json!(string!(.message))'))
    remapped = run(remap, [event('{"n": 1}', ctx)])[0]  # type: ignore[arg-type]
    assert parsed.ctx is remapped.ctx and "level" not in parsed.ctx.fields
    assert resolved(parsed.fields, parsed.message) == resolved(remapped.fields, remapped.message) == {"level": {"n": 1}}
    assert encode_json(parsed) == encode_json(remapped)
