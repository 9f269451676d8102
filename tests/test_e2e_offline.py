"""`logagent run --once` and `logagent validate` as real processes, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
NODE = "node-a"
WEB_UID = "11111111-2222-4333-8444-555555555555"
DB_UID = "66666666-7777-4888-9999-aaaaaaaaaaaa"


def run_agent(*args: str, timeout: float = 60, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "logagent", *args],
        capture_output=True,
        timeout=timeout,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )


def pod(namespace: str, name: str, uid: str, labels: dict[str, str], containers: list[tuple[str, str]]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": "42",
            "labels": labels,
            "annotations": {"team": "core"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name.rsplit("-", 1)[0], "uid": "x", "controller": True}],
            "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:metadata": {}}}],
        },
        "spec": {"nodeName": NODE, "containers": [{"name": c, "image": image} for c, image in containers]},
        "status": {
            "podIP": "10.0.0.5",
            "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}],
            "containerStatuses": [
                {"name": c, "image": image, "imageID": f"{image}@sha256:{'ab' * 32}", "containerID": f"containerd://{c}-id"}
                for c, image in containers
            ],
        },
    }


@pytest.fixture
def cluster(tmp_path: Path) -> dict[str, Path]:
    pods_dir = tmp_path / "pods"
    web = pods_dir / f"user-bob_web-0_{WEB_UID}" / "app"
    web.mkdir(parents=True)
    (web / "0.log").write_bytes(
        b"2026-12-02T10:00:00.000000001Z stdout F hello from web\n"
        b"2026-12-02T10:00:00.000000002Z stderr P err part one, \n"
        b"2026-12-02T10:00:00.000000003Z stdout F interleaved stdout\n"
        b"2026-12-02T10:00:00.000000004Z stderr F err part two\n"
        b"not a log line at all\n"
        b"2026-12-02T10:00:00.000000005Z stdout F bad utf8 \xff\xfe here\n"
        # rotated and compressed files are never read
    )
    (web / "0.log.20261202-100000.gz").write_bytes(b"\x1f\x8b not read")
    db = pods_dir / f"kube-system_db-0_{DB_UID}" / "postgres"
    db.mkdir(parents=True)
    (db / "0.log").write_bytes(
        b'{"log":"db ready\\n","stream":"stdout","time":"2026-12-02T10:00:01.000000001Z","attrs":{"x":"y"}}\n'
        b'{"log":"chunk-a ","stream":"stderr","time":"2026-12-02T10:00:01.000000002Z"}\n'
        b'{"log":"chunk-b\\n","stream":"stderr","time":"2026-12-02T10:00:01.000000003Z"}\n'
    )
    orphan = pods_dir / "user-eve_gone-1_99999999-0000-4000-8000-000000000000" / "main"
    orphan.mkdir(parents=True)
    (orphan / "0.log").write_bytes(b"2026-12-02T10:00:02.000000001Z stdout F from a pod the snapshot does not know\n")

    snapshot = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            pod("user-bob", "web-0", WEB_UID, {"app": "web"}, [("app", "example/web:1.2")]),
            pod("kube-system", "db-0", DB_UID, {"app": "db"}, [("postgres", "postgres:17")]),
            pod("user-bob", "elsewhere-0", "00000000-0000-4000-8000-0000000000ee", {}, [("x", "x:1")]) | {"spec": {"nodeName": "node-b", "containers": []}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "user-bob", "resourceVersion": "7", "labels": {"userNS": "true"}, "annotations": {"big": "x" * 1000}}},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system", "resourceVersion": "3", "labels": {"system": "yes"}}},
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE, "resourceVersion": "9", "labels": {"zone": "a"}}},
        ],
    }
    snapshot_path = tmp_path / "cluster.json"
    snapshot_path.write_text(json.dumps(snapshot))
    return {"root": tmp_path, "pods": pods_dir, "snapshot": snapshot_path}


def write_config(cluster: dict[str, Path], body: str) -> Path:
    path = cluster["root"] / "agent.yaml"
    path.write_text(
        f"data_dir: {cluster['root'] / 'data'}\n"
        f"api: {{enabled: false}}\n"
        f"kubernetes:\n  node_name: ${{NODE_NAME}}\n  snapshot: {cluster['snapshot']}\n" + body
    )
    return path


def records(stdout: bytes) -> list[dict]:
    return [json.loads(line) for line in stdout.decode().splitlines()]


def test_once_prints_exact_enriched_records(cluster: dict[str, Path]) -> None:
    config = write_config(
        cluster,
        f"""
sources:
  app_logs:
    type: kubernetes_logs
    log_dir: {cluster['pods']}
    pod_annotation_fields:
      pod_namespace: .kubernetes.namespace_name
      pod_annotations: ""
