"""The whole agent with kubernetes.namespace_metadata: first records carry labels, relabels arrive, bad values exit 78."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from apiserver_emulator import ApiServerEmulator
from apiserver_emulator.objects import make_namespace, make_pod
from logagent.config import parse_config
from logagent.graph import check_graph, check_kubernetes
from logagent.topology import Topology
from tests.test_e2e_kube import NODE, RunningAgent, pods, write_line  # noqa: F401  (fixture)

SINK = "sinks:\n  out: {type: console, inputs: [s0]}\n"


class ModeAgent(RunningAgent):
    """RunningAgent with extra settings in the kubernetes block."""

    def __init__(self, tmp_path: Path, emu: ApiServerEmulator, pods: Path, kube_extra: str) -> None:
        kubeconfig = emu.write_kubeconfig(tmp_path / "kubeconfig")
        text = (
            f"data_dir: {tmp_path / 'data'}\n"
            "api: {enabled: false}\n"
            f"kubernetes: {{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0, "
            f"backoff_initial_ms: 50, backoff_max_ms: 200, {kube_extra}}}\n"
            f"sources:\n  s0:\n    type: kubernetes_logs\n    log_dir: {pods}\n    insert_namespace_fields: true\n"
            f"{SINK}"
        )
        self.config = parse_config(text, {})
        check_graph(self.config)
        check_kubernetes(self.config)
        self.out_path = tmp_path / "out.ndjson"
        self.fd = os.open(self.out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.topology = Topology(self.config, stdout_fd=self.fd)
        self.task = None


@pytest.mark.parametrize("mode", ["lookup", "watch", "auto"])
async def test_the_first_record_of_a_new_pod_in_a_new_namespace_has_its_labels(
    apiserver: ApiServerEmulator, tmp_path: Path, pods: Path, mode: str
) -> None:
    apiserver.create("namespaces", make_namespace("old", labels={"team": "a"}))
    old = apiserver.create("pods", make_pod("old-1", "old", node=NODE))
    write_line(pods, old, "app", "first")
    # every GET of a namespace takes a while: the new pod's lines must wait for it
    apiserver.set_delay("get", "namespaces", 0.5)
    async with ModeAgent(tmp_path, apiserver, pods, f"namespace_metadata: {mode}") as agent:
        await agent.wait_for(lambda r: any(x["message"] == "first" for x in r))
        apiserver.create("namespaces", make_namespace("fresh", labels={"team": "new"}))
        fresh = apiserver.create("pods", make_pod("fresh-1", "fresh", node=NODE))
        write_line(pods, fresh, "app", "hello from a new namespace")
        records = await agent.wait_for(lambda r: any(x["message"].startswith("hello") for x in r))
        gets = {r.name for r in apiserver.requests_matching("get", "namespaces")}
    first = next(r for r in records if r["message"] == "first")
    assert first["kubernetes"]["namespace_labels"] == {"kubernetes.io/metadata.name": "old", "team": "a"}
    hello = next(r for r in records if r["message"].startswith("hello"))
    assert hello["kubernetes"]["namespace_labels"] == {"kubernetes.io/metadata.name": "fresh", "team": "new"}
    if mode == "watch" or mode == "auto":  # 2 namespaces: auto watches
        assert gets == set()
    else:
        assert gets == {"old", "fresh"}


async def test_a_relabel_reaches_new_lines_after_the_ttl_in_lookup_mode(
    apiserver: ApiServerEmulator, tmp_path: Path, pods: Path
) -> None:
    apiserver.create("namespaces", make_namespace("shop", labels={"tier": "gold"}))
    web = apiserver.create("pods", make_pod("web-1", "shop", node=NODE))
    extra = "namespace_metadata: lookup, namespace_lookup_ttl_secs: 1"
    async with ModeAgent(tmp_path, apiserver, pods, extra) as agent:
        write_line(pods, web, "app", "before")
        await agent.wait_for(lambda r: any(x["message"] == "before" for x in r))
        apiserver.patch_labels("namespaces", "shop", {"tier": "silver"})
        lookup = agent.topology.hub.namespace_lookup  # type: ignore[union-attr]
        assert lookup is not None
        await asyncio.wait_for(_until(lambda: lookup.get("shop").labels["tier"] == "silver"), 15)
        write_line(pods, web, "app", "after")
        records = await agent.wait_for(lambda r: any(x["message"] == "after" for x in r))
    after = next(r for r in records if r["message"] == "after")
    before = next(r for r in records if r["message"] == "before")
    assert before["kubernetes"]["namespace_labels"]["tier"] == "gold"
    assert after["kubernetes"]["namespace_labels"]["tier"] == "silver"
    assert not apiserver.requests_matching("list", "namespaces")
    assert not apiserver.requests_matching("watch", "namespaces")


async def _until(predicate) -> None:  # type: ignore[no-untyped-def]
    while not predicate():
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(
    ("setting", "key"),
    [
        ("namespace_metadata: sometimes", "kubernetes.namespace_metadata"),
        ("namespace_lookup_ttl_secs: 0", "namespace_lookup_ttl_secs"),
        ("namespace_lookup_ttl_secs: -5", "namespace_lookup_ttl_secs"),
        ("namespace_watch_max: 0", "namespace_watch_max"),
    ],
)
def test_a_bad_namespace_setting_names_the_key_and_exits_78(tmp_path: Path, setting: str, key: str) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"data_dir: {tmp_path}\nkubernetes: {{node_name: n1, {setting}}}\n"
        f"sources:\n  s0: {{type: kubernetes_logs, log_dir: {tmp_path}, insert_namespace_fields: true}}\n"
        "sinks:\n  out: {type: console, inputs: [s0]}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "logagent", "validate", "--config", str(config)],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 78, result
    assert key in result.stderr and "kubernetes" in result.stderr
