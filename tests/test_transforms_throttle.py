"""throttle against Vector's documented behaviour: threshold per window, burst, keys, exclude, forgetting keys."""

from __future__ import annotations

import tracemalloc
from typing import Any

import msgspec
import structlog
import pytest

from logagent.acks import AckGroup, Batch
from logagent.config import ConfigError, parse_config
from logagent.event import FileContext, LogEvent
from logagent.transforms.throttle import MAX_METRIC_KEYS, MAX_NAMED_KEYS, OTHER_KEY, ThrottleTransform
from logagent.transforms.throttle_config import ThrottleConfig

SEC = 1_000_000_000


class FakeClock:
    def __init__(self) -> None:
        self.now = 10 * SEC

    def __call__(self) -> int:
        return self.now

    def advance(self, secs: float) -> None:
        self.now += round(secs * SEC)


def context(namespace: str, pod: str = "web") -> FileContext:
    return FileContext({"file": f"/var/log/pods/{namespace}_{pod}_uid/c/0.log", "source_type": "kubernetes_logs",
                        "kubernetes": {"pod_namespace": namespace, "pod_name": pod}})


def records(ctx: FileContext, n: int, stream: str = "stdout", start: int = 0) -> list[LogEvent]:
    return [LogEvent(f"line {start + i}", stream, "2026-12-02T10:00:00Z", ctx) for i in range(n)]


def make(clock: FakeClock | None = None, **options: Any) -> ThrottleTransform:
    config = msgspec.convert({"type": "throttle", "inputs": ["in"], **options}, ThrottleConfig)
    config.validate()
    return ThrottleTransform("thr", config, clock=clock or FakeClock())


def run(transform: ThrottleTransform, events: list[LogEvent], ctx: FileContext | None = None) -> list[LogEvent]:
    """The records passed on; the batch's acknowledgement must be settled either way."""
    done: list[bool] = []
    batch = Batch(events, [AckGroup(on_done=lambda: done.append(True))], 100 * len(events), ctx)
    out = transform.process(batch)
    kept = [event for _, b in out for event in b.events]
    for _, b in out:
        b.release()
    assert done == [True]  # released exactly once, whatever was dropped
    return kept


def test_vector_example_threshold_2_window_5() -> None:
    """Vector's own test: 2 pass, a third 2 s later is dropped, one more passes 5 s after the start."""
    clock = FakeClock()
    thr = make(clock, threshold=2, window_secs=5)
    ctx = context("a")
    assert len(run(thr, records(ctx, 2), ctx)) == 2
    clock.advance(2)
    assert run(thr, records(ctx, 1), ctx) == []
    clock.advance(3)
    assert len(run(thr, records(ctx, 1), ctx)) == 1
    # the bucket holds the whole threshold again after a window: the second token is there too
    assert len(run(thr, records(ctx, 2), ctx)) == 1
    assert thr.discarded["throttled"] == 2


@pytest.mark.parametrize(("threshold", "window", "steps", "expected"), [
    # (seconds after the previous step, records offered) -> records passed, one entry per step
    (10, 1.0, [(0, 25)], [10]),                          # the whole threshold is the burst
    (10, 1.0, [(0, 10), (0.1, 5)], [10, 1]),              # then one token per window/threshold
    (10, 1.0, [(0, 10), (0.35, 5)], [10, 3]),
    (10, 1.0, [(0, 10), (1.0, 20)], [10, 10]),            # a full window refills it all
    (10, 1.0, [(0, 3), (5.0, 20)], [3, 10]),              # never more than the threshold, however idle
    (1, 60.0, [(0, 2), (59.9, 1), (0.1, 1)], [1, 0, 1]),
    (3, 0.5, [(0, 1), (0, 1), (0, 1), (0, 1)], [1, 1, 1, 0]),  # batch by batch, as record by record
])
def test_budget_per_window(threshold: int, window: float, steps: list[tuple[float, int]], expected: list[int]) -> None:
    clock = FakeClock()
    thr = make(clock, threshold=threshold, window_secs=window)
    ctx = context("a")
    got = []
    for after, offered in steps:
        clock.advance(after)
        got.append(len(run(thr, records(ctx, offered), ctx)))
    assert got == expected


def test_rate_over_a_long_run_is_the_threshold_per_window() -> None:
    clock = FakeClock()
    thr = make(clock, threshold=1000, window_secs=1)
    ctx = context("noisy")
    passed = 0
    for _ in range(6000):  # 60 s of 10 ms batches of 50 records (5,000/s offered)
        passed += len(run(thr, records(ctx, 50), ctx))
        clock.advance(0.01)
    assert passed == 1000 + 59_990  # the first burst, then one per ms up to the last batch at 59.99 s


