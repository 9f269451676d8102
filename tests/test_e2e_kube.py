"""The whole agent against the apiserver emulator: shared watchers, on-demand namespaces."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from logagent.config import parse_config
from logagent.graph import check_graph, check_kubernetes
from logagent.topology import Topology
from apiserver_emulator import ApiServerEmulator
from tests.agent_process import read_records
from apiserver_emulator.objects import make_namespace, make_node, make_pod

NODE = "node-1"


def pod_dir(pods: Path, pod: dict) -> Path:
    meta = pod["metadata"]
    return pods / f"{meta['namespace']}_{meta['name']}_{meta['uid']}"


def write_line(pods: Path, pod: dict, container: str, message: str, stream: str = "stdout") -> None:
    directory = pod_dir(pods, pod) / container
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "0.log", "ab") as f:
        f.write(f"2026-12-02T10:00:00.000000000Z {stream} F {message}\n".encode())


class RunningAgent:
    def __init__(self, tmp_path: Path, emu: ApiServerEmulator, sources: str, extra: str = "") -> None:
        kubeconfig = emu.write_kubeconfig(tmp_path / "kubeconfig")
        text = (
            f"data_dir: {tmp_path / 'data'}\n"
            "api: {enabled: false}\n"
            f"kubernetes: {{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0, backoff_initial_ms: 50, backoff_max_ms: 200}}\n"
            f"sources:\n{sources}{extra}"
        )
        self.config = parse_config(text, {})
        check_graph(self.config)
        check_kubernetes(self.config)
        self.out_path = tmp_path / "out.ndjson"
        self.fd = os.open(self.out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.topology = Topology(self.config, stdout_fd=self.fd)
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RunningAgent:
        self.task = asyncio.create_task(self.topology.run())
        assert self.topology.hub is not None
        assert await self.topology.hub.wait_synced(timeout=20)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.topology.request_stop()
        assert self.task is not None
        await asyncio.wait_for(self.task, timeout=30)
        os.close(self.fd)

    def records(self) -> list[dict]:
        return read_records(self.out_path)

    async def wait_for(self, predicate, timeout: float = 15.0) -> list[dict]:  # type: ignore[no-untyped-def]
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            records = self.records()
            if predicate(records):
                return records
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"condition not met; records: {records[-5:]}")
            await asyncio.sleep(0.05)


def three_sources(pods: Path, namespace_flags: tuple[bool, bool, bool]) -> str:
    text = ""
    for index, flag in enumerate(namespace_flags):
        text += (
            f"  s{index}:\n    type: kubernetes_logs\n    log_dir: {pods}\n"
            f"    insert_namespace_fields: {str(flag).lower()}\n    insert_node_fields: false\n"
        )
    return text


SINKS = "sinks:\n  out: {type: console, inputs: [s0, s1, s2]}\n"


@pytest.fixture
def pods(tmp_path: Path) -> Path:
    directory = tmp_path / "pods"
    directory.mkdir()
    return directory


async def test_three_sources_one_pod_watch_and_no_namespace_request(apiserver: ApiServerEmulator, tmp_path: Path, pods: Path) -> None:
    web = apiserver.create("pods", make_pod("web-1", "user-a", node=NODE, labels={"app": "web"}))
    apiserver.create("pods", make_pod("other-1", "user-a", node="node-2"))
    apiserver.create("namespaces", make_namespace("user-a", labels={"userNS": "true"}))
    write_line(pods, web, "app", "hello")
    async with RunningAgent(tmp_path, apiserver, three_sources(pods, (False, False, False)), SINKS) as agent:
        records = await agent.wait_for(lambda r: len(r) >= 3)
        await asyncio.sleep(0.5)
        requests = dict(apiserver.requests)
    assert all(r["kubernetes"]["pod_labels"] == {"app": "web"} for r in records)
    assert all("namespace_labels" not in r["kubernetes"] for r in records)
    pod_requests = {verb: n for (verb, resource), n in requests.items() if resource == "pods"}
    assert pod_requests.get("watch") == 1, requests
    assert pod_requests.get("list", 0) == 0
    assert not any(resource == "namespaces" for (_, resource) in requests), requests
    assert not any(resource == "nodes" for (_, resource) in requests), requests
    watch = apiserver.requests_matching("watch", "pods")[0]
    assert watch.query.get("fieldSelector") == f"spec.nodeName={NODE}"


async def test_one_namespace_watch_and_only_the_asking_source_gets_namespace_labels(
    apiserver: ApiServerEmulator, tmp_path: Path, pods: Path
) -> None:
    web = apiserver.create("pods", make_pod("web-1", "user-a", node=NODE))
    apiserver.create("namespaces", make_namespace("user-a", labels={"userNS": "true"}))
    apiserver.create("namespaces", make_namespace("unrelated"))
    write_line(pods, web, "app", "hello")
    sinks = (
        "sinks:\n"
        "  out: {type: console, inputs: [tagged.ns]}\n"
        "transforms:\n"
        "  tagged: {type: route, inputs: [s0, s1, s2], route: {ns: 'exists(.kubernetes.namespace_labels)'}}\n"
    )
    sources = three_sources(pods, (False, True, False))
    async with RunningAgent(tmp_path, apiserver, sources, sinks) as agent:
        records = await agent.wait_for(lambda r: len(r) >= 1)
        await asyncio.sleep(0.5)
        requests = dict(apiserver.requests)
        records = agent.records()
    assert len(records) == 1  # only s1's record carries namespace labels
    assert records[0]["kubernetes"]["namespace_labels"]["userNS"] == "true"
    assert requests.get(("watch", "namespaces")) == 1, requests
    # the only namespace list is the default mode's (auto) count: one item
    assert [r.query for r in apiserver.requests_matching("list", "namespaces")] == [{"limit": "1"}]
    assert requests.get(("watch", "pods")) == 1


async def test_label_changes_show_in_later_records(apiserver: ApiServerEmulator, tmp_path: Path, pods: Path) -> None:
    web = apiserver.create("pods", make_pod("web-1", "user-a", node=NODE, labels={"version": "1"}))
    apiserver.create("namespaces", make_namespace("user-a", labels={"tier": "gold"}))
    source = f"  s0:\n    type: kubernetes_logs\n    log_dir: {pods}\n"
    async with RunningAgent(tmp_path, apiserver, source, "sinks:\n  out: {type: console, inputs: [s0]}\n") as agent:
        apiserver.create("nodes", make_node(NODE, labels={"zone": "a"}))
        write_line(pods, web, "app", "before")
        await agent.wait_for(lambda r: any(x["message"] == "before" for x in r))
        apiserver.patch_labels("pods", "web-1", {"version": "2"}, namespace="user-a")
        apiserver.patch_labels("namespaces", "user-a", {"tier": "silver"})
        apiserver.patch_labels("nodes", NODE, {"zone": "b"})
        await asyncio.sleep(0.5)
        write_line(pods, web, "app", "after")
        records = await agent.wait_for(lambda r: any(x["message"] == "after" for x in r))
    before = next(r for r in records if r["message"] == "before")
    after = next(r for r in records if r["message"] == "after")
    assert before["kubernetes"]["pod_labels"]["version"] == "1"
    assert before["kubernetes"]["namespace_labels"]["tier"] == "gold"
    assert after["kubernetes"]["pod_labels"]["version"] == "2"
    assert after["kubernetes"]["namespace_labels"]["tier"] == "silver"
    assert after["kubernetes"]["node_labels"]["zone"] == "b"


async def test_lines_after_deletion_are_still_enriched(apiserver: ApiServerEmulator, tmp_path: Path, pods: Path) -> None:
    web = apiserver.create("pods", make_pod("web-1", "user-a", node=NODE, labels={"app": "web"}))
    job = apiserver.create("pods", make_pod("job-1", "user-a", node=NODE, labels={"app": "job"}))
    source = f"  s0:\n    type: kubernetes_logs\n    log_dir: {pods}\n    insert_namespace_fields: false\n    insert_node_fields: false\n"
    async with RunningAgent(tmp_path, apiserver, source, "sinks:\n  out: {type: console, inputs: [s0]}\n") as agent:
        write_line(pods, web, "app", "alive")
        await agent.wait_for(lambda r: any(x["message"] == "alive" for x in r))
        apiserver.delete("pods", "web-1", namespace="user-a")
        apiserver.delete("pods", "job-1", namespace="user-a")
        await asyncio.sleep(0.5)
        # an open file whose pod is gone, and a file first seen after its pod was deleted
        write_line(pods, web, "app", "late")
        write_line(pods, job, "main", "late job line")
        records = await agent.wait_for(lambda r: {"late", "late job line"} <= {x["message"] for x in r})
    late = next(r for r in records if r["message"] == "late")
    assert late["kubernetes"]["pod_labels"] == {"app": "web"}
    late_job = next(r for r in records if r["message"] == "late job line")
    assert late_job["kubernetes"]["pod_labels"] == {"app": "job"}


async def test_errors_from_the_apiserver_are_retried_and_nothing_is_lost(
    apiserver: ApiServerEmulator, tmp_path: Path, pods: Path
) -> None:
    web = apiserver.create("pods", make_pod("web-1", "user-a", node=NODE, labels={"app": "web"}))
    apiserver.inject_fault("watch", "pods", 429, count=2, retry_after=1)
    apiserver.inject_fault("*", "pods", 500, count=2)
    for i in range(100):
        write_line(pods, web, "app", f"line {i}")
    source = f"  s0:\n    type: kubernetes_logs\n    log_dir: {pods}\n    insert_namespace_fields: false\n    insert_node_fields: false\n"
    async with RunningAgent(tmp_path, apiserver, source, "sinks:\n  out: {type: console, inputs: [s0]}\n") as agent:
        records = await agent.wait_for(lambda r: len(r) >= 100)
        statuses = dict(apiserver.statuses)
    assert [r["message"] for r in records] == [f"line {i}" for i in range(100)]
    assert all(r["kubernetes"]["pod_labels"] == {"app": "web"} for r in records)
    assert sum(n for (verb, res, code), n in statuses.items() if res == "pods" and code in (429, 500)) == 4


async def test_excluded_pods_and_containers_are_not_collected(apiserver: ApiServerEmulator, tmp_path: Path, pods: Path) -> None:
    me = apiserver.create("pods", make_pod("logagent-x", "logagent", node=NODE, labels={"logagent.dev/exclude": "true"}))
    web = apiserver.create(
        "pods",
        make_pod("web-1", "user-a", node=NODE, annotations={"logagent.dev/exclude-containers": "sidecar"},
                 containers=[("app", "web:1"), ("sidecar", "envoy:1")]),
    )
    quiet = apiserver.create("pods", make_pod("q-1", "quiet", node=NODE))
    apiserver.create("namespaces", make_namespace("quiet", labels={"logagent.dev/exclude": "true"}))
    apiserver.create("namespaces", make_namespace("user-a"))
    apiserver.create("namespaces", make_namespace("logagent"))
    write_line(pods, me, "agent", "my own log")
    write_line(pods, web, "sidecar", "sidecar noise")
    write_line(pods, quiet, "app", "quiet namespace")
    write_line(pods, web, "app", "wanted")
    source = f"  s0:\n    type: kubernetes_logs\n    log_dir: {pods}\n    insert_node_fields: false\n"
    async with RunningAgent(tmp_path, apiserver, source, "sinks:\n  out: {type: console, inputs: [s0]}\n") as agent:
        await agent.wait_for(lambda r: any(x["message"] == "wanted" for x in r))
        tailer = agent.topology.sources["s0"].tailer
        read_before = tailer.bytes_read
        # the agent's own output keeps growing: it is passed over, not read
        for i in range(2000):
            write_line(pods, me, "agent", f"my own log {i} " + "x" * 200)
        await asyncio.sleep(1.0)
        write_line(pods, web, "app", "wanted again")
        await agent.wait_for(lambda r: any(x["message"] == "wanted again" for x in r))
        skipped = tailer.bytes_skipped
        read_after = tailer.bytes_read
        # the exclusion is lifted: lines written from now on are collected
        apiserver.patch_labels("pods", "logagent-x", {"logagent.dev/exclude": None}, namespace="logagent")
        await asyncio.sleep(0.5)
        write_line(pods, me, "agent", "collected after the label was removed")
        await agent.wait_for(lambda r: any(x["message"] == "collected after the label was removed" for x in r))
        records = agent.records()
    assert [r["message"] for r in records] == ["wanted", "wanted again", "collected after the label was removed"]
    assert skipped >= 2000 * 200
    assert read_after - read_before < 10_000


async def test_vector_exclusion_labels_hold_with_an_extra_label_selector(
    apiserver: ApiServerEmulator, tmp_path: Path, pods: Path
) -> None:
    # a cluster labelled for Vector keeps out what it chose not to collect, and, as in Vector,
    # extra_label_selector narrows further rather than replacing the exclusion label
    excluded = apiserver.create("pods", make_pod("vec-x", "user-a", node=NODE, labels={"vector.dev/exclude": "true", "app": "web"}))
    web = apiserver.create(
        "pods",
        make_pod("web-1", "user-a", node=NODE, labels={"app": "web"}, annotations={"vector.dev/exclude-containers": "sidecar, init"},
                 containers=[("app", "web:1"), ("sidecar", "envoy:1")]),
    )
    other = apiserver.create("pods", make_pod("db-1", "user-a", node=NODE, labels={"app": "db"}))
    quiet = apiserver.create("pods", make_pod("q-1", "quiet", node=NODE, labels={"app": "web"}))
    apiserver.create("namespaces", make_namespace("quiet", labels={"vector.dev/exclude": "true"}))
    apiserver.create("namespaces", make_namespace("user-a"))
    write_line(pods, excluded, "app", "excluded pod")
    write_line(pods, web, "sidecar", "sidecar noise")
    write_line(pods, other, "app", "not selected")
    write_line(pods, quiet, "app", "quiet namespace")
    write_line(pods, web, "app", "wanted")
    source = (f"  s0:\n    type: kubernetes_logs\n    log_dir: {pods}\n    insert_node_fields: false\n"
              "    extra_label_selector: app=web\n")
    async with RunningAgent(tmp_path, apiserver, source, "sinks:\n  out: {type: console, inputs: [s0]}\n") as agent:
        await agent.wait_for(lambda r: any(x["message"] == "wanted" for x in r))
        write_line(pods, web, "app", "wanted again")
        await agent.wait_for(lambda r: any(x["message"] == "wanted again" for x in r))
        records = agent.records()
    assert [r["message"] for r in records] == ["wanted", "wanted again"]
