"""dedupe against Vector's documented behaviour: default fields, match, ignore, types, missing fields, LRU, age."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logagent.acks import AckGroup, Batch
from logagent.config import ConfigError, parse_config
from logagent.event import MERGED_MESSAGE, FileContext, LogEvent
from logagent.transforms.dedupe import DedupeTransform
from logagent.transforms.dedupe_config import DedupeConfig

CTX = FileContext({"file": "/var/log/pods/a_web_uid/c/0.log", "source_type": "kubernetes_logs",
                   "kubernetes": {"pod_namespace": "a", "pod_name": "web"}})
OTHER = FileContext({"file": "/var/log/pods/b_db_uid/c/0.log", "source_type": "kubernetes_logs",
                     "kubernetes": {"pod_namespace": "b", "pod_name": "db"}})


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(clock: FakeClock | None = None, **options: Any) -> DedupeTransform:
    config = msgspec.convert({"type": "dedupe", "inputs": ["in"], **options}, DedupeConfig)
    config.validate()
    return DedupeTransform("dd", config, clock=clock or FakeClock())


def record(message: str | None = "m", timestamp: str | None = "t1", ctx: FileContext = CTX,
           fields: dict[str, Any] | None = None) -> LogEvent:
    return LogEvent(message, "stdout", timestamp, ctx, False, fields)


def kept(transform: DedupeTransform, events: list[LogEvent]) -> list[int]:
    """Indices of the records passed on (the batch promises one context when the source would)."""
    done: list[bool] = []
    shared = events[0].ctx if events and all(e.ctx is events[0].ctx and e.fields is None for e in events) else None
    out = transform.process(Batch(events, [AckGroup(on_done=lambda: done.append(True))], 10, shared))
    passed = {id(e) for _, b in out for e in b.events}
    for _, b in out:
        b.release()
    assert done == [True]
    return [i for i, e in enumerate(events) if id(e) in passed]


@pytest.mark.parametrize(("options", "events", "expected"), [
    # default fields: message, host, timestamp
    ({}, [record(), record(), record("m", "t2"), record("n")], [0, 2, 3]),
    ({}, [record(), record(ctx=OTHER)], [0]),  # other fields do not count
    ({}, [record(fields={"host": "a"}), record(fields={"host": "b"}), record(fields={"host": "a"})], [0, 1]),
    # match: only the listed fields; the name matters, the order of the fields in the record does not
    ({"fields": {"match": ["kubernetes.pod_namespace"]}}, [record("x"), record("y"), record("z", ctx=OTHER)], [0, 2]),
    ({"fields": {"match": ["matched1", "matched2"]}},
     [record(fields={"matched1": "v"}), record(fields={"matched2": "v"})], [0, 1]),
    ({"fields": {"match": ["a", "b"]}},
     [record(fields={"a": 1, "b": 2}), record(fields={"b": 2, "a": 1})], [0]),
    # missing differs from null; types count
    ({"fields": {"match": ["v"]}},
     [record(), record(fields={"v": None}), record(fields={"v": None}), record()], [0, 1]),
    ({"fields": {"match": ["v"]}},
     [record(fields={"v": "1"}), record(fields={"v": 1}), record(fields={"v": 1.0}), record(fields={"v": True}),
      record(fields={"v": 1})], [0, 1, 2, 3]),
    ({"fields": {"match": ["v"]}},
     [record(fields={"v": {"x": 1, "y": 2}}), record(fields={"v": {"y": 2, "x": 1}}), record(fields={"v": [1, 2]})],
     [0, 2]),
    ({"fields": {"match": []}}, [record("a"), record("b")], [0]),
    # ignore: every other leaf counts
    ({"fields": {"ignore": ["timestamp"]}}, [record("m", "t1"), record("m", "t2"), record("m", "t3", OTHER)], [0, 2]),
    ({"fields": {"ignore": ["timestamp", "kubernetes.pod_name", "file", "kubernetes.pod_namespace"]}},
     [record(), record("m", "t9", OTHER)], [0]),
    # an ignored path must name a leaf: ignoring the parent object ignores none of its fields (as in Vector)
    ({"fields": {"ignore": ["timestamp", "kubernetes", "file"]}}, [record(), record("m", "t9", OTHER)], [0, 1]),
    ({"fields": {"ignore": ["timestamp"]}},
     [record(fields={"a": {"b": 1}}), record(fields={"a": {"b": 2}}), record(fields={"a": {"b": 1}})], [0, 1]),
])
def test_what_makes_a_duplicate(options: dict[str, Any], events: list[LogEvent], expected: list[int]) -> None:
    assert kept(make(**options), events) == expected


def test_cache_holds_the_most_recently_seen() -> None:
    dd = make(cache={"num_events": 2})
    assert kept(dd, [record("a"), record("b"), record("a")]) == [0, 1]  # a is used again: b is the oldest now
    assert kept(dd, [record("c")]) == [0]  # evicts b
    assert kept(dd, [record("a"), record("b")]) == [1]
    assert dd.cached == 2 and dd.discarded["duplicate"] == 2


def test_default_cache_is_5000_events() -> None:
    dd = make()
    assert kept(dd, [record(str(i)) for i in range(5001)]) == list(range(5001))
    # "0" was evicted; taking it back evicts "1" in turn; "5000" is still there
    assert kept(dd, [record("0"), record("1"), record("5000")]) == [0, 1]
    assert dd.capacity == 5000


@pytest.mark.parametrize(("refresh", "steps", "expected"), [
    # (seconds later, message) -> passed?
    (False, [(0, "a"), (0.5, "a"), (0.6, "a"), (0.1, "a")], [True, False, True, False]),
    (True, [(0, "a"), (0.5, "a"), (0.6, "a"), (1.1, "a")], [True, False, False, True]),
])
def test_time_settings(refresh: bool, steps: list[tuple[float, str]], expected: list[bool]) -> None:
    clock = FakeClock()
    dd = make(clock, time_settings={"max_age_ms": 1000, "refresh_on_drop": refresh})
    got = []
    for after, message in steps:
        clock.now += after
        got.append(kept(dd, [record(message)]) == [0])
    assert got == expected


def test_dropped_records_keep_the_order_of_the_others() -> None:
    dd = make(fields={"match": ["message"]})
    events = [record(m) for m in "abacbdc"]
    assert [events[i].message for i in kept(dd, events)] == ["a", "b", "c", "d"]


@pytest.mark.parametrize(("options", "message"), [
    ({"fields": {"match": ["a"], "ignore": ["b"]}}, "transforms.t.fields: give exactly one of match or ignore"),
    ({"fields": {}}, "transforms.t.fields: give exactly one of match or ignore"),
    ({"fields": {"match": ["a..b"]}}, "transforms.t.fields.match[0]:"),
    ({"cache": {"num_events": 0}}, "transforms.t.cache.num_events: must be a whole number above 0"),
    ({"cache": {"size": 3}}, "transforms.t.cache.size: unknown key"),
    ({"time_settings": {"refresh_on_drop": True}}, "transforms.t.time_settings.max_age_ms: missing required key"),
])
def test_bad_options_name_their_key(options: dict[str, Any], message: str) -> None:
    body = json.dumps({"type": "dedupe", "inputs": ["pods"], **options})
    text = ("kubernetes: {node_name: n}\nsources: {pods: {type: kubernetes_logs}}\n"
            f"transforms:\n  t: {body}\nsinks: {{out: {{type: console, inputs: [t]}}}}\n")
    with pytest.raises(ConfigError) as caught:
        parse_config(text, {})
    assert str(caught.value).startswith(message), str(caught.value)


@settings(max_examples=200, deadline=None)
@given(batches=st.lists(st.lists(st.integers(0, 12), max_size=12), max_size=8), capacity=st.integers(1, 6))
def test_batches_give_the_verdicts_of_one_record_at_a_time(batches: list[list[int]], capacity: int) -> None:
    """Bulk or one by one, the kept records and the cache's order are those of Vector's LRU, record by record."""
    dd = make(cache={"num_events": capacity})
    reference: OrderedDict[str, None] = OrderedDict()
    for values in batches:
        expected = []
        for index, value in enumerate(values):
            key = str(value)
            if key in reference:
                reference.move_to_end(key)
                continue
            reference[key] = None
            if len(reference) > capacity:
                reference.popitem(last=False)
            expected.append(index)
        assert kept(dd, [record(str(v)) for v in values]) == expected
        assert dd.cached_entries() == [dd.entries.entry(record(key)) for key in reference]


# -- the bulk path against record by record -----------------------------------------------------

TEXTS = st.sampled_from(["a", "b", "a\x1fb", "", "t1", "t2"])


@pytest.mark.parametrize("together", [True, False])
def test_joined_values_are_not_confused(together: bool) -> None:
    """stream "a<US>b" + message "c" is not stream "a" + message "b<US>c", in one batch or apart."""
    dd = make(fields={"match": ["stream", "message", "timestamp"]})
    first, second = LogEvent("c", "a\x1fb", "t", CTX), LogEvent("b\x1fc", "a", "t", CTX)
    if together:
        assert kept(dd, [first, second]) == [0, 1]
    else:
        assert kept(dd, [first]) == [0] and kept(dd, [second]) == [0]
    assert kept(dd, [LogEvent("c", "a\x1fb", "t", CTX), LogEvent("b\x1fc", "a", "t", CTX)]) == []


@settings(max_examples=300, deadline=None)
@given(match=st.lists(st.sampled_from(["message", "timestamp", "stream", "host", "file", "v"]), max_size=4),
       rows=st.lists(st.tuples(st.one_of(st.none(), TEXTS), st.one_of(st.none(), TEXTS), st.one_of(st.none(), TEXTS),
                               st.booleans()), min_size=1, max_size=8))
def test_a_batch_read_column_wise_gives_each_record_its_own_entry(
        match: list[str], rows: list[tuple[str | None, str | None, str | None, bool]]) -> None:
    """The columns of a one-context batch equal the records' entries made one by one."""
    dd = make(fields={"match": match} if match else None)
    ctx = CTX if rows[0][3] else OTHER
    events = [LogEvent(message if message is not None else "m", stream, timestamp, ctx)
              for timestamp, message, stream, _ in rows]
    columns = dd.entries.columns(Batch(events, [], 0, ctx))
    if columns is not None:
        prefix, indexes, rests = columns
        assert [(prefix, i, r) for i, r in zip(indexes, rests)] == [dd.entries.entry(e) for e in events]


