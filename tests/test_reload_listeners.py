"""A live reload that removes or replaces a kubernetes_logs source leaves nothing of it on the hub.

In-process topology against the apiserver emulator, reloaded through the
real ``ConfigReloader`` (as SIGHUP does): the pod watch keeps running, the
removed source's pod listener (and a dropped namespace lookup's) is gone.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import weakref
from pathlib import Path

from apiserver_emulator import ApiServerEmulator
from apiserver_emulator.objects import make_namespace, make_pod
from logagent.config import parse_config
from logagent.reloader import APPLIED, ConfigReloader
from logagent.topology import Topology

NODE = "node-1"


def config_text(tmp_path: Path, kubeconfig: Path, sources: dict[str, bool]) -> str:
    """One kubernetes_logs source per id (value: insert_namespace_fields), each over its own log dir."""
    lines = [
        f"data_dir: {tmp_path / 'data'}",
        "api: {enabled: false}",
        f"kubernetes: {{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0,"
        " namespace_metadata: lookup, backoff_initial_ms: 50, backoff_max_ms: 200}",
        "sources:",
    ]
    for cid, namespaces in sources.items():
        lines.append(f"  {cid}: {{type: kubernetes_logs, log_dir: {tmp_path / 'pods'}, insert_node_fields: false,"
                     f" insert_namespace_fields: {str(namespaces).lower()}, rescan_interval_secs: 1}}")
    lines.append(f"sinks:\n  out: {{type: console, inputs: [{', '.join(sources)}]}}")
    return "\n".join(lines) + "\n"


def write_line(tmp_path: Path, pod: dict, message: str) -> None:
    meta = pod["metadata"]
    directory = tmp_path / "pods" / f"{meta['namespace']}_{meta['name']}_{meta['uid']}" / "app"
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "0.log", "ab") as f:
        f.write(f"2026-12-03T10:00:00.000000000Z stdout F {message}\n".encode())


async def test_removed_and_replaced_sources_unregister_their_pod_listeners(
    apiserver: ApiServerEmulator, tmp_path: Path
) -> None:
    first = apiserver.create("pods", make_pod("web-1", "shop", node=NODE, labels={"app": "web"}))
    apiserver.create("namespaces", make_namespace("shop", labels={"team": "a"}))
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    path = tmp_path / "agent.yaml"
    path.write_text(config_text(tmp_path, kubeconfig, {"a": True, "b": False}))
    out_path = tmp_path / "out.ndjson"
    fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    topology = Topology(parse_config(path.read_text(), {}), stdout_fd=fd)
    reloader = ConfigReloader(path, topology)
    task = asyncio.create_task(topology.run())

    async def reload(sources: dict[str, bool]) -> None:
        path.write_text(config_text(tmp_path, kubeconfig, sources))
        assert await reloader.reload() == APPLIED

    async def delivered(message: str) -> dict:
        for _ in range(600):
            for line in out_path.read_bytes().split(b"\n")[:-1]:  # whole lines only
                record = json.loads(line)
                if record["message"] == message:
                    return record
            await asyncio.sleep(0.05)
        raise AssertionError(f"{message!r} not delivered")

    try:
        for _ in range(600):  # reloads come once the sources run (the reloader is a companion of theirs)
            if set(topology.source_tasks) == {"a", "b"}:
                break
            await asyncio.sleep(0.05)
        hub = topology.hub
        assert hub is not None and hub.synced and set(topology.source_tasks) == {"a", "b"}
        pods = hub.pods
        # the two sources, and the namespace lookup of source a
        assert pods.listener_count == 3
        pod_requests = {k: v for k, v in apiserver.requests.items() if k[1] == "pods"}

        removed = weakref.ref(topology.sources["b"])
        await reload({"a": True})
        assert pods.listener_count == 2

        replaced = weakref.ref(topology.sources["a"])
        await reload({"c": True})  # a replaced by c: the same settings under another id
        assert pods.listener_count == 2

        await reload({"c": False})  # nothing needs namespaces: the lookup is dropped too
        assert pods.listener_count == 1

        # the pod watch was never restarted and still feeds the live source: a new pod's lines are enriched
        second = apiserver.create("pods", make_pod("web-2", "shop", node=NODE, labels={"app": "api"}))
        write_line(tmp_path, second, "after the reloads")
        record = await delivered("after the reloads")
        assert record["kubernetes"]["pod_labels"] == {"app": "api"}
        assert {k: v for k, v in apiserver.requests.items() if k[1] == "pods"} == pod_requests
        assert apiserver.open_watches.get("pods") == 1
        write_line(tmp_path, first, "first pod")
        await delivered("first pod")

        for _ in range(600):  # a removed source's task ends once it stopped reading
            gc.collect()
            if removed() is None and replaced() is None:
                break
            await asyncio.sleep(0.05)
        assert removed() is None and replaced() is None, "something still holds a removed source"
    finally:
        topology.request_stop()
        await asyncio.wait_for(task, timeout=30)
        os.close(fd)
