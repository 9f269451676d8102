"""The tap: sessions, ports, the wiring left as it was; the tap command against a running agent."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from logagent.acks import AckGroup, Batch
from logagent.config import parse_config
from logagent.event import FileContext, LogEvent
from logagent.observe.tap import TapHub, TapSession, resolve
from logagent.observe.tap_format import as_logfmt, as_yaml
from logagent.topology import Topology
from tests.agent_process import REPO, AgentProcess, offline_config
from tests.logwriter import LogWriter

TIMEOUT = 60.0

GRAPH = """
data_dir: {data}
api: {{enabled: false}}
kubernetes: {{node_name: n, snapshot: {snapshot}}}
sources:
  pods: {{type: kubernetes_logs, log_dir: {logs}}}
transforms:
  errs: {{type: filter, inputs: [pods], condition: '.stream == "stderr"'}}
  split:
    type: route
    inputs: [pods]
    route:
      web: '.stream == "stdout"'
sinks:
  out: {{type: console, inputs: [errs, split.web]}}
  all: {{type: console, inputs: [pods]}}
"""


def graph_config(tmp_path: Path) -> Any:
    snapshot = tmp_path / "empty.json"
    snapshot.write_text('{"apiVersion": "v1", "kind": "List", "items": []}')
    text = GRAPH.format(data=tmp_path / "data", snapshot=snapshot, logs=tmp_path / "pods")
    return parse_config(text, {})


def events(n: int, stream: str = "stdout") -> list[LogEvent]:
    ctx = FileContext({"file": "/x.log"})
    return [LogEvent(f"line {i}", stream, "2026-12-04T10:00:00.000000000Z", ctx) for i in range(n)]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_session_takes_at_most_limit_records_per_interval() -> None:
    clock = Clock()
    session = TapSession(3, 0.5, clock=clock)
    point: Any = object()
    session.sample(events(2), point)
    session.sample(events(5), point)
    assert len(session.ring) == 3 and session.passed_over == 4
    session.sample(events(1), point)
    assert len(session.ring) == 3 and session.passed_over == 5
    clock.now += 0.5  # a new interval
    session.sample(events(1), point)
    assert len(session.ring) == 4 and session.missed == 0


def test_a_session_not_drained_overwrites_its_oldest_records_and_counts_them() -> None:
    clock = Clock()
    session = TapSession(2, 1.0, clock=clock)  # a ring of 4
    point: Any = object()
    for _ in range(5):
        session.sample(events(2), point)
        clock.now += 1.0
    assert len(session.ring) == 4
    assert session.take_missed() == 6 and session.missed == 0


def test_patterns_name_output_ports_and_input_ports(tmp_path: Path) -> None:
    config = graph_config(tmp_path)
    watched, notes = resolve(config, ["sp*"], ["out", "nothing*"])
    assert sorted(watched) == ["errs", "split._unmatched", "split.web"]
    outputs = [label for label in watched["split.web"] if label.direction == "output"]
    inputs = [label for label in watched["split.web"] if label.direction == "input"]
    assert [(l.component_id, l.component_kind, l.component_type) for l in outputs] == [("split", "transform", "route")]
    assert [(l.component_id, l.component_kind, l.component_type) for l in inputs] == [("out", "sink", "console")]
    assert [label.component_id for label in watched["errs"]] == ["out"]
    assert notes[0] == 'pattern "sp*" (outputs of) matched: split'
    assert "matched no component" in notes[2]
    # a sink has no outputs, a source no inputs
    assert resolve(config, ["out"], ["pods"])[0] == {}


async def test_an_attached_tap_samples_releases_and_detaches_without_a_trace(tmp_path: Path) -> None:
    topology = Topology(graph_config(tmp_path), stdout_fd=None)
    before = {port: list(targets) for port, targets in topology.wiring.edges.items()}
    hub = TapHub(topology)
    session, _ = hub.open(["errs"], ["all"], limit=100, interval_secs=1.0)
    assert len(topology.wiring.edges["errs"]) == len(before["errs"]) + 1
    assert len(topology.wiring.edges["pods"]) == len(before["pods"]) + 1

    done: list[bool] = []
    group = AckGroup(lambda: done.append(True))
    await topology.deliver("pods", Batch(events(3, "stderr") + events(2), [group], 100))
    messages = [json.loads(line) for line in session.drain()]
    by_component = sorted((m["component_id"], m["direction"], m["event"]["message"]) for m in messages)
    assert [m for m in by_component if m[0] == "errs"] == [("errs", "output", f"line {i}") for i in range(3)]
    assert len([m for m in by_component if m[0] == "all"]) == 5

    hub.close(session)
    assert {port: list(targets) for port, targets in topology.wiring.edges.items()} == before
    assert not hub.sessions
    held = [batch for inbox in topology.inboxes.values() for batch in iter(inbox.get_nowait, None)]
    assert len(held) == 3  # out: errs' and split.web's batches; all: the source's
    assert group.pending == len(held)  # the tap took its references and gave them back
    for batch in held:
        batch.release()
    assert done == [True]


def test_logfmt_and_yaml_formats() -> None:
    record = {"message": 'say "hi"', "n": 3, "kubernetes": {"pod_name": "web-0", "labels": ["a", "b"]}, "x": None}
    assert as_logfmt(record) == 'message="say \\"hi\\"" n=3 kubernetes.pod_name=web-0 kubernetes.labels[0]=a kubernetes.labels[1]=b x='
    assert as_yaml({"message": "m"}) == "---\nmessage: m"


# ---------------------------------------------------------------- against a running agent


def api_url(agent: AgentProcess) -> str:
    """The API's address, from the agent's log line (the config asks for port 0)."""
    agent.wait_for_log("health and metrics API listening")
    for event in agent.log_events():
        if event.get("event") == "health and metrics API listening":
            return str(event["url"])
    raise AssertionError("no API url logged")


def tap_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "logagent", "tap", "--no-reconnect", *args]


def run_while_writing(args: list[str], writers: list[LogWriter]) -> subprocess.CompletedProcess[str]:
    """Run a tap to its end while lines keep coming (it exits by --count)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    deadline = time.monotonic() + TIMEOUT
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            break
        for writer in writers:
            writer.write(5)
        time.sleep(0.02)
    out, err = proc.communicate(timeout=10)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def agent_with_api(tmp_path: Path, address: str, extra_api: str = "", stdout: Any = subprocess.DEVNULL) -> tuple[AgentProcess, Path]:
    pods = tmp_path / "pods"
    pods.mkdir()
    config = offline_config(tmp_path, pods, extra=(
        "transforms:\n  errs: {type: filter, inputs: [pods], condition: '.stream == \"stderr\"'}\n"
    ), sink="  out: {type: console, inputs: [pods, errs]}\n")
    text = config.read_text().replace("api: {enabled: false}", f'api: {{enabled: true, address: "{address}"{extra_api}}}')
    config.write_text(text)
    return AgentProcess(config, stdout), config


