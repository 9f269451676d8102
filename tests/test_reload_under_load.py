"""Issue 17's acceptance scenario: 10 reloads while lines flow at about 5,000/s.

The reloads alternate two valid configs and an invalid one. Nothing may be
lost or duplicated, the apiserver must see no new pod list or watch, and the
lines written after each valid reload must show that config's shape.

Config A: source -> filter -> sink ``out``; pod name at ``.kubernetes.pod_name``.
Config B: the source puts the pod name at ``.kubernetes.pod`` (the source is
reconfigured in place), a route sends pod-0 to a second sink ``out2`` and the
rest to ``out`` (a transform replaced, a sink rewired, a sink added; going back
to A drains and removes ``out2``). Both sinks write to the same stdout file.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

from apiserver_emulator import ApiServerEmulator
from apiserver_emulator.objects import make_pod
from tests.agent_process import AgentProcess
from tests.logwriter import SeqTracker, parse_line
from tests.test_process_reliability import BackgroundWriters

NODE = "node-1"
PODS = 4
#: BackgroundWriters sleeps 10 ms between ticks, so it writes a little under the asked
#: rate: this gives about 5,000 lines/s
RATE = 5600
RELOADS = 10


def config_text(tmp_path: Path, kubeconfig: Path, pods: Path, shape: str) -> str:
    head = (
        f"data_dir: {tmp_path / 'data'}\n"
        "api: {enabled: false}\n"
        "shutdown_grace_secs: 30\n"
        f"kubernetes: {{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0}}\n"
        "sources:\n"
        "  pods:\n"
        f"    type: kubernetes_logs\n    log_dir: {pods}\n"
        "    insert_node_fields: false\n    insert_namespace_fields: false\n    rescan_interval_secs: 1\n"
    )
    if shape == "A":
        return head + (
            "transforms:\n  f: {type: filter, inputs: [pods], condition: '.stream == \"stdout\"'}\n"
            "sinks:\n  out: {type: console, inputs: [f]}\n"
        )
    if shape == "B":
        return head + (
            "    pod_annotation_fields: {pod_name: .kubernetes.pod}\n"
            "transforms:\n  r: {type: route, inputs: [pods], route: {p0: '.kubernetes.pod == \"pod-0\"'}}\n"
            "sinks:\n  out: {type: console, inputs: [r._unmatched]}\n  out2: {type: console, inputs: [r.p0]}\n"
        )
    return head + "sinks:\n  out: {type: console, inputs: [f]}\n"  # invalid: there is no f


def shape_of(record: dict) -> str:
    kube = record["kubernetes"]
    return "B" if "pod" in kube and "pod_name" not in kube else "A"


class Output:
    """Follows the agent's stdout file: (source, seq, shape) of each record, in delivery order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.records: list[tuple[str, int, str]] = []
        self.max_seq: dict[str, int] = {}

    def read(self) -> None:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.splitlines():
            record = json.loads(line)
            source, seq = parse_line(b"ts stdout F " + record["message"].encode())
            self.records.append((source, seq, shape_of(record)))
            self.max_seq[source] = max(seq, self.max_seq.get(source, -1))

    def delivered_past(self, seqs: dict[str, int]) -> bool:
        self.read()
        return all(self.max_seq.get(source, -1) >= seq for source, seq in seqs.items())


async def wait_for(predicate, what: str, agent: AgentProcess, timeout: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert agent.proc.poll() is None, agent.stderr_path.read_text()[-3000:]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def outcomes(agent: AgentProcess) -> int:
    return sum(1 for e in agent.log_events() if str(e.get("event", "")).startswith("config reload"))


async def test_ten_reloads_at_5000_lines_per_second(apiserver: ApiServerEmulator, tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    for i in range(PODS):
        apiserver.create("pods", make_pod(f"pod-{i}", "user-test", node=NODE, uid=f"uid-{i:04d}"))
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    config = tmp_path / "agent.yaml"
    config.write_text(config_text(tmp_path, kubeconfig, pods, "A"))
    out_path = tmp_path / "out.ndjson"
    output = Output(out_path)
    #: (shape, the writers' seq when it was applied, records delivered when the next valid reload was asked for)
    windows: list[tuple[str, dict[str, int], int]] = []
    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            await wait_for(lambda: any(e.get("event") == "started" for e in agent.log_events()), "start", agent)
            pod_requests = {k: v for k, v in apiserver.requests.items() if k[1] == "pods"}
            started = time.monotonic()
            with BackgroundWriters(pods, pods=PODS, rate=RATE) as writers:
                applied = ("A", writers.expected())
                for index in range(RELOADS):
                    await asyncio.sleep(0.5)
                    # lines written since the last change are delivered: they show it
                    target = {source: seq + 100 for source, seq in applied[1].items()}
                    await wait_for(lambda: output.delivered_past(target), "lines after the change", agent)
                    shape = "BXA"[index % 3]
                    config.write_text(config_text(tmp_path, kubeconfig, pods, shape))
                    done = outcomes(agent)
                    output.read()
                    asked = len(output.records)
                    agent.signal(signal.SIGHUP)
                    await wait_for(lambda: outcomes(agent) > done, f"reload {index + 1}", agent)
                    if shape != "X":
                        windows.append((applied[0], applied[1], asked))
                        applied = (shape, writers.expected())
                await asyncio.sleep(0.5)
            expected = writers.expected()
            print(f"{sum(expected.values())} lines in {time.monotonic() - started:.1f} s")
            await wait_for(lambda: output.delivered_past({s: n - 1 for s, n in expected.items()}), "every line", agent)
            windows.append((applied[0], applied[1], len(output.records)))
            assert {k: v for k, v in apiserver.requests.items() if k[1] == "pods"} == pod_requests
            assert apiserver.open_watches.get("pods") == 1
            agent.signal(signal.SIGTERM)
            await wait_for(lambda: agent.proc.poll() is not None, "exit", agent)
        finally:
            agent.stop()
    output.read()
    events = agent.log_events()
    assert sum(e.get("event") == "config reloaded" for e in events) == 7
    assert sum(e.get("event", "").startswith("config reload rejected") for e in events) == 3
    assert sum(expected.values()) > 20_000
    tracker = SeqTracker()
    for source, seq, _ in output.records:
        counts = tracker.seen.setdefault(source, {})
        counts[seq] = counts.get(seq, 0) + 1
    assert tracker.missing(expected) == {}
    assert tracker.duplicates() == {}
    for shape, applied_at, delivered_before in windows:
        # written after the change and delivered before the next one was asked for
        shown = [r for r in output.records[:delivered_before] if r[1] >= applied_at[r[0]]]
        assert {r[0] for r in shown} == set(expected), f"config {shape}: no lines of some pod show it"
        wrong = [r for r in shown if r[2] != shape]
        assert not wrong, f"lines written under config {shape} with another shape: {wrong[:5]}"
