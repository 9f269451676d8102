"""Metrics, the API server and rate-limited warnings, against a real topology."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import logagent
from logagent.config import parse_config
from logagent.observe.health import parse_address, readiness, start_api_server
from logagent.observe.metrics import LABEL_NAMES, TopologyCollector, build_registry
from logagent.observe.ratelimit import RateLimitedLogger, RateLimiter, warn_limited
from logagent.topology import Topology

NODE = "node-a"
WEB_UID = "11111111-2222-4333-8444-555555555555"
ORPHAN_UID = "99999999-0000-4000-8000-000000000000"
TIMEOUT = 30

WEB_LINES = (
    b"2026-12-02T10:00:00.000000001Z stdout F hello 1\n"
    b"2026-12-02T10:00:00.000000002Z stdout F hello 2\n"
    b"2026-12-02T10:00:00.000000003Z stderr P part one, \n"
    b"2026-12-02T10:00:00.000000004Z stderr F part two\n"
    b"not a log line at all\n"
)
ORPHAN_LINES = (
    b"2026-12-02T10:00:01.000000001Z stdout F unknown pod 1\n"
    b"2026-12-02T10:00:01.000000002Z stdout F unknown pod 2\n"
)
#: 4 records from web-0 (the stderr parts merge) + 2 from the unknown pod
SOURCE_EVENTS = 6
#: stdout records (4) pass the filter; by_stream.errors adds the merged stderr one
SINK_EVENTS = 5

#: counters the collector looks for that the components do not keep yet;
#: the real classes must never lack anything else (a renamed attribute fails here)
KNOWN_GAPS: set[str] = set()


def _pod(namespace: str, name: str, uid: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": "1", "labels": {"app": name}},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "example/app:1"}]},
        "status": {"podIP": "10.0.0.5"},
    }


@pytest.fixture
def cluster(tmp_path: Path) -> dict[str, Path]:
    pods = tmp_path / "pods"
    web = pods / f"user-bob_web-0_{WEB_UID}" / "app"
    web.mkdir(parents=True)
    (web / "0.log").write_bytes(WEB_LINES)
    orphan = pods / f"user-eve_gone-1_{ORPHAN_UID}" / "main"
    orphan.mkdir(parents=True)
    (orphan / "0.log").write_bytes(ORPHAN_LINES)
    snapshot = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            _pod("user-bob", "web-0", WEB_UID, NODE),
            _pod("user-bob", "elsewhere-0", "00000000-0000-4000-8000-0000000000ee", "node-b"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "user-bob", "resourceVersion": "7"}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "user-eve", "resourceVersion": "8"}},
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "resourceVersion": "9"}},
        ],
    }
    (tmp_path / "cluster.json").write_text(json.dumps(snapshot))
    return {"root": tmp_path, "pods": pods, "web": web / "0.log", "orphan": orphan / "0.log"}


def make_topology(cluster: dict[str, Path], fd: int) -> Topology:
    root = cluster["root"]
    text = f"""
data_dir: {root / 'data'}
api: {{enabled: false}}
kubernetes:
  node_name: ${{NODE_NAME}}
  snapshot: {root / 'cluster.json'}
sources:
  app:
    type: kubernetes_logs
    log_dir: {cluster['pods']}
    insert_namespace_fields: true
    insert_node_fields: true
transforms:
  keep_stdout:
    type: filter
    inputs: [app]
    condition: 'string!(.stream) == "stdout"'
  by_stream:
    type: route
    inputs: [app]
    route:
      errors: '.stream == "stderr"'
      no_stream: '.stream == null'
sinks:
  out:
    type: console
    inputs: [keep_stdout, by_stream.errors]
