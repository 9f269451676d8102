"""Live config reload (SIGHUP, --watch-config) with real agent processes."""

from __future__ import annotations

import os
import signal
import time
import urllib.request
from pathlib import Path

import pytest

from logagent.config import parse_config
from logagent.reload import RestartNeeded, plan_reload
from tests.agent_process import AgentProcess, offline_config, read_records

LINE_BYTES = 100


# ---------------------------------------------------------------- helpers


def cri(message: str) -> bytes:
    return f"2026-12-03T10:00:00.000000000Z stdout F {message}\n".encode()


def append(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        f.write(b"".join(cri(line) for line in lines))


def records(path: Path) -> list[dict]:
    return read_records(path)


def wait_until(predicate, what: str, timeout: float = 60.0, agent: AgentProcess | None = None) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if agent is not None and agent.proc.poll() is not None:
            raise AssertionError(f"agent exited: {agent.stderr_path.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def count_events(agent: AgentProcess, prefix: str) -> int:
    return sum(1 for e in agent.log_events() if str(e.get("event", "")).startswith(prefix))


def reload_and_wait(agent: AgentProcess, outcome: str, timeout: float = 60.0) -> dict:
    """Send SIGHUP and wait for the log line of its outcome ("config reloaded" or "config reload rejected")."""
    before = count_events(agent, outcome)
    agent.signal(signal.SIGHUP)
    wait_until(lambda: count_events(agent, outcome) > before, f"log {outcome!r}", timeout, agent)
    return [e for e in agent.log_events() if str(e.get("event", "")).startswith(outcome)][-1]


def filter_config(tmp_path: Path, pods: Path, condition: str, extra_top: str = "") -> Path:
    transforms = f"transforms:\n  keep:\n    type: filter\n    inputs: [pods]\n    condition: '{condition}'\n"
    path = offline_config(tmp_path, pods, extra=transforms, sink="  out: {type: console, inputs: [keep]}\n")
    if extra_top:
        path.write_text(extra_top + path.read_text())
    return path


# ---------------------------------------------------------------- the plan (no process)


BASE = """
data_dir: /tmp/x
kubernetes: {node_name: n, snapshot: /tmp/s.json}
sources:
  pods: {type: kubernetes_logs, log_dir: /tmp/pods}
transforms:
  keep: {type: filter, inputs: [pods], condition: '.stream == "stdout"'}
sinks:
  out: {type: console, inputs: [keep]}
"""


def test_plan_names_each_change_and_refuses_what_needs_a_restart() -> None:
    old = parse_config(BASE, {})
    plan = plan_reload(old, parse_config(BASE.replace('"stdout"', '"stderr"'), {}))
    assert plan.transforms.changed == ["keep"] and plan.sinks.kept == ["out"] and plan.sources.kept == ["pods"]
    rewired = parse_config(BASE.replace("inputs: [keep]", "inputs: [pods]"), {})
    assert plan_reload(old, rewired).sinks.kept == ["out"]  # only its inputs changed: kept running
    live = parse_config(BASE.replace("log_dir: /tmp/pods}", "log_dir: /tmp/pods, insert_node_fields: false}"), {})
    assert plan_reload(old, live).sources.changed == ["pods"]
    for change, key in [
        ("data_dir: /tmp/x", "data_dir"),
        ("kubernetes: {node_name: n,", "kubernetes"),
        ("log_dir: /tmp/pods}", "sources.pods.log_dir"),
    ]:
        edited = BASE.replace(change, change.replace("x", "y").replace("n,", "m,").replace("pods}", "other}"))
        with pytest.raises(RestartNeeded) as info:
            plan_reload(old, parse_config(edited, {}))
        assert key in str(info.value) and "restart" in str(info.value)
    with pytest.raises(RestartNeeded, match="api"):
        plan_reload(old, parse_config(BASE + "api: {address: '127.0.0.1:9999'}\n", {}))


async def test_a_replaced_wiring_is_quiesced_once_its_deliveries_end_and_the_chain_does_not_grow() -> None:
    import asyncio

    from logagent.topology import Wiring

    first, second, third = Wiring({}), Wiring({}), Wiring({})
    first.enter()  # a delivery still travelling through the first wiring
    second.replaces(first)
    third.replaces(second)
    assert third.previous is second and second.previous is first
    waiter = asyncio.ensure_future(third.quiesced())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    first.leave()
    await asyncio.wait_for(waiter, 5)
    # once idle, an old wiring is not kept: many reloads hold no chain of old graphs
    fourth = Wiring({})
    fourth.replaces(third)
    assert fourth.previous is None


# ---------------------------------------------------------------- processes


def test_filter_change_applies_to_lines_written_after_the_reload_exactly_once(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    log_file = pods / "ns_pod_uid-1" / "app" / "0.log"
    config = filter_config(tmp_path, pods, 'contains(string!(.message), "alpha")')
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("started")
            append(log_file, [f"{tag} 1-{i}" for i in range(200) for tag in ("alpha", "beta")])
            wait_until(lambda: any(r["message"] == "alpha 1-199" for r in records(out_path)), "phase 1", agent=agent)
            filter_config(tmp_path, pods, 'contains(string!(.message), "beta")')
            event = reload_and_wait(agent, "config reloaded")
            assert event["changes"] == {"transforms": {"changed": ["keep"]}}
            append(log_file, [f"{tag} 2-{i}" for i in range(200) for tag in ("alpha", "beta")])
            wait_until(lambda: any(r["message"] == "beta 2-199" for r in records(out_path)), "phase 2", agent=agent)
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()
    got = [r["message"] for r in records(out_path)]
    assert got == [f"alpha 1-{i}" for i in range(200)] + [f"beta 2-{i}" for i in range(200)]


def test_invalid_or_restart_needing_config_is_rejected_and_the_pipeline_keeps_running(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    log_file = pods / "ns_pod_uid-1" / "app" / "0.log"
    config = filter_config(tmp_path, pods, 'contains(string!(.message), "alpha")',
                           extra_top="api: {address: '127.0.0.1:0'}\n")
    config.write_text(config.read_text().replace("api: {enabled: false}\n", ""))
    good = config.read_text()
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("health and metrics API listening")
            url = next(e["url"] for e in agent.log_events() if e.get("event") == "health and metrics API listening")
            agent.wait_for_log("started")
            config.write_text(good.replace("inputs: [keep]", "inputs: [nothing]"))
            event = reload_and_wait(agent, "config reload rejected")
            assert event["error"] == 'sinks.out.inputs[0]: "nothing" names no source or transform'
            config.write_text(good.replace(f"data_dir: {tmp_path / 'data'}", f"data_dir: {tmp_path / 'data2'}"))
            event = reload_and_wait(agent, "config reload rejected")
            assert event["error"].startswith("cannot change while the agent runs (data_dir)")
            assert "restart" in event["error"]
            append(log_file, ["alpha after", "beta after"])
            wait_until(lambda: [r["message"] for r in records(out_path)] == ["alpha after"], "old pipeline", agent=agent)
            metrics = urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode()
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()
    assert 'logagent_config_reloads_total{result="rejected"} 2.0' in metrics
    assert 'logagent_config_reloads_total{result="applied"} 0.0' in metrics
    assert "logagent_config_hash " in metrics
    assert [r["message"] for r in records(out_path)] == ["alpha after"]


def test_a_sink_that_cannot_start_fails_the_reload_and_changes_nothing(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    log_file = pods / "ns_pod_uid-1" / "app" / "0.log"
    config = filter_config(tmp_path, pods, 'contains(string!(.message), "alpha")')
    good = config.read_text()
    bad_ca = tmp_path / "ca.pem"
    bad_ca.write_text("not a certificate")
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("started")
            config.write_text(
                good.replace('contains(string!(.message), "alpha")', 'contains(string!(.message), "beta")')
                + f"  ship: {{type: http, inputs: [keep], uri: 'https://127.0.0.1:9/', tls: {{ca_file: {bad_ca}}}}}\n"
            )
            event = reload_and_wait(agent, "config reload failed")
            assert event["error"].startswith("sinks.ship.tls.ca_file: cannot load")
            append(log_file, ["alpha after", "beta after"])
            wait_until(lambda: [r["message"] for r in records(out_path)] == ["alpha after"], "old pipeline", agent=agent)
            config.write_text(good.replace('contains(string!(.message), "alpha")', 'contains(string!(.message), "beta")'))
            reload_and_wait(agent, "config reloaded")
            append(log_file, ["alpha again", "beta again"])
            wait_until(lambda: [r["message"] for r in records(out_path)][-1:] == ["beta again"], "new pipeline", agent=agent)
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()
    assert [r["message"] for r in records(out_path)] == ["alpha after", "beta again"]


def test_a_removed_source_stops_and_when_added_again_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    pods, other = tmp_path / "pods", tmp_path / "other"
    first = pods / "ns_a_uid-a" / "app" / "0.log"
    second = other / "ns_b_uid-b" / "app" / "0.log"
    second_source = f"  more: {{type: kubernetes_logs, log_dir: {other}, insert_node_fields: false, rescan_interval_secs: 1}}\n"
    one = offline_config(tmp_path, pods).read_text()
    config = offline_config(tmp_path, pods, sink="  out: {type: console, inputs: [pods, more]}\n")
    both = config.read_text().replace("sinks:\n", second_source + "sinks:\n")
    config.write_text(both)
    out_path = tmp_path / "out.ndjson"

    def messages() -> list[str]:
        return [r["message"] for r in records(out_path)]

    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("started")
            append(first, ["a 1"])
            append(second, ["b 1"])
            wait_until(lambda: sorted(messages()) == ["a 1", "b 1"], "both sources", agent=agent)
            config.write_text(one)
            assert reload_and_wait(agent, "config reloaded")["changes"] == {"sources": {"removed": ["more"]}}
            append(second, ["b 2", "b 3"])
            append(first, ["a 2"])
            wait_until(lambda: "a 2" in messages(), "the kept source", agent=agent)
            time.sleep(1.0)
            assert "b 2" not in messages()
            config.write_text(both)
            assert reload_and_wait(agent, "config reloaded")["changes"] == {"sources": {"added": ["more"]}}
            wait_until(lambda: "b 3" in messages(), "the source added again", agent=agent)
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()
    assert sorted(messages()) == ["a 1", "a 2", "b 1", "b 2", "b 3"]


def configmap_dir(root: Path) -> tuple[Path, callable]:  # type: ignore[valid-type]
    """A directory laid out like a mounted ConfigMap, and a function that updates it the kubelet's way."""
    root.mkdir()
    generation = [0]

    def publish(text: str) -> None:
        generation[0] += 1
        data = root / f"..2026_12_03_10_00_0{generation[0]}.000000000"
        data.mkdir()
        (data / "agent.yaml").write_text(text)
        tmp = root / "..data_tmp"
        os.symlink(data.name, tmp)
        os.replace(tmp, root / "..data")  # the atomic swap kubelet makes
        if not (root / "agent.yaml").is_symlink():
            os.symlink("..data/agent.yaml", root / "agent.yaml")

    return root / "agent.yaml", publish


def test_watch_config_follows_a_configmap_symlink_swap(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    log_file = pods / "ns_pod_uid-1" / "app" / "0.log"
    alpha = filter_config(tmp_path, pods, 'contains(string!(.message), "alpha")').read_text()
    beta = alpha.replace('"alpha"', '"beta"')
    config, publish = configmap_dir(tmp_path / "configmap")
    publish(alpha)
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out, extra_args=["--watch-config"])
        try:
            agent.wait_for_log("watching the config for changes")
            append(log_file, ["alpha 1", "beta 1"])
            wait_until(lambda: len(records(out_path)) == 1, "phase 1", agent=agent)
            publish(beta)
            wait_until(lambda: count_events(agent, "config reloaded") == 1, "reload on the swap", agent=agent)
            publish(beta)  # same content again: nothing to do
            append(log_file, ["alpha 2", "beta 2"])
            wait_until(lambda: len(records(out_path)) == 2, "phase 2", agent=agent)
            time.sleep(1.5)
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()
    assert [r["message"] for r in records(out_path)] == ["alpha 1", "beta 2"]
    assert count_events(agent, "config reload") == 1


# ---------------------------------------------------------------- the shared hub survives


KUBE_NODE = "node-1"


def kube_config_text(tmp_path: Path, kubeconfig: Path, pods: Path, *, namespaces: bool, keep: str) -> str:
    return (
        f"data_dir: {tmp_path / 'data'}\n"
        "api: {enabled: false}\n"
        f"kubernetes: {{node_name: {KUBE_NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0,"
        " backoff_initial_ms: 50, backoff_max_ms: 200}\n"
        "sources:\n"
        f"  pods: {{type: kubernetes_logs, log_dir: {pods}, insert_node_fields: false,"
        f" insert_namespace_fields: {str(namespaces).lower()}, rescan_interval_secs: 1}}\n"
        f"transforms:\n  keep: {{type: filter, inputs: [pods], condition: 'contains(string!(.message), \"{keep}\")'}}\n"
        "sinks:\n  out: {type: console, inputs: [keep]}\n"
    )


async def test_reloads_keep_the_pod_watch_and_start_and_stop_the_namespace_watch(apiserver, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from apiserver_emulator.objects import make_namespace, make_pod

    pod = apiserver.create("pods", make_pod("web-1", "user-a", node=KUBE_NODE, labels={"app": "web"}))
    apiserver.create("namespaces", make_namespace("user-a", labels={"team": "a"}))
    meta = pod["metadata"]
    pods = tmp_path / "pods"
    log_file = pods / f"{meta['namespace']}_{meta['name']}_{meta['uid']}" / "app" / "0.log"
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    config = tmp_path / "agent.yaml"
    config.write_text(kube_config_text(tmp_path, kubeconfig, pods, namespaces=False, keep="alpha"))
    out_path = tmp_path / "out.ndjson"

    async def until(predicate, what: str) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + 60
        while not predicate():
            assert agent.proc.poll() is None, agent.stderr_path.read_text()[-2000:]
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await asyncio.sleep(0.05)

    async def reload(text: str) -> None:
        config.write_text(text)
        before = count_events(agent, "config reloaded")
        agent.signal(signal.SIGHUP)
        await until(lambda: count_events(agent, "config reloaded") > before, "config reloaded")

    def messages() -> list[str]:
        return [r["message"] for r in records(out_path)] if out_path.exists() else []

    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            await until(lambda: count_events(agent, "started") > 0, "start")
            append(log_file, ["alpha 1", "beta 1"])
            await until(lambda: messages() == ["alpha 1"], "phase 1")
            pod_requests = {k: v for k, v in apiserver.requests.items() if k[1] == "pods"}
            assert not any(k[1] == "namespaces" for k in apiserver.requests)

            await reload(kube_config_text(tmp_path, kubeconfig, pods, namespaces=True, keep="beta"))
            assert apiserver.open_watches.get("namespaces") == 1
            append(log_file, ["alpha 2", "beta 2"])
            await until(lambda: messages() == ["alpha 1", "beta 2"], "phase 2")

            await reload(kube_config_text(tmp_path, kubeconfig, pods, namespaces=False, keep="alpha"))
            await until(lambda: not apiserver.open_watches.get("namespaces"), "the namespace watch to close")
            append(log_file, ["alpha 3", "beta 3"])
            await until(lambda: messages() == ["alpha 1", "beta 2", "alpha 3"], "phase 3")
            assert {k: v for k, v in apiserver.requests.items() if k[1] == "pods"} == pod_requests
            assert apiserver.open_watches.get("pods") == 1
            agent.signal(signal.SIGTERM)
            await until(lambda: agent.proc.poll() is not None, "exit")
            assert agent.wait(timeout=1) == 0
        finally:
            agent.stop()
    by_message = {r["message"]: r for r in records(out_path)}
    assert by_message["alpha 1"]["kubernetes"]["pod_labels"] == {"app": "web"}
    assert "namespace_labels" not in by_message["alpha 1"]["kubernetes"]
    assert by_message["beta 2"]["kubernetes"]["namespace_labels"]["team"] == "a"
    assert "namespace_labels" not in by_message["alpha 3"]["kubernetes"]


# ---------------------------------------------------------------- a reload during an HTTP outage


async def test_reload_during_an_http_outage_loses_nothing(tmp_path: Path) -> None:
    import asyncio

    from receivers.ndjson import Receiver
    from tests.test_process_http import TOKEN, http_sink

    receiver = Receiver()
    port = await receiver.start()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    pods = tmp_path / "pods"
    log_file = pods / "ns_pod_uid-1" / "app" / "0.log"

    def write_config(keep: str, max_events: int) -> Path:
        transforms = f"transforms:\n  keep: {{type: filter, inputs: [pods], condition: 'contains(string!(.message), \"{keep}\")'}}\n"
        sink = http_sink(receiver.url, token_file).replace("inputs: [pods]", "inputs: [keep]")
        return offline_config(tmp_path, pods, extra=transforms, sink=sink.replace("max_events: 500", f"max_events: {max_events}"))

    def lines(phase: int, n: int) -> list[str]:
        return [f"{tag} {phase}-{i}" for i in range(n) for tag in ("alpha", "beta")]

    receivers = [receiver]

    def delivered() -> list[str]:
        return [r["message"] for rec in receivers for req in rec.accepted for r in req.records()]

    async def until(predicate, what: str, timeout: float = 90) -> None:  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + timeout
        while not predicate():
            assert agent.proc.poll() is None, agent.stderr_path.read_text()[-2000:]
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await asyncio.sleep(0.05)

    config = write_config("alpha", 500)
    agent = AgentProcess(config, open(os.devnull, "wb"))
    try:
        await until(lambda: count_events(agent, "started") > 0, "start")
        append(log_file, lines(1, 100))
        await until(lambda: "alpha 1-99" in delivered(), "phase 1")
        await receiver.stop()  # the outage begins
        append(log_file, lines(2, 300))
        await asyncio.sleep(1.0)
        write_config("beta", 400)  # the filter and the sink (replaced: it drains first) change
        before = count_events(agent, "config reloaded")
        agent.signal(signal.SIGHUP)
        await until(lambda: count_events(agent, "config reloaded") > before, "reload")
        append(log_file, lines(3, 300))
        receivers.append(Receiver(port=port))
        await receivers[-1].start()  # the outage ends
        await until(lambda: "beta 3-299" in delivered(), "phase 3")
        agent.signal(signal.SIGTERM)
        await until(lambda: agent.proc.poll() is not None, "exit")
        assert agent.wait(timeout=1) == 0
    finally:
        agent.stop()
        await receivers[-1].stop()
    got = delivered()
    assert len(got) == len(set(got)), "duplicates"
    assert [m for m in got if m.endswith(tuple(f" 1-{i}" for i in range(100)))] == [f"alpha 1-{i}" for i in range(100)]
    assert [m for m in got if " 3-" in m] == [f"beta 3-{i}" for i in range(300)]
    # the lines written during the outage went through the filter of their time:
    # alpha up to the reload, beta after it, with nothing lost at the cut
    phase2 = lines(2, 300)
    got2 = [m for m in got if " 2-" in m]
    cuts = [c for c in range(len(phase2) + 1)
            if got2 == [m for m in phase2[:c] if m.startswith("alpha")] + [m for m in phase2[c:] if m.startswith("beta")]]
    assert cuts, got2
    assert count_events(agent, "sink drained and stopped") == 1  # the replaced sink
    assert TOKEN not in agent.stderr_path.read_text()
