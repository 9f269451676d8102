"""sample against Vector's documented behaviour: rate, ratio, key_field hashing, group_by, exclude, sample_rate_key,
ratio_field and rate_field."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from logagent.acks import AckGroup, Batch
from logagent.config import ConfigError, parse_config
from logagent.encoding import encode_json
from logagent.event import FileContext, LogEvent
from logagent.transforms.options import number_text
from logagent.transforms.sample import SampleTransform
from logagent.transforms.sample_config import SampleConfig
from logagent.transforms.seahash import seahash


def context(namespace: str = "a") -> FileContext:
    return FileContext({"file": f"/var/log/pods/{namespace}_web_uid/c/0.log", "source_type": "kubernetes_logs",
                        "kubernetes": {"pod_namespace": namespace}})


def records(ctx: FileContext, n: int, start: int = 0, stream: str = "stdout") -> list[LogEvent]:
    return [LogEvent(f"line {start + i}", stream, "2026-12-02T10:00:00Z", ctx) for i in range(n)]


def make(**options: Any) -> SampleTransform:
    config = msgspec.convert({"type": "sample", "inputs": ["in"], **options}, SampleConfig)
    config.validate()
    return SampleTransform("smp", config)


def run(transform: SampleTransform, events: list[LogEvent], ctx: FileContext | None = None) -> list[LogEvent]:
    done: list[bool] = []
    out = transform.process(Batch(events, [AckGroup(on_done=lambda: done.append(True))], 10 * len(events), ctx))
    kept = [event for _, b in out for event in b.events]
    for _, b in out:
        if ctx is not None and b.ctx is not None:
            assert all(e.ctx is b.ctx for e in b.events)  # the batch's promise holds
        b.release()
    assert done == [True]
    return kept


def numbers(events: list[LogEvent]) -> list[int]:
    return [int(e.message.split()[1]) for e in events]  # type: ignore[union-attr]


def test_seahash_matches_the_rust_crate() -> None:
    # the crate's documented example, and values from its reference implementation
    assert seahash(b"to be or not to be") == 1988685042348123509
    assert seahash(b"") == 14492805990617963705
    assert seahash(b"kube-system") == 13801728231793996662
    assert seahash(b"123456789") == 13331223911193280505


@pytest.mark.parametrize(("rate", "batches", "expected"), [
    (1, [5], [0, 1, 2, 3, 4]),
    (3, [10], [0, 3, 6, 9]),
    (3, [2, 2, 2, 4], [0, 3, 6, 9]),  # the counter runs across batches
    (10, [1] * 25, [0, 10, 20]),
])
def test_rate_keeps_the_first_then_every_nth(rate: int, batches: list[int], expected: list[int]) -> None:
    smp = make(rate=rate)
    ctx = context()
    kept: list[LogEvent] = []
    start = 0
    for size in batches:
        kept += run(smp, records(ctx, size, start), ctx)
        start += size
    assert numbers(kept) == expected
    assert smp.discarded["sampled"] == start - len(expected)


@pytest.mark.parametrize(("ratio", "n", "expected"), [
    (0.5, 6, [0, 2, 4]),      # Vector's RatioSampler test: true, false, true, false, ...
    (1.0, 4, [0, 1, 2, 3]),
    (0.25, 9, [0, 4, 8]),
    (0.75, 8, [0, 2, 3, 4, 6, 7]),
])
def test_ratio_spreads_the_kept_records(ratio: float, n: int, expected: list[int]) -> None:
    smp = make(ratio=ratio)
    ctx = context()
    assert numbers(run(smp, records(ctx, n), ctx)) == expected


def test_ratio_over_many_records() -> None:
    smp = make(ratio=0.13)
    ctx = context()
    assert 12_999 <= len(run(smp, records(ctx, 100_000), ctx)) <= 13_001


def test_key_field_keeps_records_by_the_hash_of_the_value() -> None:
    smp = make(rate=4, key_field="message")
    ctx = context()
    events = [LogEvent(f"trace-{i % 50}", "stdout", None, ctx) for i in range(500)]
    kept = run(smp, events, ctx)
    chosen = {e.message for e in kept}
    assert chosen == {f"trace-{i}" for i in range(50) if seahash(f"trace-{i}".encode()) % 4 == 0}
    assert len(kept) == 10 * len(chosen)  # all records of a chosen value, none of the others
    again = make(rate=4, key_field="message")  # the same choice on another agent or after a restart
    assert {e.message for e in run(again, events, ctx)} == chosen


def test_key_field_with_ratio_compares_the_hash_with_ratio_of_2_64() -> None:
    smp = make(ratio=0.3, key_field="kubernetes.pod_namespace")
    names = [f"ns-{i}" for i in range(200)]
    kept = set()
    for name in names:
        ctx = context(name)
        if run(smp, records(ctx, 1), ctx):
            kept.add(name)
    assert kept == {n for n in names if seahash(n.encode()) <= int(0.3 * 2.0**64)}


def test_records_without_the_key_field_use_the_counter() -> None:
    smp = make(rate=2, key_field="trace_id")
    ctx = context()
    assert numbers(run(smp, records(ctx, 6), ctx)) == [0, 2, 4]


def test_group_by_keeps_a_counter_per_group() -> None:
    smp = make(rate=3, group_by="{{ kubernetes.pod_namespace }}")
    a, b = context("a"), context("b")
    events = records(a, 4) + records(b, 4, start=100) + records(a, 3, start=4)
    assert numbers(run(smp, events)) == [0, 3, 100, 103, 6]


def test_exclude_keeps_matching_records_and_counts_only_the_others() -> None:
    smp = make(rate=2, exclude='.stream == "stderr"')
    ctx = context()
    events = records(ctx, 3, 0, "stderr") + records(ctx, 4, 3) + records(ctx, 1, 7, "stderr")
    kept = run(smp, events, ctx)
    assert numbers(kept) == [0, 1, 2, 3, 5, 7]
    # excluded records are passed on untouched (no sample_rate); sampled ones carry it
    assert [json.loads(encode_json(e)).get("sample_rate") for e in kept] == [None, None, None, "2", "2", None]


@pytest.mark.parametrize(("options", "key", "value"), [
    ({"rate": 10}, "sample_rate", "10"),
    ({"ratio": 0.13}, "sample_rate", "0.13"),
    ({"ratio": 1.0}, "sample_rate", "1"),
    ({"rate": 10, "sample_rate_key": "meta.rate"}, "meta", {"rate": "10"}),
    ({"rate": 10, "sample_rate_key": ""}, "sample_rate", None),
])
def test_sample_rate_key(options: dict[str, Any], key: str, value: Any) -> None:
    smp = make(**options)
    ctx = context()
    kept = run(smp, records(ctx, 3), ctx)
    record = json.loads(encode_json(kept[0]))
    assert record.get(key) == value
    assert record["kubernetes"] == {"pod_namespace": "a"} and record["message"] == "line 0"
    assert kept[0].get(key) == value  # conditions downstream see it too


def test_sample_rate_on_records_with_their_own_fields() -> None:
    smp = make(rate=1)
    ctx = context()
    event = LogEvent("x", "stdout", None, ctx, False, {"parsed": {"a": 1}})
    [out] = run(smp, [event], ctx)
    assert json.loads(encode_json(out)) | {} == {**json.loads(encode_json(event)), "sample_rate": "1"}


@pytest.mark.parametrize(("value", "text"), [(10, "10"), (0.13, "0.13"), (1.0, "1"), (1e-7, "0.0000001"),
                                             (2.5e20, "250000000000000000000"), (True, "true")])
def test_numbers_are_written_as_vector_writes_them(value: Any, text: str) -> None:
    assert number_text(value) == text


@pytest.mark.parametrize(("options", "message"), [
    ({"rate": 10, "ratio": 0.5}, "transforms.t.rate: give either rate or ratio"),
    ({}, "transforms.t.rate: exactly one of rate or ratio"),
    ({"rate": 0}, "transforms.t.rate: must be a whole number above 0"),
    ({"ratio": 0}, "transforms.t.ratio: must be above 0"),
    ({"ratio": 1.5}, "transforms.t.ratio: must be above 0 and at most 1"),
    ({"rate": 2, "group_by": "{{ a"}, "transforms.t.group_by:"),
    ({"rate": 2, "key_field": "a..b"}, "transforms.t.key_field:"),
    ({"rate": 2, "sample_rate_key": "message"}, "transforms.t.sample_rate_key:"),
    ({"rate": 2, "exclude": ".a =="}, "transforms.t.exclude: line 1"),
    ({"rate": 2, "rate_field": "x", "ratio_field": "y"}, "transforms.t.ratio_field: give either ratio_field or"),
    ({"rate": 2, "rate_field": "x", "key_field": "y"}, "transforms.t.key_field: cannot be combined with ratio_field"),
    ({"rate": 2, "ratio_field": "a..b"}, "transforms.t.ratio_field:"),
    ({"ratio_field": "x"}, "transforms.t.rate: exactly one of rate or ratio"),  # the static fallback is required
])
def test_bad_options_name_their_key(options: dict[str, Any], message: str) -> None:
    body = json.dumps({"type": "sample", "inputs": ["pods"], **options})
    text = ("kubernetes: {node_name: n}\nsources: {pods: {type: kubernetes_logs}}\n"
            f"transforms:\n  t: {body}\nsinks: {{out: {{type: console, inputs: [t]}}}}\n")
    with pytest.raises(ConfigError) as caught:
        parse_config(text, {})
    assert str(caught.value).startswith(message), str(caught.value)


# -- ratio_field / rate_field: a record's own ratio or rate ------------------------------------------------


def own(value: Any, service: str = "a", n: int = 0) -> LogEvent:
    fields = {"service": service} if value is _NONE else {"service": service, "dyn": value}
    return LogEvent(f"line {n}", "stdout", "2026-12-02T10:00:00Z", context(), False, fields)


_NONE = object()


@pytest.mark.parametrize(("field", "value", "label"), [
    ("ratio_field", 1.0, "1"), ("ratio_field", 1, "1"), ("ratio_field", "1", "1"), ("ratio_field", "1.0", "1"),
    ("rate_field", 1, "1"), ("rate_field", "1", "1"), ("rate_field", "+1", "1"),
])
def test_a_records_own_value_overrides_the_static_settings(field: str, value: Any, label: str) -> None:
    """Vector's tests: a ratio or rate of 1 keeps the record whatever the static setting, labelled with it."""
    smp = make(rate=1_000_000, **{field: "dyn"})
    kept = run(smp, [own("x", n=0), own(value, n=1)])  # the first record takes the static counter's one
    assert numbers(kept) == [0, 1]
    assert kept[1].get("sample_rate") == label and kept[0].get("sample_rate") == "1000000"