"""
    return Topology(parse_config(text, {"NODE_NAME": NODE}), stdout_fd=fd)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def assert_bounded_labels(exposition: str) -> None:
    """Every label is from the bounded vocabulary; no pod, uid or path leaks into one."""
    families = list(text_string_to_metric_families(exposition))
    assert families
    for family in families:
        assert family.name.startswith("logagent_"), family.name
        assert family.documentation, f"{family.name} has no HELP"
        for sample in family.samples:
            assert set(sample.labels) <= LABEL_NAMES, (sample.name, sample.labels)
            for label_value in sample.labels.values():
                assert "/" not in label_value and "web-0" not in label_value, (sample.name, sample.labels)
                assert WEB_UID not in label_value and ORPHAN_UID not in label_value


def read_available(fd: int) -> bytes:
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


async def wait_until(predicate: Any, what: str) -> None:
    try:
        async with asyncio.timeout(TIMEOUT):
            while not predicate():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


# ----------------------------------------------------------------- collector


async def test_once_run_counters_match_the_files(cluster: dict[str, Path]) -> None:
    read_fd, write_fd = os.pipe()
    try:
        topology = make_topology(cluster, write_fd)
        registry, collector = build_registry(topology)
        async with asyncio.timeout(TIMEOUT):
            await topology.run(once=True)
        written = read_available(read_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert len(written.splitlines()) == SINK_EVENTS
    file_bytes = len(WEB_LINES) + len(ORPHAN_LINES)

    def component(name: str, cid: str, kind: str) -> float | None:
        return value(registry, name, component_id=cid, component_kind=kind)

    assert component("logagent_component_sent_events_total", "app", "kubernetes_logs") == SOURCE_EVENTS
    assert component("logagent_component_received_bytes_total", "app", "kubernetes_logs") == file_bytes
    assert component("logagent_component_received_events_total", "keep_stdout", "filter") == SOURCE_EVENTS
    assert component("logagent_component_sent_events_total", "keep_stdout", "filter") == 4
    assert value(registry, "logagent_component_discarded_events_total", component_id="keep_stdout",
                 component_kind="filter", reason="filtered") == 2
    assert component("logagent_component_received_events_total", "by_stream", "route") == SOURCE_EVENTS
    assert component("logagent_component_sent_events_total", "by_stream", "route") == SOURCE_EVENTS
    assert component("logagent_component_sent_events_total", "out", "console") == SINK_EVENTS
    assert component("logagent_component_sent_bytes_total", "out", "console") == len(written)
    # the malformed line has no stream: string!(null) fails in the filter only
    assert component("logagent_condition_runtime_errors_total", "keep_stdout", "filter") == 1
    assert component("logagent_condition_runtime_errors_total", "by_stream", "route") == 0

    assert value(registry, "logagent_parse_errors_total", component_id="app") == 1
    assert value(registry, "logagent_lines_truncated_total", component_id="app") == 0
    assert value(registry, "logagent_enrichment_misses_total", component_id="app") == 2
    assert value(registry, "logagent_file_bytes_read_total", component_id="app") == file_bytes
    assert value(registry, "logagent_files_opened_total", component_id="app") == 2
    assert value(registry, "logagent_unacked_bytes", component_id="app") == 0

    assert value(registry, "logagent_sink_queue_events", component_id="out") == 0
    assert value(registry, "logagent_sink_queue_fill_ratio", component_id="out") == 0
    # a console sink makes no requests: no request samples for it
    assert value(registry, "logagent_sink_requests_total", component_id="out", component_kind="console", status="2xx") is None

    assert value(registry, "logagent_kube_synced") == 1
    assert value(registry, "logagent_kube_store_objects", resource="pods") == 1  # the other node's pod is not kept
    assert value(registry, "logagent_kube_store_objects", resource="namespaces") == 2
    assert value(registry, "logagent_kube_store_objects", resource="nodes") == 1
    assert value(registry, "logagent_kube_events_total", resource="pods") == 1
    assert value(registry, "logagent_kube_relists_total", resource="pods") == 0

    assert value(registry, "logagent_process_resident_memory_bytes") > 0
    assert value(registry, "logagent_build_info", version=logagent.__version__) == 1
    assert_bounded_labels(generate_latest(registry).decode())
    # what is missing is named (and left out), never invented as a zero
    assert collector.missing_attributes <= KNOWN_GAPS


async def test_api_server_on_a_running_topology(cluster: dict[str, Path]) -> None:
    with open(os.devnull, "wb") as devnull:
        topology = make_topology(cluster, devnull.fileno())
        server = await start_api_server(topology, "127.0.0.1:0")
        run: asyncio.Task[None] | None = None
        try:
            assert server.port > 0
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as http:
                async with http.get(f"{server.url}/health") as response:
                    assert response.status == 200
                    assert await response.json() == {"status": "ok"}
                async with http.get(f"{server.url}/ready") as response:
                    assert response.status == 503
                    body = await response.json()
                    assert body["status"] == "not ready"
                    assert "sinks are not started" in body["reasons"]
                    assert "kubernetes metadata is not synced" in body["reasons"]

                run = asyncio.create_task(topology.run())
                sink = topology.sinks["out"]
                await wait_until(lambda: sink.events_sent == SINK_EVENTS, "records delivered")  # type: ignore[attr-defined]
                async with http.get(f"{server.url}/ready") as response:
                    assert response.status == 200
                    assert await response.json() == {"status": "ready"}

                samples = await scrape(http, server.url)
                assert samples[("logagent_ready", ())] == 1
                assert samples[("logagent_files_open", (("component_id", "app"),))] == 2
                assert samples[("logagent_files_open_deleted", (("component_id", "app"),))] == 0
                sent = ("logagent_component_sent_events_total", (("component_id", "out"), ("component_kind", "console")))
                assert samples[sent] == SINK_EVENTS

                # a line appended while running shows up in the next scrape
                with open(cluster["web"], "ab") as log_file:
                    log_file.write(b"2026-12-02T10:00:05.000000001Z stdout F appended\n")
                await wait_until(lambda: sink.events_sent == SINK_EVENTS + 1, "appended record delivered")  # type: ignore[attr-defined]
                samples = await scrape(http, server.url)
                assert samples[sent] == SINK_EVENTS + 1
                received = ("logagent_component_received_bytes_total",
                            (("component_id", "app"), ("component_kind", "kubernetes_logs")))
                assert samples[received] == cluster["web"].stat().st_size + cluster["orphan"].stat().st_size
                async with http.get(f"{server.url}/metrics") as response:
                    assert_bounded_labels(await response.text())
        finally:
            topology.request_stop()
            if run is not None:
                async with asyncio.timeout(TIMEOUT):
                    await run
            await server.stop()


async def scrape(http: aiohttp.ClientSession, url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    async with http.get(f"{url}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain; version=")
        text = await response.text()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_real_components_expose_what_the_collector_reads(cluster: dict[str, Path]) -> None:
    root = cluster["root"]
    text = f"""
