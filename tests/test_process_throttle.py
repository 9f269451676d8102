"""Dropped records are acknowledged: a throttled, sampled-out or duplicate line is never read again after a restart."""

from __future__ import annotations

from pathlib import Path

from tests.agent_process import AgentProcess, offline_config, seq_lines
from tests.logwriter import LogWriter, SeqTracker

PIPELINE = (
    "transforms:\n"
    "  thr:\n"
    "    type: throttle\n"
    "    inputs: [pods]\n"
    "    threshold: 100\n"
    "    window_secs: 3600\n"
    "    key_field: '{{ kubernetes.pod_namespace }}'\n"
    "  smp: {type: sample, inputs: [thr], rate: 2, sample_rate_key: ''}\n"
)
SINK = "  out: {type: console, inputs: [smp]}\n"


def run_once(config: Path, out_path: Path) -> SeqTracker:
    with open(out_path, "wb") as out:
        agent = AgentProcess(config, out, once=True)
        assert agent.wait(timeout=120) == 0, agent.stderr_path.read_text()[-3000:]
    tracker = SeqTracker()
    tracker.add_all(seq_lines(out_path.read_bytes()))
    return tracker


def test_throttled_records_are_acknowledged_and_not_read_again(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    noisy = LogWriter(pods, "noisy", "spammer", "uid-noisy", line_bytes=120)
    quiet = LogWriter(pods, "quiet", "calm", "uid-quiet", line_bytes=120)
    noisy.write(1000)
    quiet.write(40)
    config = offline_config(tmp_path, pods, extra=PIPELINE, sink=SINK)
    first = run_once(config, tmp_path / "out1.ndjson")
    # the first 100 of the noisy namespace pass the throttle, every other one the sampler
    assert first.seen[noisy.source] == dict.fromkeys(range(0, 100, 2), 1)
    assert first.seen[quiet.source] == dict.fromkeys(range(0, 40, 2), 1)
    # a restart reads nothing again: the dropped lines' positions were committed with the kept ones
    again = run_once(config, tmp_path / "out2.ndjson")
    assert again.total() == 0
    noisy.write(10)
    third = run_once(config, tmp_path / "out3.ndjson")
    assert third.seen == {noisy.source: dict.fromkeys(range(1000, 1010, 2), 1)}  # only the new lines (a new budget)
    noisy.close()
    quiet.close()


def test_duplicates_dropped_are_acknowledged_and_not_read_again(tmp_path: Path) -> None:
    """dedupe on the namespace: one record per namespace passes; a restart reads none of the dropped ones again
    (a fresh cache would let the first of them through)."""
    pods = tmp_path / "pods"
    writers = [LogWriter(pods, f"ns{i}", "app", f"uid-{i}", line_bytes=120) for i in range(3)]
    for writer in writers:
        writer.write(500)
    extra = "transforms:\n  dd: {type: dedupe, inputs: [pods], fields: {match: [kubernetes.pod_namespace]}}\n"
    config = offline_config(tmp_path, pods, extra=extra, sink="  out: {type: console, inputs: [dd]}\n")
    first = run_once(config, tmp_path / "out1.ndjson")
    assert first.seen == {writer.source: {0: 1} for writer in writers}
    assert run_once(config, tmp_path / "out2.ndjson").total() == 0
    writers[1].write(5)
    assert run_once(config, tmp_path / "out3.ndjson").seen == {writers[1].source: {500: 1}}
    for writer in writers:
        writer.close()
