"""Multiline grouping in the running agent: CRI files, pod annotations, timeout, kill -9, bad config."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.agent_process import REPO, AgentProcess, complete_lines, offline_config
from tests.test_multiline import FIXTURES, trace_lines, traces_in

NODE = "node-a"
UIDS = {
    "api": "10000000-0000-4000-8000-000000000001",
    "web": "10000000-0000-4000-8000-000000000002",
    "legacy": "10000000-0000-4000-8000-000000000003",
    "custom": "10000000-0000-4000-8000-000000000004",
}


class CriFile:
    """Writes CRI lines with increasing timestamps; a long line can be split into P/F fragments."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.seq = 0

    def line(self, stream: str, message: str, *, split: bool = False) -> None:
        fragments = [message[: len(message) // 2], message[len(message) // 2 :]] if split else [message]
        with open(self.path, "ab") as f:
            for i, fragment in enumerate(fragments):
                self.seq += 1
                tag = "P" if i < len(fragments) - 1 else "F"
                f.write(f"2026-12-02T10:00:00.{self.seq:09d}Z {stream} {tag} {fragment}\n".encode())

    def timestamp(self, seq: int) -> str:
        return f"2026-12-02T10:00:00.{seq:09d}Z"


def pod_dir(root: Path, name: str) -> Path:
    return root / f"shop_{name}-0_{UIDS[name]}" / "app" / "0.log"


def write_every_trace(log: CriFile) -> tuple[list[str], list[str]]:
    """Every fixture trace on stderr, a stdout line after each of its lines, the 2nd line as P+F.

    Returns (the stderr lines as written, the stdout lines)."""
    stderr: list[str] = []
    stdout: list[str] = []
    log.line("stderr", "service starting")
    stderr.append("service starting")
    for name in sorted(FIXTURES):
        for i, line in enumerate(trace_lines(name)):
            log.line("stderr", line, split=(i == 1 and len(line) > 4))
            stderr.append(line)
            out = f"GET /{name}/{i} 200"
            log.line("stdout", out)
            stdout.append(out)
        log.line("stderr", f"handled {name}")
        stderr.append(f"handled {name}")
    return stderr, stdout


def snapshot(path: Path, annotations: dict[str, dict[str, str]]) -> Path:
    items = []
    for name, uid in UIDS.items():
        items.append({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-0", "namespace": "shop", "uid": uid, "resourceVersion": "1",
                         "annotations": annotations.get(name, {})},
            "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "app:1"}]},
        })
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def records(output: bytes) -> list[dict]:
    return [json.loads(line) for line in complete_lines(output)]


def of_pod(got: list[dict], name: str, stream: str) -> list[str]:
    return [r["message"] for r in got if r["kubernetes"]["pod_name"] == f"{name}-0" and r.get("stream") == stream]


def test_traces_from_cri_files_by_source_mode_and_pod_annotation(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    written = {name: write_every_trace(CriFile(pod_dir(pods, name))) for name in ("api", "web", "legacy")}
    custom = CriFile(pod_dir(pods, "custom"))
    for line in ["orphan", "[10:00:01] order 1", "  items: 3", "[10:00:02] order 2", "  items: 1", "    total: 2"]:
        custom.line("stdout", line, split=line == "  items: 3")
    snap = snapshot(tmp_path / "cluster.json", {
        "web": {"logagent.dev/multiline": "python"},
        "legacy": {"logagent.dev/multiline": "none"},
    })
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"data_dir: {tmp_path / 'data'}\n"
        "api: {enabled: false}\n"
        f"kubernetes: {{node_name: {NODE}, snapshot: {snap}}}\n"
        "sources:\n"
        f"  pods:\n    type: kubernetes_logs\n    log_dir: {pods}\n    insert_node_fields: false\n"
        "    exclude_paths_glob_patterns: ['shop_custom-*/**']\n"
        "    multiline: {mode: auto}\n"
        f"  custom:\n    type: kubernetes_logs\n    log_dir: {pods}\n    insert_node_fields: false\n"
        "    include_paths_glob_patterns: ['shop_custom-*/**']\n"
        "    multiline: {mode: pattern, start_pattern: '^\\[\\d{2}:\\d{2}:\\d{2}\\] '}\n"
        "sinks:\n  out: {type: console, inputs: [pods, custom]}\n"
    )
    result = subprocess.run([sys.executable, "-m", "logagent", "run", "--config", str(config), "--once"],
                            capture_output=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    got = records(result.stdout)

    every_trace = [trace for name in sorted(FIXTURES) for trace in traces_in(name)]
    # mode auto: each trace one record, every other line itself
    api_stderr = of_pod(got, "api", "stderr")
    assert api_stderr == ["service starting"] + [
        part for name in sorted(FIXTURES) for part in [*traces_in(name), f"handled {name}"]
    ]
    assert of_pod(got, "api", "stdout") == written["api"][1]
    first = next(r for r in got if r["message"] == every_trace[0] and r["kubernetes"]["pod_name"] == "api-0")
    assert first["timestamp"] == CriFile(Path()).timestamp(2)  # its first line's (the 1st line is "service starting")
    # annotation none: nothing grouped, partial lines still merged
    assert of_pod(got, "legacy", "stderr") == written["legacy"][0]
    # annotation python: only the Python traceback is grouped
    web = of_pod(got, "web", "stderr")
    python_trace = traces_in("python_chained.txt")[0]
    assert python_trace in web
    assert len(web) == len(written["web"][0]) - python_trace.count("\n")
    # pattern mode on its own source
    assert of_pod(got, "custom", "stdout") == ["orphan", "[10:00:01] order 1\n  items: 3",
                                                "[10:00:02] order 2\n  items: 1\n    total: 2"]


def test_invalid_regex_names_the_key_and_exits_78(tmp_path: Path) -> None:
    config = offline_config(tmp_path, tmp_path / "pods",
                            extra="    multiline: {mode: pattern, start_pattern: '^(\\d+'}\n")
    for command in (["validate"], ["run", "--once"]):
        result = subprocess.run([sys.executable, "-m", "logagent", *command, "--config", str(config)],
                                capture_output=True, timeout=60, cwd=REPO)
        assert result.returncode == 78, result.stderr.decode()
        assert "sources.pods.multiline.start_pattern" in result.stderr.decode()
        assert "invalid regex" in result.stderr.decode()


def test_condition_without_its_mode_names_the_key(tmp_path: Path) -> None:
    config = offline_config(tmp_path, tmp_path / "pods",
                            extra="    multiline: {mode: pattern, start_pattern: '^x', condition_pattern: '^y'}\n")
    result = subprocess.run([sys.executable, "-m", "logagent", "validate", "--config", str(config)],
                            capture_output=True, timeout=60, cwd=REPO)
    assert result.returncode == 78
    assert "sources.pods.multiline.condition_mode" in result.stderr.decode()


def wait_for_records(path: Path, predicate, what: str, timeout: float = 30.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = records(path.read_bytes()) if path.exists() else []
        if predicate(got):
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; got {records(path.read_bytes()) if path.exists() else []}")


def test_idle_group_is_emitted_after_timeout_ms(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    log = CriFile(pod_dir(pods, "api"))
    config = offline_config(tmp_path, pods, extra="    multiline: {mode: auto, timeout_ms: 300}\n")
    out_path = tmp_path / "out.ndjson"
    with open(out_path, "wb") as out:
        agent = AgentProcess(config, out)
        try:
            agent.wait_for_log("started")
            log.line("stdout", "ready")
            wait_for_records(out_path, lambda got: len(got) == 1, "the first line")
            lines = trace_lines("go.txt")
            for line in lines:  # the trace is the last thing written: only the timeout can end it
                log.line("stderr", line)
            got = wait_for_records(out_path, lambda got: len(got) >= 2, "the trace")
            assert [r["message"] for r in got] == ["ready", "\n".join(lines)]
        finally:
            agent.stop()


def checkpoint_offset(data_dir: Path) -> int:
    path = data_dir / "checkpoints.json"
    if not path.exists():
        return 0
    sources = json.loads(path.read_text())["sources"]
    return max((cp["offset"] for cp in sources.get("pods", {}).values()), default=0)


def test_kill_9_inside_a_group_loses_nothing_and_does_not_split_it(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    log = CriFile(pod_dir(pods, "api"))
    # a long timeout: the group is still open when the agent is killed
    config = offline_config(tmp_path, pods, extra="    multiline: {mode: auto, timeout_ms: 600000}\n")
    outputs = []
    lines = trace_lines("java.txt")[:10]
    for i in range(3):
        log.line("stdout", f"early {i}")
    out_path = tmp_path / "run1.ndjson"
    with open(out_path, "wb") as out:
        agent = AgentProcess(config, out)
        try:
            wait_for_records(out_path, lambda got: len(got) == 3, "the early lines")
            deadline = time.monotonic() + 30
            while checkpoint_offset(tmp_path / "data") == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            group_start = log.path.stat().st_size
            assert checkpoint_offset(tmp_path / "data") == group_start  # checkpoints do move
            for i, line in enumerate(lines[:5]):
                log.line("stderr", line)
                log.line("stdout", f"during {i}")
            wait_for_records(out_path, lambda got: sum(r["message"].startswith("during") for r in got) == 5,
                             "the stdout lines written inside the group")
            time.sleep(1.5)  # past checkpoint_flush_secs: a wrong checkpoint would be on disk now
            assert checkpoint_offset(tmp_path / "data") <= group_start
        finally:
            agent.kill9()
    outputs += records(out_path.read_bytes())
    assert not any(r["message"].startswith("java.lang") for r in outputs)  # the group never went out
    for line in lines[5:]:
        log.line("stderr", line)
    log.line("stderr", "after the trace")
    out_path = tmp_path / "run2.ndjson"
    with open(out_path, "wb") as out:
        assert AgentProcess(config, out, once=True).wait(60) == 0
    second = records(out_path.read_bytes())
    outputs += second
    messages = [r["message"] for r in outputs]
    assert messages.count("\n".join(lines)) == 1
    assert [m for m in messages if "java.lang" in m or "\tat " in m] == ["\n".join(lines)]
    assert {"early 0", "early 1", "early 2", "after the trace"} <= set(messages)
    # read again from the group's first line: at least once
    assert [r["message"] for r in second if r["message"].startswith("during")] == [f"during {i}" for i in range(5)]