WITHOUT_FILE = FileContext({k: v for k, v in CTX.fields.items() if k != "file"})


def shaped(m: int, t: int, shape: int) -> LogEvent:
    """0, 1: a record of file CTX, OTHER; 2: of CTX with its own fields; 3: CTX's file in its own fields;
    4: a merged object's record (parse_json into .); 5: the message dropped, a number in its fields;
    6: a compared field the context lacks in its own fields."""
    if shape == 3:
        return LogEvent(f"m{m}", "stdout", f"t{t}", WITHOUT_FILE, False, {"file": CTX.fields["file"]})
    if shape == 4:
        text = f'{{"m":{m},"host":"h"}}' if m % 2 else f'{{"m":{m}}}'
        return LogEvent(text, "stdout", f"t{t}", CTX, False, MERGED_MESSAGE)
    if shape == 5:
        return LogEvent(None, "stdout", f"t{t}", CTX, False, {"message": m})
    own = {2: {"extra": 1}, 6: {"host": "h"}}.get(shape)
    return LogEvent(f"m{m}", "stdout", f"t{t}", OTHER if shape == 1 else CTX, False, own)


@settings(max_examples=400, deadline=None)
@given(batches=st.lists(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 6)), max_size=10),
                        max_size=10),
       capacity=st.integers(1, 8), promise=st.booleans())
