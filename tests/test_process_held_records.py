"""Unfinished records in several files at once do not stop the source from reading (a real agent process)."""

from __future__ import annotations

import time
from pathlib import Path

from tests.agent_process import AgentProcess, offline_config, read_complete_lines, read_records

FRAGMENT = 15_000
FRAGMENTS = 60  # 900 KB of one unfinished line per file: three files hold more than the 2 MiB budget


def cri(tag: str, message: bytes) -> bytes:
    return b"2026-12-02T10:00:00.000000001Z stdout " + tag.encode() + b" " + message + b"\n"


def test_long_partial_lines_in_many_files_are_finished_and_delivered(tmp_path: Path) -> None:
    log_dir = tmp_path / "pods"
    files = []
    for i in range(3):
        path = log_dir / f"shop_api-{i}_u{i}" / "app" / "0.log"
        path.parent.mkdir(parents=True)
        path.write_bytes(cri("F", b"before %d" % i) + cri("P", b"%d" % i * FRAGMENT) * FRAGMENTS)
        files.append(path)
    output = tmp_path / "out.ndjson"
    with open(output, "wb") as out:
        config = offline_config(tmp_path, log_dir, extra="    max_merged_line_bytes: 1048576\n")  # records whole
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("started")
            deadline = time.monotonic() + 60
            while len(read_complete_lines(output)) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)  # the first lines are out: the agent has read into the unfinished ones
            time.sleep(0.5)  # more of them read before the ends are written (not needed for correctness)
            for i, path in enumerate(files):
                with open(path, "ab") as log:
                    log.write(cri("F", b" end %d" % i))
            messages: list[str] = []
            while time.monotonic() < deadline:
                messages = [record["message"] for record in read_records(output)]
                if len(messages) == 6:
                    break
                time.sleep(0.1)
        finally:
            agent.stop()
    assert sorted(messages) == sorted(
        [f"before {i}" for i in range(3)] + [str(i) * FRAGMENT * FRAGMENTS + f" end {i}" for i in range(3)]
    )
