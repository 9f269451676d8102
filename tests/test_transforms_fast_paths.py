"""The hot-path shortcuts of filter/route give exactly what evaluating each record gives."""

from __future__ import annotations

import itertools

from logagent.acks import AckGroup, Batch
from logagent.vrl.condition import compile_condition
from logagent.encoding import encode_json, encode_ndjson
from logagent.event import FileContext, LogEvent
from logagent.transforms.base import BatchCondition
from logagent.transforms.route import UNMATCHED, RouteConfig, RouteTransform

CTX_A = FileContext({"file": "/a.log", "kubernetes": {"pod_labels": {"tier": "frontend"}}})
CTX_B = FileContext({"file": "/b.log", "kubernetes": {"pod_labels": {"tier": "backend"}}})
CTX_EMPTY = FileContext({})


def sample_events() -> list[LogEvent]:
    streams = ["stdout", "stderr", None, "other"]
    messages = ["hello", "stderr", "", 'quote " and \\ and \u00e9\n']
    timestamps = ["2026-12-02T10:00:00.000000001Z", None]
    out = []
    for stream, message, timestamp, ctx, truncated in itertools.product(
        streams, messages, timestamps, (CTX_A, CTX_B, CTX_EMPTY), (False, True)
    ):
        out.append(LogEvent(message, stream, timestamp, ctx, truncated))
    return out


def test_field_equality_shape_is_recognised_only_for_plain_text_comparisons() -> None:
    assert compile_condition('.stream == "stderr"').field_equals == ("stream", "stderr")
    assert compile_condition('"x" == .message').field_equals == ("message", "x")
    # .timestamp is a timestamp to a program (as in Vector): it never equals a text
    for text in ('.stream != "x"', ".stream == 1", '.a.b == "x"', '.stream == "x" && true', ".stream == null",
                 '.timestamp == "2026-12-02T10:00:00.000000001Z"'):
        assert compile_condition(text).field_equals is None, text


def test_field_equality_split_matches_per_record_evaluation() -> None:
    events = sample_events()
    batch = Batch(events, [AckGroup()], 100)
    for text in ('.stream == "stderr"', '"hello" == .message', '.message == "stderr"'):
        cond = BatchCondition(compile_condition(text))
        assert cond.field_equals is not None
        matched, unmatched = cond.split(batch)
        reference = compile_condition(text)
        assert matched == [e for e in events if reference(e)]
        assert unmatched == [e for e in events if not reference(e)]


def test_route_by_one_field_matches_per_record_evaluation() -> None:
    events = sample_events()
    routes = {"out": '.stream == "stdout"', "err": '.stream == "stderr"', "again": '.stream == "stdout"'}
    route = RouteTransform("r", RouteConfig(inputs=["s"], route=routes))
    ack = AckGroup()
    produced = dict((name, b.events) for name, b in route.process(Batch(events, [ack], 100)))
    for name, text in routes.items():
        condition = compile_condition(text)
        assert produced.get(name, []) == [e for e in events if condition(e)], name
    conditions = [compile_condition(t) for t in routes.values()]
    assert produced[UNMATCHED] == [e for e in events if not any(c(e) for c in conditions)]
    assert ack.pending == len(produced)



def test_encode_ndjson_is_encode_json_per_line() -> None:
    events = sample_events()
    assert encode_ndjson(events) == b"".join(encode_json(e) + b"\n" for e in events)
    assert encode_ndjson([]) == b""


def test_console_writev_delivers_every_byte_through_a_small_pipe() -> None:
    import os
    import threading

    from logagent.encoding import encode_ndjson_parts
    from logagent.sinks.console import _write_parts

    events = sample_events() * 40
    parts = encode_ndjson_parts(events)
    read_fd, write_fd = os.pipe()
    received = bytearray()

    def drain() -> None:
        while chunk := os.read(read_fd, 4096):
            received.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    assert _write_parts(write_fd, parts) == sum(map(len, parts))
    os.close(write_fd)
    reader.join(timeout=10)
    os.close(read_fd)
    assert bytes(received) == encode_ndjson(events)