def test_mixed_batches_give_the_verdicts_of_one_record_at_a_time(
        batches: list[list[tuple[int, int, int]]], capacity: int, promise: bool) -> None:
    """Messages, timestamps (the index), files, own fields, merged objects mixed: Vector's LRU, one by one."""
    dd = make(cache={"num_events": capacity}, fields={"match": ["message", "timestamp", "file", "host"]})
    reference: OrderedDict[tuple[Any, ...], LogEvent] = OrderedDict()
    for rows in batches:
        events = [shaped(*row) for row in rows]
        expected = []
        for index, event in enumerate(events):
            key = (event.get("message"), event.timestamp, event.get("file"), event.get("host"))
            if key in reference:
                reference.move_to_end(key)
                continue
            reference[key] = event
            if len(reference) > capacity:
                reference.popitem(last=False)
            expected.append(index)
        if promise and events and {row[2] for row in rows} == {2}:  # what parse_json into a key promises
            batch = Batch(events, [AckGroup()], 10, None, (CTX, frozenset({"extra"})))
            out = dd.process(batch)
            assert [i for i, e in enumerate(events) if any(e is o for _, b in out for o in b.events)] == expected
        else:
            assert kept(dd, events) == expected
        assert [dd.entries.entry(event) for event in reference.values()] == dd.cached_entries()
        assert dd.cached == len(reference)


def test_memory_follows_the_cache_not_every_file_ever_seen() -> None:
    """Entries held stay within about twice the cache; the files' prefixes within those the cache uses."""
    dd = make(cache={"num_events": 100})
    for n in range(3000):
        ctx = FileContext({"file": f"/var/log/pods/ns_p{n}_uid/c/0.log", "host": f"h{n}"})
        events = [LogEvent(f"m{i}", "stdout", f"t{n}.{i}", ctx) for i in range(7)]
        assert kept(dd, events) == list(range(7))
        assert dd._cache.held <= 2 * 100 + 7
        assert dd.entries.prefixes <= max(64, 2 * (100 // 7 + 2)) + 1
    assert dd.cached == 100