@pytest.mark.parametrize(("field", "value"), [
    ("ratio_field", _NONE), ("ratio_field", None), ("ratio_field", 0), ("ratio_field", 0.0), ("ratio_field", 1.5),
    ("ratio_field", -0.5), ("ratio_field", "abc"), ("ratio_field", " 0.5"), ("ratio_field", "0_5"),
    ("ratio_field", True), ("ratio_field", "nan"), ("ratio_field", {"a": 1}),
    ("rate_field", _NONE), ("rate_field", 0), ("rate_field", -3), ("rate_field", 2.0), ("rate_field", "2.0"),
    ("rate_field", "0x10"), ("rate_field", " 3"), ("rate_field", True), ("rate_field", "0"),
    ("rate_field", str(1 << 64)), ("rate_field", 1 << 63),
])
def test_without_a_valid_own_value_the_static_settings_apply(field: str, value: Any) -> None:
    """Missing or invalid (Vector's rules: floats are no rate, strings parse as Rust parses numbers): static."""
    smp = make(rate=3, **{field: "dyn"})
    kept = run(smp, [own(value, n=i) for i in range(7)])
    assert numbers(kept) == [0, 3, 6] and {e.get("sample_rate") for e in kept} == {"3"}


@pytest.mark.parametrize(("field", "values", "low", "high"), [
    ("ratio_field", [0.25, 0.75], (80, 220), (300, 450)),
    ("ratio_field", ["0.25", "0.75"], (80, 220), (300, 450)),
    ("rate_field", [2, 3], (220, 380), (130, 280)),
])
def test_mixed_own_values_are_kept_at_their_rates(field: str, values: list[Any], low: tuple[int, int],
                                                 high: tuple[int, int]) -> None:
    """Vector's tests: one group, two values alternating; each kept at about its own rate."""
    smp = make(rate=1_000_000, group_by="{{ service }}", **{field: "dyn"})
    per_value = 500 if field == "ratio_field" else 600
    events = [own(values[i % 2], "service-a", i) for i in range(2 * per_value)]
    kept = run(smp, events)
    counts = [sum(1 for e in kept if e.get("dyn") == value) for value in values]
    assert low[0] <= counts[0] < low[1] and high[0] <= counts[1] < high[1], counts
    labels = {e.get("dyn"): e.get("sample_rate") for e in kept}
    assert labels == {value: number_text(float(value)) if field == "ratio_field" else str(value) for value in values}