def test_tap_prints_the_records_of_the_chosen_component_only(tmp_path: Path) -> None:
    agent, _ = agent_with_api(tmp_path, "127.0.0.1:0")
    out = LogWriter(tmp_path / "pods", "default", "web-0", "uid-1")
    err = LogWriter(tmp_path / "pods", "default", "web-0", "uid-1", container="side")
    err_lines = ErrWriter(err)
    try:
        url = api_url(agent)
        tapped = run_while_writing(tap_command("--url", url, "--outputs-of", "errs", "--count", "7"), [out, err_lines])
        assert tapped.returncode == 0, tapped.stderr
        records = [json.loads(line) for line in tapped.stdout.splitlines()]
        assert len(records) == 7
        assert {r["stream"] for r in records} == {"stderr"}
        assert '[tap] pattern "errs" (outputs of) matched: errs' in tapped.stderr

        both = run_while_writing(tap_command("--url", url, "--inputs-of", "out", "--count", "40", "--meta"), [out, err_lines])
        assert both.returncode == 0, both.stderr
        seen = [json.loads(line) for line in both.stdout.splitlines()]
        assert {r["meta"]["component_id"] for r in seen} == {"out"}
        assert {r["meta"]["port"] for r in seen} <= {"pods", "errs"}
        assert {r["event"]["stream"] for r in seen if r["meta"]["port"] == "errs"} <= {"stderr"}
    finally:
        agent.stop()
        out.close()
        err.close()


class ErrWriter:
    """A LogWriter whose lines are on stderr."""

    def __init__(self, writer: LogWriter) -> None:
        self.writer = writer

    def write(self, n: int) -> None:
        from tests.logwriter import format_line

        data = b"".join(format_line(self.writer.source, self.writer.seq + i, stream="stderr") for i in range(n))
        self.writer.seq += n
        with open(self.writer.path, "ab") as f:
            f.write(data)


