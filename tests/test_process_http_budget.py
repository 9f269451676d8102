"""The http sink must not wait for its batch timer while the source waits for acknowledgements.

The kubernetes_logs source stops reading once its unacknowledged bytes reach
its budget (``MAX_UNACKED_BYTES``); those bytes are acknowledged only when the
sink delivers them. A request still short of ``max_events``/``max_bytes`` at
that point can only be completed by the sink's timer, so the sink has to send
it at once. With an hour-long ``batch.timeout_secs`` nothing would arrive
within these tests' deadlines otherwise. What remains below the budget once
the writer stops is the timer's (or the shutdown's) to send, as before.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from logagent.sources.kubernetes_logs import MAX_UNACKED_BYTES
from receivers.ndjson import Receiver
from tests.agent_process import AgentProcess, offline_config
from tests.logwriter import LogWriter
from tests.test_process_http import tracker_of, wait_exit, wait_for_all, wait_started

LINE_BYTES = 1500
LINES = 4000  # about 6 MB: three times the source's budget, in one file


def http_sink(url: str, kind: str = "http") -> str:
    # max_events and max_bytes are the defaults: 2000 lines of 1.5 KB are more than the budget
    return (
        "  ship:\n"
        f"    type: {kind}\n"
        "    inputs: [pods]\n"
        f"    uri: {url}/ingest\n"
        "    batch: {timeout_secs: 3600}\n"
        "    request: {timeout_secs: 10}\n"
    )


@pytest.mark.parametrize("once", [True, False], ids=["once", "running"])
async def test_one_busy_file_over_the_budget_is_sent_without_waiting_for_the_timer(
    tmp_path: Path, once: bool
) -> None:
    assert LINE_BYTES * LINES > 2 * MAX_UNACKED_BYTES
    receiver = Receiver()
    await receiver.start()
    pods = tmp_path / "pods"
    pods.mkdir()
    writer = LogWriter(pods, "user-x", "busy", "uid-busy", line_bytes=LINE_BYTES)
    if once:
        writer.write(LINES)
    config = offline_config(tmp_path, pods, sink=http_sink(receiver.url))
    agent = AgentProcess(config, subprocess.DEVNULL, once=once)
    expected = {writer.source: LINES}
    try:
        if once:
            assert await wait_exit(agent, timeout=120) == 0, agent.stderr_path.read_text()[-2000:]
            tracker = tracker_of(receiver)
        else:
            await wait_started(agent)
            for _ in range(LINES // 500):
                writer.write(500)
            # what stays below the budget once the writer stops is sent by the timer (or at shutdown);
            # everything before it must not wait for the timer
            sent_early = {writer.source: LINES - MAX_UNACKED_BYTES // LINE_BYTES}
            tracker = await wait_for_all([receiver], sent_early, timeout=120)
            assert tracker.missing(sent_early) == {}
            agent.signal(15)
            assert await wait_exit(agent) == 0
            tracker = tracker_of(receiver)
    finally:
        agent.stop()
        writer.close()
        await receiver.stop()
    assert tracker.missing(expected) == {}
    assert tracker.duplicates() == {}
    # sent before the requests were full: the fix flushes, it does not switch batching off
    assert len(receiver.accepted) < LINES / 10