data_dir: {root / 'data'}
kubernetes: {{node_name: {NODE}, snapshot: {root / 'cluster.json'}}}
sources:
  app: {{type: kubernetes_logs, log_dir: {cluster['pods']}}}
transforms:
  f: {{type: filter, inputs: [app], condition: '.stream == "stdout"'}}
  r: {{type: route, inputs: [app], route: {{a: 'true'}}}}
sinks:
  console: {{type: console, inputs: [f]}}
  ship: {{type: http, inputs: [r.a], uri: "http://127.0.0.1:9/logs"}}
"""
    topology = Topology(parse_config(text, {}))  # built, never run: every counter is zero
    registry, collector = build_registry(topology, process_metrics=False)
    exposition = generate_latest(registry).decode()
    assert collector.missing_attributes <= KNOWN_GAPS, collector.missing_attributes - KNOWN_GAPS
    http = {"component_id": "ship", "component_kind": "http"}
    assert value(registry, "logagent_component_sent_events_total", **http) == 0
    assert value(registry, "logagent_sink_requests_in_flight", **http) == 0
    assert value(registry, "logagent_files_open", component_id="app") == 0
    assert value(registry, "logagent_condition_runtime_errors_total", component_id="r", component_kind="route") == 0
    assert value(registry, "logagent_ready") == 0
    assert_bounded_labels(exposition)


class FakeInbox:
    def __init__(self, events: int, nbytes: int, ratio: float) -> None:
        self.events, self.nbytes, self.ratio = events, nbytes, ratio

    def fill_ratio(self) -> float:
        return self.ratio


def fake_topology(**parts: Any) -> SimpleNamespace:
    defaults: dict[str, Any] = {"sources": {}, "transforms": {}, "sinks": {}, "inboxes": {}, "hub": None, "ready": True}
    return SimpleNamespace(**(defaults | parts))


def test_http_sink_counters_by_status_and_reason() -> None:
    sink = SimpleNamespace(
        kind="http",
        events_in=12,
        events_sent=10,
        bytes_sent=2048,
        requests=Counter({"2xx": 4, "5xx": 2, "error": 1}),
        retries=Counter({"http_503": 2, "connection": 1}),
        dropped_events=Counter({"http_400": 2}),
        in_flight=1,
    )
    old_style = SimpleNamespace(kind="http", requests=Counter({"2xx": 1}), retries=3, dropped_events=Counter())
    topology = fake_topology(
        sinks={"ship": sink, "legacy": old_style},
        inboxes={"ship": FakeInbox(7, 700, 0.25), "legacy": FakeInbox(0, 0, 0.0)},
    )
    registry = CollectorRegistry()
    collector = TopologyCollector(topology)
    registry.register(collector)
    http = {"component_id": "ship", "component_kind": "http"}
    assert value(registry, "logagent_sink_requests_total", **http, status="2xx") == 4
    assert value(registry, "logagent_sink_requests_total", **http, status="5xx") == 2
    assert value(registry, "logagent_sink_requests_total", **http, status="error") == 1
    assert value(registry, "logagent_sink_retries_total", **http, reason="http_503") == 2
    assert value(registry, "logagent_sink_retries_total", **http, reason="connection") == 1
    assert value(registry, "logagent_sink_dropped_events_total", **http, reason="http_400") == 2
    assert value(registry, "logagent_sink_requests_in_flight", **http) == 1
    assert value(registry, "logagent_component_received_events_total", **http) == 12
    assert value(registry, "logagent_component_sent_bytes_total", **http) == 2048
    assert value(registry, "logagent_sink_queue_events", component_id="ship") == 7
    assert value(registry, "logagent_sink_queue_bytes", component_id="ship") == 700
    assert value(registry, "logagent_sink_queue_fill_ratio", component_id="ship") == 0.25
    # a plain int of retries is exported as reason="unknown" and reported as a gap
    legacy = {"component_id": "legacy", "component_kind": "http"}
    assert value(registry, "logagent_sink_retries_total", **legacy, reason="unknown") == 3
    assert "SimpleNamespace.retries (as a Counter by reason)" in collector.missing_attributes
    # attributes the fake lacks are left out and named, never exported as zero
    assert value(registry, "logagent_component_sent_events_total", **legacy) is None
    assert "SimpleNamespace.events_sent" in collector.missing_attributes


def test_kube_stats_by_resource_verb_and_status() -> None:
    class Stats:
        def __init__(self, last_event_at: float | None) -> None:
            self.requests = Counter({("list", "2xx"): 2, ("watch", "2xx"): 5, ("watch", "410"): 1, ("watch", "error"): 3})
            self.watch_restarts = 4
            self.relists = 1
            self.events = 30
            self.bookmarks = 6
            self.decode_errors = 0
            self.request_errors = 3
            self.throttled = 0
            self.last_event_at = last_event_at

    class Store:
        def __init__(self, size: int) -> None:
            self.size = size
            self.graveyard_size = 2

        def __len__(self) -> int:
            return self.size

    hub = SimpleNamespace(
        synced=False,
        stats={"pods": Stats(last_event_at=100.0), "nodes": Stats(last_event_at=None)},
        pods=Store(12),
        namespaces=None,
        node=object(),
    )
    registry = CollectorRegistry()
    registry.register(TopologyCollector(fake_topology(hub=hub, ready=False), clock=lambda: 112.5))
    assert value(registry, "logagent_kube_synced") == 0
    assert value(registry, "logagent_ready") == 0
    assert value(registry, "logagent_kube_requests_total", resource="pods", verb="watch", status="error") == 3
    assert value(registry, "logagent_kube_requests_total", resource="pods", verb="list", status="2xx") == 2
    assert value(registry, "logagent_kube_watch_restarts_total", resource="pods") == 4
    assert value(registry, "logagent_kube_relists_total", resource="nodes") == 1
    assert value(registry, "logagent_kube_store_objects", resource="pods") == 12
    assert value(registry, "logagent_kube_store_objects", resource="nodes") == 1
    assert value(registry, "logagent_kube_store_objects", resource="namespaces") is None  # not watched
    assert value(registry, "logagent_kube_store_deleted_retained", resource="pods") == 2
    assert value(registry, "logagent_kube_seconds_since_last_event", resource="pods") == 12.5
    assert value(registry, "logagent_kube_seconds_since_last_event", resource="nodes") is None  # no event yet


def test_a_failing_component_does_not_break_the_scrape() -> None:
    class BrokenTailer:
        @property
        def files_open(self) -> int:
            raise RuntimeError("boom")

    source = SimpleNamespace(kind="kubernetes_logs", events_out=3, bytes_in=10, tailer=BrokenTailer())
    registry = CollectorRegistry()
    registry.register(TopologyCollector(fake_topology(sources={"app": source})))
    text = generate_latest(registry).decode()
    assert "logagent_ready 1.0" in text
    labels = {"component_id": "app", "component_kind": "kubernetes_logs"}
    assert value(registry, "logagent_component_sent_events_total", **labels) == 3
    assert value(registry, "logagent_files_open", component_id="app") is None


# ------------------------------------------------------------------ readiness


def test_readiness_reasons() -> None:
    assert readiness(SimpleNamespace(ready=True)) == []
    both = SimpleNamespace(ready=False, sinks_started=False, hub=SimpleNamespace(synced=False))
    assert readiness(both) == ["sinks are not started", "kubernetes metadata is not synced"]
    assert readiness(SimpleNamespace(ready=False, sinks_started=True, hub=None)) == ["not ready"]


async def test_ready_follows_the_topology() -> None:
    hub = SimpleNamespace(synced=False, stats={}, pods=[], namespaces=None, node=None)
    topology = SimpleNamespace(ready=False, sinks_started=True, hub=hub)
    server = await start_api_server(topology, "127.0.0.1:0")
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as http:
            async with http.get(f"{server.url}/ready") as response:
                assert response.status == 503
                assert await response.json() == {"status": "not ready", "reasons": ["kubernetes metadata is not synced"]}
            topology.ready = hub.synced = True
            async with http.get(f"{server.url}/ready") as response:
                assert response.status == 200
            async with http.get(f"{server.url}/health") as response:
                assert response.status == 200
            async with http.get(f"{server.url}/nothing") as response:
                assert response.status == 404
    finally:
        await server.stop()


async def test_a_port_in_use_is_an_error_and_stop_frees_the_port() -> None:
    first = await start_api_server(fake_topology(), "127.0.0.1:0")
    try:
        with pytest.raises(OSError):
            await start_api_server(fake_topology(), f"127.0.0.1:{first.port}")
    finally:
        await first.stop()
    again = await start_api_server(fake_topology(), f"127.0.0.1:{first.port}")
    await again.stop()


def test_parse_address() -> None:
    assert parse_address("0.0.0.0:8686") == ("0.0.0.0", 8686)
    assert parse_address("[::1]:0") == ("::1", 0)
    for bad in ("8686", ":8686", "host:", "host:http", "host:70000"):
        with pytest.raises(ValueError, match="host:port"):
            parse_address(bad)


# ---------------------------------------------------------------- rate limit


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class RecordingLogger:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        return lambda event, **fields: self.lines.append((level, event, fields))


def test_repeats_are_suppressed_and_counted() -> None:
    clock = FakeClock()
    logger = RecordingLogger()
    limited = RateLimitedLogger(logger, 60, clock=clock)
    assert limited.warning("sink:out", "sink failing", status=503) is True
    clock.now += 10
    assert limited.warning("sink:out", "sink failing", status=503) is False
    clock.now += 49
    assert limited.warning("sink:out", "sink failing", status=500) is False
    assert limited.limiter.suppressed("sink:out") == 2
    # another key has its own budget
    assert limited.error("unknown_pod:app", "no metadata") is True
    clock.now += 1  # 60 s after the first line
    assert limited.warning("sink:out", "sink failing", status=502) is True
    clock.now += 60
    assert limited.warning("sink:out", "sink failing", status=502) is True
    assert logger.lines == [
        ("warning", "sink failing", {"status": 503}),
        ("error", "no metadata", {}),
        ("warning", "sink failing", {"status": 502, "suppressed": 2}),
        ("warning", "sink failing", {"status": 502}),
    ]


def test_remembered_keys_are_capped() -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, max_keys=2)
    assert limiter.admit("a", 60) == 0
    assert limiter.admit("b", 60) == 0
    assert limiter.admit("a", 60) is None
    assert limiter.admit("c", 60) == 0  # forgets "a", the oldest
    assert len(limiter) == 2
    assert limiter.admit("a", 60) == 0
    with pytest.raises(ValueError):
        RateLimiter(max_keys=0)


def test_warn_limited_shares_one_limiter() -> None:
    logger = RecordingLogger()
    key = ("test_warn_limited", object())  # unique: the limiter is process-wide
    assert warn_limited(logger, key, "unknown pod", interval_secs=3600, pod_dir="ns_p_uid") is True
    assert warn_limited(logger, key, "unknown pod", interval_secs=3600, pod_dir="ns_p_uid") is False
    assert logger.lines == [("warning", "unknown pod", {"pod_dir": "ns_p_uid"})]
