"""Checkpoint files under crashes, corruption and failing writes: real agent processes."""

from __future__ import annotations

import random
import signal
import socket
import time
import urllib.request
from pathlib import Path

from logagent.files.checkpoints import CheckpointStore
from tests.agent_process import AgentProcess, offline_config, seq_lines, wait_until_delivered
from tests.logwriter import LogWriter, SeqTracker

LINE_BYTES = 120


def tracker_of(output: bytes) -> SeqTracker:
    tracker = SeqTracker()
    tracker.add_all(seq_lines(output))
    return tracker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metric(port: int, name: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def test_corrupt_checkpoint_file_is_set_aside_and_files_are_read_from_the_start(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    writer = LogWriter(pods, "user-test", "p", "uid-p", line_bytes=LINE_BYTES)
    writer.write(500)
    writer.close()
    data = tmp_path / "data"
    data.mkdir()
    garbage = b'{"version": 1, "sources": {"pods": {"1:2": {"offset": 99'  # cut off mid-write by a full disk
    (data / "checkpoints.json").write_bytes(garbage)
    config = offline_config(tmp_path, pods)
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "wb") as out:
        agent = AgentProcess(config, out, once=True)
        assert agent.wait(timeout=60) == 0, agent.stderr_path.read_text()[-3000:]
    corrupt = [e for e in agent.log_events() if e.get("event", "").startswith("checkpoint file is corrupt")]
    assert len(corrupt) == 1 and corrupt[0]["path"] == str(data / "checkpoints.json")
    aside = [p for p in data.iterdir() if p.name.endswith(".corrupt")]
    assert [p.read_bytes() for p in aside] == [garbage]
    # read_from: beginning (the default) for a file without a valid checkpoint
    tracker = tracker_of(out_path.read_bytes())
    assert tracker.missing({writer.source: 500}) == {} and tracker.duplicates() == {}
    # and the new checkpoint is good: a second run reads nothing again
    with open(out_path, "wb") as out:
        again = AgentProcess(config, out, once=True)
        assert again.wait(timeout=60) == 0
    assert out_path.read_bytes() == b""


def test_kill_9_never_leaves_a_torn_checkpoint_file(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    config = offline_config(tmp_path, pods)
    data = tmp_path / "data"
    writers = [LogWriter(pods, "user-test", f"p{i}", f"uid-{i}", line_bytes=LINE_BYTES) for i in range(3)]
    rng = random.Random(12)
    with open(tmp_path / "out.ndjson", "ab") as out:
        for _ in range(6):
            agent = AgentProcess(config, out)
            agent.wait_for_log("started")
            wait_until = time.monotonic() + 30
            while not (data / "checkpoints.json").exists() and time.monotonic() < wait_until:
                time.sleep(0.02)  # the first agent's first write (the files it opened)
            deadline = time.monotonic() + rng.uniform(0.2, 0.8)
            while time.monotonic() < deadline:  # checkpoints are being written when the kill comes
                for w in writers:
                    w.write(20)
                time.sleep(0.005)
            agent.kill9()
            store = CheckpointStore(data)  # loads (and would set aside) what the killed agent left
            assert store.keys("pods"), "checkpoints were written while the agent ran"
            assert not [p.name for p in data.iterdir() if p.name.endswith(".corrupt") or p.name.endswith(".tmp")]
    for w in writers:
        w.close()
    with open(tmp_path / "out.ndjson", "ab") as out:
        final = AgentProcess(config, out, once=True)
        assert final.wait(timeout=60) == 0
    tracker = tracker_of((tmp_path / "out.ndjson").read_bytes())
    assert tracker.missing({w.source: w.seq for w in writers}) == {}


def test_unwritable_data_dir_keeps_the_agent_running_and_recovers(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    data = tmp_path / "data"
    data.write_bytes(b"")  # a file where data_dir should be: every checkpoint write fails (even as root)
    port = free_port()
    config = offline_config(tmp_path, pods)
    config.write_text(config.read_text().replace("api: {enabled: false}", f"api: {{address: '127.0.0.1:{port}'}}"))
    writer = LogWriter(pods, "user-test", "p", "uid-p", line_bytes=LINE_BYTES)
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "ab") as out:
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("started")
            writer.write(100)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and (metric(port, "logagent_checkpoint_write_errors_total") or 0) < 2:
                writer.write(10)
                time.sleep(0.2)
            assert metric(port, "logagent_checkpoint_write_errors_total") >= 2  # retried
            assert agent.proc.poll() is None
            data.unlink()  # room again
            writer.write(10)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not (data / "checkpoints.json").exists():
                time.sleep(0.1)
            assert (data / "checkpoints.json").exists()
            agent.wait_for_log("checkpoint writes work again")
            wait_until_delivered(out_path, {writer.source: writer.seq}, agent)
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()
            writer.close()
    failures = [e for e in agent.log_events() if e.get("event", "").startswith("cannot write checkpoints")]
    assert len(failures) == 1, failures  # once per minute, not once per retry
    assert failures[0]["path"] == str(data / "checkpoints.json")
    tracker = tracker_of(out_path.read_bytes())
    assert tracker.missing({writer.source: writer.seq}) == {}
    assert CheckpointStore(data).get("pods", next(iter(CheckpointStore(data).keys("pods")))).offset > 0
