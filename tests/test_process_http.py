"""The agent process shipping to a real HTTP receiver: crashes, outages, secrets."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

from tests.agent_process import AgentProcess, offline_config, rss_kib
from tests.logwriter import LogWriter, SeqTracker
from receivers.ndjson import Receiver

LINE_BYTES = 120
TOKEN = "s3cr3t-token-value-never-logged"


def http_sink(url: str, token_file: Path, extra: str = "") -> str:
    return (
        "  ship:\n"
        "    type: http\n"
        "    inputs: [pods]\n"
        f"    uri: {url}/ingest\n"
        "    compression: gzip\n"
        "    batch: {max_events: 500, max_bytes: 262144, timeout_secs: 0.2}\n"
        "    request: {timeout_secs: 2, concurrency: 2}\n"
        "    retry: {initial_backoff_secs: 0.05, max_backoff_secs: 0.5}\n"
        f"    auth: {{strategy: bearer, token_file: {token_file}}}\n"
        f"{extra}"
    )


def tracker_of(*receivers: Receiver) -> SeqTracker:
    tracker = SeqTracker()
    for receiver in receivers:
        for request in receiver.accepted:
            for record in request.records():
                tracker.add(b"ts stdout F " + record["message"].encode())
    return tracker


async def wait_started(agent: AgentProcess, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not any(e.get("event") == "started" for e in agent.log_events()):
        if agent.proc.poll() is not None:
            raise AssertionError(agent.stderr_path.read_text()[-2000:])
        if time.monotonic() > deadline:
            raise AssertionError("agent did not start")
        await asyncio.sleep(0.05)


async def wait_exit(agent: AgentProcess, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while agent.proc.poll() is None:
        if time.monotonic() > deadline:
            agent.stop()
            raise AssertionError("agent did not exit")
        await asyncio.sleep(0.05)
    agent.wait(timeout=1)
    return agent.proc.returncode


async def wait_for_all(receivers: list[Receiver], expected: dict[str, int], timeout: float = 180.0) -> SeqTracker:
    deadline = time.monotonic() + timeout
    while True:
        tracker = tracker_of(*receivers)
        if not tracker.missing(expected) or time.monotonic() > deadline:
            return tracker
        await asyncio.sleep(0.1)


async def test_kill_9_with_batches_in_flight_then_restart_loses_nothing(tmp_path: Path) -> None:
    receiver = Receiver(timeout_sleep=3.0)
    await receiver.start()
    receiver.fail_randomly(seed=3, rate=0.3, actions=[500, 503, ("retry_after", 429, "0"), "reset"])
    receiver.delay_randomly(seed=4, max_secs=0.2)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    pods = tmp_path / "pods"
    pods.mkdir()
    config = offline_config(tmp_path, pods, sink=http_sink(receiver.url, token_file))
    writers = [LogWriter(pods, "user-x", f"pod-{i}", f"uid-{i}", line_bytes=LINE_BYTES) for i in range(3)]
    stderr_logs = []
    try:
        for _ in range(4):
            agent = AgentProcess(config, subprocess.DEVNULL)
            await wait_started(agent)
            for _ in range(10):
                for writer in writers:
                    writer.write(50)
                await asyncio.sleep(0.05)
            agent.kill9()
            stderr_logs.append(agent.stderr_path.read_text())
        receiver.stop_failing()
        agent = AgentProcess(config, subprocess.DEVNULL)
        await wait_started(agent)
        expected = {w.source: w.seq for w in writers}
        tracker = await wait_for_all([receiver], expected)
        agent.signal(15)
        assert await wait_exit(agent) == 0
        stderr_logs.append(agent.stderr_path.read_text())
    finally:
        for writer in writers:
            writer.close()
        await receiver.stop()
    assert tracker.missing(expected) == {}
    assert sum(expected.values()) == 4 * 10 * 3 * 50
    for text in stderr_logs:
        assert TOKEN not in text
    for request in receiver.received:
        assert request.headers.get("Authorization") == f"Bearer {TOKEN}"


async def test_receiver_down_20s_memory_bounded_then_everything_arrives(tmp_path: Path) -> None:
    receiver = Receiver()
    port = await receiver.start()
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    pods = tmp_path / "pods"
    pods.mkdir()
    config = offline_config(tmp_path, pods, sink=http_sink(receiver.url, token_file))
    writers = [LogWriter(pods, "user-x", f"pod-{i}", f"uid-{i}", line_bytes=LINE_BYTES) for i in range(4)]
    agent = AgentProcess(config, subprocess.DEVNULL)
    try:
        await wait_started(agent)
        for writer in writers:
            writer.write(200)
        await wait_for_all([receiver], {w.source: w.seq for w in writers}, timeout=120)
        await asyncio.sleep(0.5)
        before = rss_kib(agent.pid)
        await receiver.stop()
        peak = before
        started = time.monotonic()
        while time.monotonic() - started < 20:
            for writer in writers:
                writer.write(250)  # 4 x 250 lines every 0.1 s: about 12 MB in 20 s
            peak = max(peak, rss_kib(agent.pid))
            await asyncio.sleep(0.1)
        receiver2 = Receiver(port=port)
        await receiver2.start()
        expected = {w.source: w.seq for w in writers}
        # what arrived before the outage was acknowledged, so it is not sent again; the backlog
        # (~12 MB) takes minutes on a loaded machine: the bound is for a loss, not for speed
        tracker = await wait_for_all([receiver, receiver2], expected, timeout=300)
        await receiver2.stop()
    finally:
        for writer in writers:
            writer.close()
        agent.stop()
    missing = tracker.missing(expected)
    assert missing == {}, {source: (len(seqs), seqs[0], seqs[-1]) for source, seqs in missing.items()}
    print(f"RSS before the outage {before} KiB, peak during it {peak} KiB")
    assert peak - before < 12 * 1024, f"RSS grew from {before} KiB to {peak} KiB while the receiver was down"
    assert TOKEN not in agent.stderr_path.read_text()


async def test_rejected_batch_is_dead_lettered_and_the_checkpoint_moves_on(tmp_path: Path) -> None:
    receiver = Receiver()
    await receiver.start()
    receiver.fail_next(("echo", 400))
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    pods = tmp_path / "pods"
    pods.mkdir()
    config = offline_config(tmp_path, pods, sink=http_sink(receiver.url, token_file))
    writer = LogWriter(pods, "user-x", "pod-0", "uid-0", line_bytes=LINE_BYTES)
    writer.write(100)
    agent = AgentProcess(config, subprocess.DEVNULL, once=True)
    try:
        assert await wait_exit(agent) == 0
        writer.write(100)
        agent = AgentProcess(config, subprocess.DEVNULL, once=True)
        assert await wait_exit(agent) == 0
    finally:
        writer.close()
        await receiver.stop()
    tracker = tracker_of(receiver)
    # the first batch (the first 100 lines) was refused with 400 and dead-lettered; the rest arrived
    assert tracker.missing({writer.source: 200}) == {writer.source: list(range(100))}
    dead = tmp_path / "data" / "dead-letter" / "ship.ndjson"
    letters = [json.loads(line) for line in dead.read_bytes().splitlines()]
    assert {letter["reason"] for letter in letters} == {"http_400"}
    dead_tracker = SeqTracker()
    for letter in letters:
        dead_tracker.add(b"ts stdout F " + letter["record"]["message"].encode())
    assert dead_tracker.missing({writer.source: 100}) == {}  # every refused line is in the file
    # the second run started after the dead-lettered lines: none was sent twice
    assert len(receiver.received) == 2
    logs = [json.loads(line) for line in agent.stderr_path.read_text().splitlines()]
    stderr = "".join(p.read_text() for p in tmp_path.glob("agent-*.stderr"))
    assert "400" in stderr and "dead-letter" in stderr
    assert TOKEN not in stderr and TOKEN not in dead.read_text()
    assert logs[-1]["event"] == "stopped"


async def test_zstd_on_the_wire_and_413_splits_deliver_every_line_once(tmp_path: Path) -> None:
    receiver = Receiver()
    await receiver.start()
    receiver.limit_body(20_000)  # about 40 records of this test: 413 for larger requests
    pods = tmp_path / "pods"
    pods.mkdir()
    sink = (
        "  ship:\n"
        "    type: http\n"
        "    inputs: [pods]\n"
        f"    uri: {receiver.url}\n"
        "    compression: zstd\n"
        "    batch: {max_events: 500, timeout_secs: 0.2}\n"
        "    retry: {initial_backoff_secs: 0.05, max_backoff_secs: 0.5}\n"
    )
    config = offline_config(tmp_path, pods, sink=sink)
    writers = [LogWriter(pods, "user-x", f"pod-{i}", f"uid-{i}", line_bytes=LINE_BYTES) for i in range(2)]
    try:
        for writer in writers:
            writer.write(600)
        agent = AgentProcess(config, subprocess.DEVNULL, once=True)
        assert await wait_exit(agent) == 0
    finally:
        for writer in writers:
            writer.close()
        await receiver.stop()
    expected = {w.source: w.seq for w in writers}
    tracker = tracker_of(receiver)
    assert tracker.missing(expected) == {} and tracker.duplicates() == {}
    assert {r.headers["Content-Encoding"] for r in receiver.received} == {"zstd"}
    assert any(r.status == 413 for r in receiver.received)
    assert all(len(r.body) <= 20_000 for r in receiver.accepted)
    assert not (tmp_path / "data" / "dead-letter" / "ship.ndjson").exists()