transforms:
  user_only:
    type: filter
    inputs: [app_logs]
    condition: '.kubernetes.namespace_name != null && starts_with(string!(.kubernetes.namespace_name), "user-")'
  by_stream:
    type: route
    inputs: [app_logs]
    route:
      errors: '.stream == "stderr"'
sinks:
  out:
    type: console
    inputs: [user_only, by_stream.errors]
""",
    )
    result = run_agent("run", "--config", str(config), "--once", env={"NODE_NAME": NODE})
    assert result.returncode == 0, result.stderr.decode()
    got = records(result.stdout)
    web_file = str(cluster["pods"] / f"user-bob_web-0_{WEB_UID}" / "app" / "0.log")
    db_file = str(cluster["pods"] / f"kube-system_db-0_{DB_UID}" / "postgres" / "0.log")
    web_kube = {
        "container_id": "containerd://app-id",
        "container_image": "example/web:1.2",
        "container_image_id": f"example/web:1.2@sha256:{'ab' * 32}",
        "container_name": "app",
        "pod_ip": "10.0.0.5",
        "pod_ips": ["10.0.0.5", "fd00::5"],
        "pod_labels": {"app": "web"},
        "pod_name": "web-0",
        "namespace_name": "user-bob",
        "pod_node_name": NODE,
        "pod_owner": "StatefulSet/web",
        "pod_uid": WEB_UID,
        "namespace_labels": {"userNS": "true"},
        "node_labels": {"zone": "a"},
    }

    def web(message: str, stream: str | None, ts: str | None) -> dict:
        record = {"file": web_file, "source_type": "kubernetes_logs", "kubernetes": web_kube, "message": message}
        if stream:
            record["stream"] = stream
        if ts:
            record["timestamp"] = ts
        return record

    expected_web = [
        web("hello from web", "stdout", "2026-12-02T10:00:00.000000001Z"),
        web("interleaved stdout", "stdout", "2026-12-02T10:00:00.000000003Z"),
        web("err part one, err part two", "stderr", "2026-12-02T10:00:00.000000002Z"),
        web("err part one, err part two", "stderr", "2026-12-02T10:00:00.000000002Z"),  # filter and route
        web("not a log line at all", None, None),
        web("bad utf8 \ufffd\ufffd here", "stdout", "2026-12-02T10:00:00.000000005Z"),
    ]
    db_record = {
        "file": db_file,
        "source_type": "kubernetes_logs",
        "kubernetes": {
            "container_id": "containerd://postgres-id",
            "container_image": "postgres:17",
            "container_image_id": f"postgres:17@sha256:{'ab' * 32}",
            "container_name": "postgres",
            "pod_ip": "10.0.0.5",
            "pod_ips": ["10.0.0.5", "fd00::5"],
            "pod_labels": {"app": "db"},
            "pod_name": "db-0",
            "namespace_name": "kube-system",
            "pod_node_name": NODE,
            "pod_owner": "StatefulSet/db",
            "pod_uid": DB_UID,
            "namespace_labels": {"system": "yes"},
            "node_labels": {"zone": "a"},
        },
        "message": "chunk-a chunk-b",
        "stream": "stderr",
        "timestamp": "2026-12-02T10:00:01.000000002Z",
    }
    orphan_file = str(cluster["pods"] / "user-eve_gone-1_99999999-0000-4000-8000-000000000000" / "main" / "0.log")
    orphan = {
        "file": orphan_file,
        "source_type": "kubernetes_logs",
        "kubernetes": {
            "container_name": "main",
            "pod_name": "gone-1",
            "namespace_name": "user-eve",
            "pod_uid": "99999999-0000-4000-8000-000000000000",
            "node_labels": {"zone": "a"},
        },
        "message": "from a pod the snapshot does not know",
        "stream": "stdout",
        "timestamp": "2026-12-02T10:00:02.000000001Z",
    }
    by_file: dict[str, list[dict]] = {}
    for record in got:
        by_file.setdefault(record["file"], []).append(record)
    assert sorted(by_file) == sorted([web_file, db_file, orphan_file])
    assert _sorted(by_file[web_file]) == _sorted(expected_web)
    # order within a stream of one file is kept
    assert [r["message"] for r in by_file[web_file] if r.get("stream") == "stdout"][:2] == ["hello from web", "interleaved stdout"]
    assert by_file[db_file] == [db_record]
    assert by_file[orphan_file] == [orphan]
    # the agent's own logs are on stderr, JSON, never on stdout
    for line in result.stderr.decode().splitlines():
        json.loads(line)

    # a second run resumes from the checkpoints: nothing new to print
    again = run_agent("run", "--config", str(config), "--once", env={"NODE_NAME": NODE})
    assert again.returncode == 0, again.stderr.decode()
    assert again.stdout == b""


def _sorted(items: list[dict]) -> list[str]:
    return sorted(json.dumps(item, sort_keys=True) for item in items)


def test_namespace_fields_only_for_the_source_that_asks(cluster: dict[str, Path]) -> None:
    config = write_config(
        cluster,
        f"""