def test_first_records_of_a_batch_pass_and_order_is_kept() -> None:
    thr = make(threshold=3, window_secs=10)
    ctx = context("a")
    assert [e.message for e in run(thr, records(ctx, 6), ctx)] == ["line 0", "line 1", "line 2"]


def test_keys_have_their_own_budget() -> None:
    thr = make(threshold=2, window_secs=10, key_field="{{ kubernetes.pod_namespace }}")
    a, b = context("a"), context("b")
    mixed = records(a, 3) + records(b, 3) + records(a, 1, start=3)
    kept = run(thr, mixed)
    assert [(e.ctx.fields["kubernetes"]["pod_namespace"], e.message) for e in kept] == [
        ("a", "line 0"), ("a", "line 1"), ("b", "line 0"), ("b", "line 1")]
    assert thr.held_keys == 2


def test_a_record_without_the_key_field_shares_the_unnamed_bucket() -> None:
    thr = make(threshold=1, window_secs=10, key_field="{{ kubernetes.pod_labels.team }}",
               internal_metrics={"emit_events_discarded_per_key": True})
    a, b = context("a"), context("b")
    assert len(run(thr, records(a, 1) + records(b, 1))) == 1
    assert thr.discarded_by_key == {"None": 1}


def test_key_from_a_per_line_field() -> None:
    thr = make(threshold=1, window_secs=10, key_field="{{ message }}")
    ctx = context("a")
    events = [LogEvent(text, "stdout", None, ctx) for text in ("x", "y", "x", "z", "y")]
    assert [e.message for e in run(thr, events, ctx)] == ["x", "y", "z"]


@pytest.mark.parametrize("exclude", ["'.stream == \"stderr\"'", "{type: vrl, source: '.stream == \"stderr\"'}"])
def test_excluded_records_pass_and_use_no_budget(exclude: str) -> None:
    """Vector's two condition forms, read from YAML."""
    config = parse_config(
        "kubernetes: {node_name: n}\nsources: {pods: {type: kubernetes_logs}}\n"
        f"transforms:\n  thr: {{type: throttle, inputs: [pods], threshold: 2, window_secs: 10, exclude: {exclude}}}\n"
        "sinks: {out: {type: console, inputs: [thr]}}\n", {})
    thr = ThrottleTransform("thr", config.transforms["thr"], clock=FakeClock())
    ctx = context("a")
    events = records(ctx, 2, "stderr") + records(ctx, 3, "stdout", start=2) + records(ctx, 2, "stderr", start=5)
    assert [e.message for e in run(thr, events, ctx)] == ["line 0", "line 1", "line 2", "line 3", "line 5", "line 6"]


def test_per_key_metric_is_capped() -> None:
    thr = make(threshold=1, window_secs=100, key_field="{{ kubernetes.pod_namespace }}",
               internal_metrics={"emit_events_discarded_per_key": True})
    for i in range(MAX_METRIC_KEYS + 50):
        ctx = context(f"ns-{i}")
        run(thr, records(ctx, 3), ctx)
    assert len(thr.discarded_by_key) == MAX_METRIC_KEYS + 1
    assert thr.discarded_by_key[OTHER_KEY] == 50 * 2
    assert sum(thr.discarded_by_key.values()) == thr.discarded["throttled"] == (MAX_METRIC_KEYS + 50) * 2


def test_per_key_counts_are_off_by_default() -> None:
    thr = make(threshold=1, window_secs=100, key_field="{{ kubernetes.pod_namespace }}")
    ctx = context("a")
    run(thr, records(ctx, 3), ctx)
    assert thr.discarded["throttled"] == 2 and not thr.discarded_by_key


def test_memory_follows_the_active_keys() -> None:
    """100,000 keys over time, 100 active at a time: held keys stay within two windows' worth."""
    clock = FakeClock()
    thr = make(clock, threshold=5, window_secs=1, key_field="{{ kubernetes.pod_namespace }}")
    tracemalloc.start()
    try:
        peak_held = 0
        baseline = None
        for second in range(1000):
            for i in range(100):  # each key lives one second: 100 records in 10 batches of 10 ms
                ctx = context(f"ns-{second * 100 + i}")
                run(thr, records(ctx, 3), ctx)
            clock.advance(1)
            peak_held = max(peak_held, thr.held_keys)
            if second == 10:
                baseline = tracemalloc.get_traced_memory()[0]
        current = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert peak_held <= 2 * 100  # keys of the current and the previous window only
    assert baseline is not None and current - baseline < 256 * 1024  # no growth with the 99,000 later keys