@pytest.mark.parametrize(("field", "value"), [("ratio_field", 0.5), ("rate_field", 2)])
def test_each_group_has_its_own_counter(field: str, value: Any) -> None:
    """Vector's tests: two services interleaved are each kept at about the rate; and a group's verdicts do not
    depend on the other group's records."""
    smp = make(rate=1_000_000, group_by="{{ service }}", **{field: "dyn"})
    events = [own(value, service, i) for i in range(200) for service in ("service-a", "service-b")]
    kept = run(smp, events)
    per_service = {s: [e for e in kept if e.get("service") == s] for s in ("service-a", "service-b")}
    assert all(60 <= len(v) < 140 for v in per_service.values()), {s: len(v) for s, v in per_service.items()}
    alone = run(make(rate=1_000_000, group_by="{{ service }}", **{field: "dyn"}),
                [own(value, "service-a", i) for i in range(200)])
    assert numbers(alone) == numbers(per_service["service-a"])


def test_records_with_and_without_an_own_value_keep_separate_counters() -> None:
    """Records falling back to the static rate are counted apart from those decided by their own value."""
    smp = make(rate=2, rate_field="dyn")
    events = [own(1 if i % 3 else _NONE, n=i) for i in range(12)]  # 0, 3, 6, 9 have none
    kept = run(smp, events)
    assert [n for n in numbers(kept) if n % 3 == 0] == [0, 6]  # the static counter saw 0, 3, 6, 9
    assert [n for n in numbers(kept) if n % 3] == [n for n in range(12) if n % 3]  # rate 1: all


def test_excluded_records_advance_no_counter_and_get_no_rate() -> None:
    smp = make(rate=1_000_000, rate_field="dyn", exclude='.service == "skip"')
    kept = run(smp, [own(1, "skip", 0), own(1, "a", 1)])
    assert numbers(kept) == [0, 1] and kept[0].get("sample_rate") is None and kept[1].get("sample_rate") == "1"