sources:
  with_ns:
    type: kubernetes_logs
    log_dir: {cluster['pods']}
    insert_namespace_fields: true
    insert_node_fields: false
  without_ns:
    type: kubernetes_logs
    log_dir: {cluster['pods']}
    insert_namespace_fields: false
    insert_node_fields: false
transforms:
  labelled:
    type: filter
    inputs: [with_ns, without_ns]
    condition: '.kubernetes.namespace_labels.userNS == "true"'
sinks:
  out:
    type: console
    inputs: [labelled]
  all:
    type: console
    target: stderr
    encoding: text
    inputs: [without_ns]
""",
    )
    result = run_agent("run", "--config", str(config), "--once", env={"NODE_NAME": NODE})
    assert result.returncode == 0, result.stderr.decode()
    got = records(result.stdout)
    assert got, "the user-bob records of with_ns pass the filter"
    assert all(r["kubernetes"]["namespace_labels"] == {"userNS": "true"} for r in got)
    assert all("node_labels" not in r["kubernetes"] for r in got)
    assert len(got) == 5  # web-0's records only, from the source that asked for namespace fields
    assert b"from a pod the snapshot does not know" in result.stderr  # text encoding, other source


def test_validate_exit_codes_and_messages(cluster: dict[str, Path]) -> None:
    good = write_config(
        cluster,
        f"sources:\n  a: {{type: kubernetes_logs, log_dir: {cluster['pods']}}}\nsinks:\n  o: {{type: console, inputs: [a]}}\n",
    )
    ok = run_agent("validate", "--config", str(good), env={"NODE_NAME": NODE})
    assert ok.returncode == 0, ok.stderr.decode()
    bad = cluster["root"] / "bad.yaml"
    bad.write_text(good.read_text().replace("inputs: [a]", "inputs: [a], encoding: xml"))
    result = run_agent("validate", "--config", str(bad), env={"NODE_NAME": NODE})
    assert result.returncode == 78
    assert 'sinks.o.encoding: expected one of json, text, got "xml"' in result.stderr.decode()
    # run refuses the same config before starting anything
    result = run_agent("run", "--config", str(bad), "--once", env={"NODE_NAME": NODE})
    assert result.returncode == 78
    assert result.stdout == b""
    assert not (cluster["root"] / "data").exists()
    # an unset variable is named
    missing_env = {k: v for k, v in os.environ.items() if k != "NODE_NAME"}
    result = subprocess.run(
        [sys.executable, "-m", "logagent", "validate", "--config", str(good)], capture_output=True, env=missing_env, cwd=REPO, timeout=60
    )
    assert result.returncode == 78
    assert "NODE_NAME" in result.stderr.decode()


def test_version() -> None:
    result = run_agent("--version")
    assert result.returncode == 0
    assert result.stdout.decode().startswith("logagent ")


def test_bundled_examples_validate() -> None:
    for example in sorted((REPO / "examples").glob("*.yaml")):
        result = run_agent("validate", "--config", str(example), env={"NODE_NAME": "node-1"})
        assert result.returncode == 0, f"{example.name}: {result.stderr.decode()}"


def test_missing_snapshot_or_kubeconfig_exits_78_before_anything_runs(tmp_path: Path) -> None:
    for kube in (f"snapshot: {tmp_path / 'nope.json'}", f"kubeconfig: {tmp_path / 'nope.kubeconfig'}"):
        config = tmp_path / "agent.yaml"
        config.write_text(
            f"data_dir: {tmp_path / 'data'}\napi: {{enabled: false}}\n"
            f"kubernetes: {{node_name: n1, {kube}}}\n"
            f"sources:\n  a: {{type: kubernetes_logs, log_dir: {tmp_path}}}\n"
            "sinks:\n  o: {type: console, inputs: [a]}\n"
        )
        result = run_agent("run", "--config", str(config), "--once")
        assert result.returncode == 78, result.stderr.decode()
        assert "nope" in result.stderr.decode()
        assert not (tmp_path / "data").exists()


def test_unreadable_tls_file_exits_78_naming_the_key(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"data_dir: {tmp_path / 'data'}\napi: {{enabled: false}}\n"
        f"kubernetes: {{node_name: n1, snapshot: {REPO / 'examples/quickstart/cluster.json'}}}\n"
        f"sources:\n  a: {{type: kubernetes_logs, log_dir: {tmp_path}}}\n"
        "sinks:\n  ship:\n    type: http\n    inputs: [a]\n    uri: https://127.0.0.1:9/ingest\n"
        f"    tls: {{ca_file: {tmp_path / 'missing-ca.pem'}}}\n"
    )
    result = run_agent("run", "--config", str(config), "--once")
    assert result.returncode == 78, result.stderr.decode()
    assert "sinks.ship.tls.ca_file: cannot load" in result.stderr.decode()