@pytest.mark.parametrize(("options", "message"), [
    ({"threshold": 0, "window_secs": 1}, "transforms.t.threshold: must be a whole number from 1"),
    ({"threshold": 10, "window_secs": 0}, "transforms.t.window_secs: must be a number of seconds above 0"),
    ({"threshold": 10, "window_secs": 1, "key_field": "{{ kubernetes.pod_namespace"}, "transforms.t.key_field:"),
    ({"threshold": 10, "window_secs": 1, "exclude": ".a =="}, "transforms.t.exclude: line 1"),
    ({"threshold": 10, "window_secs": 1, "exclude": {"type": "vrl", "source": ".a =="}}, "transforms.t.exclude.source:"),
    ({"threshold": 10, "window_secs": 1, "internal_metrics": {"per_key": True}}, "transforms.t.internal_metrics.per_key"),
    ({"window_secs": 1}, "transforms.t.threshold: missing required key"),
])
def test_bad_options_name_their_key(options: dict[str, Any], message: str) -> None:
    import json
    body = json.dumps({"type": "throttle", "inputs": ["pods"], **options})
    text = ("kubernetes: {node_name: n}\nsources: {pods: {type: kubernetes_logs}}\n"
            f"transforms:\n  t: {body}\nsinks: {{out: {{type: console, inputs: [t]}}}}\n")
    with pytest.raises(ConfigError) as caught:
        parse_config(text, {})
    assert str(caught.value).startswith(message), str(caught.value)


def test_the_agent_log_names_a_throttled_key_once_a_minute() -> None:
    """One warning per key per minute, carrying the records dropped since the key's last warning."""
    clock = FakeClock()
    thr = make(clock, threshold=1, window_secs=1, key_field="{{ kubernetes.pod_namespace }}")
    a, b = context("a"), context("b")
    with structlog.testing.capture_logs() as logs:
        run(thr, records(a, 5), a)           # 4 dropped: named at once
        run(thr, records(b, 3), b)           # another key: its own warning
        for _ in range(50):                  # throttled for 50 s more: counted, not logged
            clock.advance(1)
            run(thr, records(a, 3), a)
        clock.advance(11)                    # a minute after the first warning
        run(thr, records(a, 3), a)
        clock.advance(1)
        run(thr, records(a, 4), a)           # 3 more, then the key goes quiet
        clock.advance(61)
        run(thr, records(b, 1), b)           # any batch a minute later: the last drops are told, once
        clock.advance(61)
        run(thr, records(b, 1), b)
    warnings = [(e["key"], e["discarded"]) for e in logs if e["event"] == "throttling records over the threshold"]
    assert warnings == [("a", 4), ("b", 2), ("a", 50 * 2 + 2), ("a", 3)]
    assert all(e["log_level"] == "warning" and e["component_id"] == "thr" for e in logs)


def test_keys_named_in_the_log_are_bounded_and_forgotten() -> None:
    clock = FakeClock()
    thr = make(clock, threshold=1, window_secs=1, key_field="{{ kubernetes.pod_namespace }}")
    with structlog.testing.capture_logs() as logs:
        for i in range(MAX_NAMED_KEYS + 500):
            ctx = context(f"ns-{i}")
            run(thr, records(ctx, 2), ctx)
        assert len(thr._named) == MAX_NAMED_KEYS
        clock.advance(61)
        ctx = context("late")
        run(thr, records(ctx, 1), ctx)
    assert not thr._named and thr.held_keys == 1  # nothing left of the 4,596 throttled keys but the last one
    assert len(logs) == MAX_NAMED_KEYS + 500  # each named once, when first throttled


def test_metrics_count_discards_by_reason_and_per_key() -> None:
    """``logagent_component_discarded_events_total{reason="throttled"}``, per key when asked, and the keys held."""
    from types import SimpleNamespace

    from logagent.observe.metrics.components import discarded_families

    thr = make(threshold=1, window_secs=10, key_field="{{ kubernetes.pod_namespace }}",
               internal_metrics={"emit_events_discarded_per_key": True})
    for namespace, n in (("a", 4), ("b", 2)):
        ctx = context(namespace)
        run(thr, records(ctx, n), ctx)
    samples = {(m.name, s.labels.get("reason") or s.labels.get("key", "")): s.value
               for m in discarded_families(SimpleNamespace(transforms={"thr": thr})) for s in m.samples}
    assert samples == {
        ("logagent_component_discarded_events", "throttled"): 4,
        ("logagent_component_discarded_events_by_key", "a"): 3,
        ("logagent_component_discarded_events_by_key", "b"): 1,
        ("logagent_throttle_keys", ""): 2,
    }
