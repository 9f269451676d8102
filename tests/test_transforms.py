"""Filter and route: results, acknowledgements, and metadata-only conditions run once per file context."""

from __future__ import annotations

from typing import Any

from logagent.acks import AckGroup, Batch
from logagent.event import FileContext, LogEvent
from logagent.transforms.filter import FilterConfig, FilterTransform
from logagent.transforms.route import RouteConfig, RouteTransform


class CountingCondition:
    """Delegates to a compiled condition and counts evaluations."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def __call__(self, record: Any) -> bool:
        self.calls += 1
        return self.inner(record)


def ctx(app: str, labels: int = 3) -> FileContext:
    pod_labels = {"app": app} | {f"label-{i}": "x" * 20 for i in range(labels)}
    return FileContext({"file": f"/var/log/pods/ns_{app}_uid/c/0.log", "source_type": "kubernetes_logs",
                        "kubernetes": {"pod_labels": pod_labels, "pod_namespace": "ns"}})


def batch(context: FileContext | None, events: list[LogEvent], done: list[str], name: str) -> Batch:
    return Batch(events, [AckGroup(on_done=lambda: done.append(name))], 100, context)


def lines(context: FileContext, n: int, stream: str = "stdout") -> list[LogEvent]:
    return [LogEvent(f"line {i}", stream, "2026-12-02T10:00:00Z", context) for i in range(n)]


def counting_filter(condition: str) -> tuple[FilterTransform, CountingCondition]:
    transform = FilterTransform("f", FilterConfig(inputs=["s"], condition=condition))
    counter = CountingCondition(transform._batch_condition.condition)
    transform._batch_condition.condition = counter  # type: ignore[assignment]
    return transform, counter


def test_metadata_condition_runs_once_per_file_context_whatever_the_line_count() -> None:
    transform, counter = counting_filter('.kubernetes.pod_labels.app == "web"')
    web, db = ctx("web", labels=50), ctx("db", labels=50)
    done: list[str] = []
    kept = []
    for i in range(10):
        for context in (web, db):
            for _, out in transform.process(batch(context, lines(context, 500), done, f"{i}")):
                kept.extend(out.events)
                out.release()
    assert counter.calls == 2  # 10,000 lines, two file contexts
    assert len(kept) == 5000 and all(e.ctx is web for e in kept)
    assert len(done) == 20  # dropped batches are released too
    # a mixed batch (no shared context) still evaluates once per context
    transform.process(batch(None, lines(web, 3) + lines(db, 3), done, "mixed"))
    assert counter.calls == 2
    # new metadata (a label change makes a new context): evaluated again
    relabelled = ctx("api", labels=50)
    assert transform.process(batch(relabelled, lines(relabelled, 100), done, "new")) == []
    assert counter.calls == 3


def test_per_line_condition_runs_per_record() -> None:
    transform, counter = counting_filter('starts_with(string!(.message), "line 1")')
    web = ctx("web")
    out = transform.process(batch(web, lines(web, 20), [], "b"))
    assert counter.calls == 20
    assert [e.message for e in out[0][1].events] == ["line 1"] + [f"line {i}" for i in range(10, 20)]


def test_route_acquires_once_per_output_and_releases_when_all_are_done() -> None:
    route = RouteTransform("r", RouteConfig(inputs=["s"], route={"errors": '.stream == "stderr"', "web": '.kubernetes.pod_labels.app == "web"'}))
    web = ctx("web")
    done: list[str] = []
    events = lines(web, 3, "stdout") + lines(web, 2, "stderr")
    outputs = route.process(batch(web, events, done, "b"))
    assert sorted((name, len(b.events)) for name, b in outputs) == [("errors", 2), ("web", 5)]
    for _, out in outputs:
        assert done == []
        out.release()
    assert done == ["b"]
    db = ctx("db")
    outputs = route.process(batch(db, lines(db, 4), done, "u"))
    assert [(name, len(b.events)) for name, b in outputs] == [("_unmatched", 4)]