def non_loopback_address() -> str | None:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this picks the outgoing interface
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read(1 << 20).decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def test_the_tap_is_refused_on_the_network_address_and_served_on_the_socket(tmp_path: Path) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    agent, config = agent_with_api(tmp_path, "0.0.0.0:0")
    writer = LogWriter(tmp_path / "pods", "default", "web-0", "uid-1")
    try:
        port = api_url(agent).rsplit(":", 1)[1]
        network = f"http://{address}:{port}"
        status, body = http_get(f"{network}/tap?outputs_of=pods")
        assert status == 403 and "api.sock" in body
        assert http_get(f"{network}/health")[0] == 200
        status, body = http_get(f"{network}/metrics")
        assert status == 200 and "logagent_source_behind_bytes" in body
        sock = tmp_path / "data" / "api.sock"
        assert (os.stat(sock).st_mode & 0o777) == 0o600
        assert (os.stat(tmp_path / "data").st_mode & 0o777) == 0o700
        tapped = run_while_writing(tap_command("--config", str(config), "pods", "--count", "3"), [writer])
        assert tapped.returncode == 0, tapped.stderr
        assert len(tapped.stdout.splitlines()) == 3
        assert f"connected to unix://{sock}" in tapped.stderr
    finally:
        agent.stop()
        writer.close()


def test_a_network_tap_needs_the_bearer_token(tmp_path: Path) -> None:
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    token = tmp_path / "tap-token"
    token.write_text("the-right-token\n")
    agent, _ = agent_with_api(tmp_path, "0.0.0.0:0", f", tap_token_file: {token}")
    writer = LogWriter(tmp_path / "pods", "default", "web-0", "uid-1")
    try:
        network = f"http://{address}:{api_url(agent).rsplit(':', 1)[1]}"
        assert http_get(f"{network}/tap?outputs_of=pods")[0] == 401
        assert http_get(f"{network}/tap?outputs_of=pods", {"Authorization": "Bearer the-wrong-token"})[0] == 401
        assert http_get(f"{network}/health")[0] == 200
        wrong = tmp_path / "wrong"
        wrong.write_text("nope")
        refused = subprocess.run(tap_command("--url", network, "--token-file", str(wrong), "pods"),
                                 capture_output=True, text=True, cwd=REPO, timeout=TIMEOUT)
        assert refused.returncode == 1 and "(401)" in refused.stderr
        tapped = run_while_writing(tap_command("--url", network, "--token-file", str(token), "pods", "--count", "2"),
                                   [writer])
        assert tapped.returncode == 0, tapped.stderr
        assert len(tapped.stdout.splitlines()) == 2
    finally:
        agent.stop()
        writer.close()


def test_a_stalled_tap_client_misses_records_and_is_told_how_many(tmp_path: Path) -> None:
    output = tmp_path / "out.ndjson"
    with open(output, "wb") as sink_out:
        agent, _ = agent_with_api(tmp_path, "127.0.0.1:0", stdout=sink_out)
        writer = LogWriter(tmp_path / "pods", "default", "web-0", "uid-1", line_bytes=200)
        client = socket.socket()
        try:
            host, port = api_url(agent).removeprefix("http://").rsplit(":", 1)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.connect((host, int(port)))
            client.sendall(b"GET /tap?outputs_of=pods&limit=10000&interval_ms=10 HTTP/1.1\r\nHost: x\r\n\r\n")
            first = client.recv(1)  # the answer has begun: the session is attached; then read no more
            assert first
            total = 60_000
            for _ in range(total // 1000):
                writer.write(1000)
            wait_for(lambda: count_lines(output) >= total, "every record delivered while the tap client stalls")
            client.setblocking(False)
            received = read_until(client, b'"type":"missed"')
            assert b'"type":"missed"' in received
        finally:
            client.close()
            agent.stop()
            writer.close()
    missed = [json.loads(line[line.index(b"{"):]) for line in received.splitlines()
              if b'"type":"missed"' in line]
    assert missed and missed[0]["count"] > 0


def count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def wait_for(predicate: Any, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def read_until(client: socket.socket, marker: bytes) -> bytes:
    """Read what the agent sends (in chunks, as it comes) until ``marker`` is in it."""
    received = bytearray()
    deadline = time.monotonic() + TIMEOUT
    while marker not in received and time.monotonic() < deadline:
        try:
            chunk = client.recv(1 << 20)
        except BlockingIOError:
            time.sleep(0.01)
            continue
        if not chunk:
            break
        received += chunk
    return bytes(received)
