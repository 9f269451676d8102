"""SIGHUP rereads every config file: several --config files and a --config-dir, in a real agent process."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from tests.agent_process import EMPTY_SNAPSHOT, AgentProcess, read_records


def cri(message: str) -> bytes:
    return f"2026-12-03T10:00:00.000000000Z stdout F {message}\n".encode()


def wait_until(predicate, what: str, agent: AgentProcess, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if agent.proc.poll() is not None:
            raise AssertionError(f"agent exited: {agent.stderr_path.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def reload_and_wait(agent: AgentProcess, outcome: str) -> dict:
    def events() -> list[dict]:
        return [e for e in agent.log_events() if str(e.get("event", "")).startswith(outcome)]

    before = len(events())
    agent.signal(signal.SIGHUP)
    wait_until(lambda: len(events()) > before, f"log {outcome!r}", agent)
    return events()[-1]


def test_sighup_rereads_every_file_of_several_configs_and_a_dir(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    log_file = pods / "shop_web-1_uid-1" / "app" / "0.log"
    log_file.parent.mkdir(parents=True)
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(EMPTY_SNAPSHOT)
    main = tmp_path / "agent.toml"
    main.write_text(f'data_dir = "{tmp_path / "data"}"\napi.enabled = false\n'
                    f'[kubernetes]\nnode_name = "n1"\nsnapshot = "{snapshot}"\n')
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps({"sources": {"pods": {"type": "kubernetes_logs", "log_dir": str(pods),
                                                        "insert_node_fields": False, "rescan_interval_secs": 1}}}))
    conf_dir = tmp_path / "conf.d"
    (conf_dir / "transforms").mkdir(parents=True)
    keep = conf_dir / "transforms" / "keep.yaml"
    keep.write_text("type: filter\ninputs: [pods]\ncondition: 'contains(string!(.message), \"alpha\")'\n")
    (conf_dir / "sinks.yaml").write_text("sinks:\n  out: {type: console, inputs: [keep]}\n")
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "ab") as out:
        agent = AgentProcess(main, out, extra_args=["--config", str(sources), "--config-dir", str(conf_dir)])
        try:
            agent.wait_for_log("started")
            with open(log_file, "ab") as f:
                f.write(cri("alpha 1") + cri("beta 1"))
            wait_until(lambda: [r["message"] for r in read_records(out_path)] == ["alpha 1"], "phase 1", agent)
            keep.write_text(keep.read_text().replace("alpha", "beta"))
            event = reload_and_wait(agent, "config reloaded")
            assert event["changes"] == {"transforms": {"changed": ["keep"]}}
            with open(log_file, "ab") as f:
                f.write(cri("alpha 2") + cri("beta 2"))
            wait_until(lambda: [r["message"] for r in read_records(out_path)] == ["alpha 1", "beta 2"], "phase 2", agent)
            (conf_dir / "sinks.yaml").write_text("sinks:\n  out: {type: console, inputs: [keep], colour: red}\n")
            event = reload_and_wait(agent, "config reload rejected")
            assert event["error"].startswith("sinks.out.colour: unknown key")
            assert event["error"].endswith(f"(in {conf_dir / 'sinks.yaml'})")
            agent.signal(signal.SIGTERM)
            assert agent.wait(timeout=30) == 0
        finally:
            agent.stop()
