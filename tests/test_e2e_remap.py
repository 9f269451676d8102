"""remap through the real agent process (`logagent run --once`, offline snapshot) and its config errors."""

from __future__ import annotations

from pathlib import Path

from tests.test_e2e_offline import NODE, WEB_UID, cluster, records, run_agent, write_config  # noqa: F401

LINES = [
    b'2026-12-02T10:00:00.000000001Z stdout F {"level":"error","msg":"disk full"}',
    b"2026-12-02T10:00:00.000000002Z stderr F WARN plain text",
    b"2026-12-02T10:00:00.000000003Z stdout F drop me",
]

PROGRAM = r"""
del(.kubernetes.pod_labels)
.k8s = del(.kubernetes)
if .message == "drop me" { abort }
parsed, err = parse_json(.message)
if err == null && is_object(parsed) {
  . = merge(., object!(parsed))
} else {
  .level = "warn"
}
.year = format_timestamp!(.timestamp, "%Y")
"""


def test_remap_runs_in_the_agent(cluster: dict[str, Path]) -> None:  # noqa: F811
    web_file = cluster["pods"] / f"user-bob_web-0_{WEB_UID}" / "app" / "0.log"
    web_file.write_bytes(b"\n".join(LINES) + b"\n")
    indented = "\n".join("      " + line for line in PROGRAM.strip().splitlines())
    config = write_config(
        cluster,
        f"""
sources:
  app_logs: {{type: kubernetes_logs, log_dir: {cluster['pods']}}}
transforms:
  web_only:
    type: filter
    inputs: [app_logs]
    condition: '.kubernetes.pod_name == "web-0"'
  shape:
    type: remap
    inputs: [web_only]
    reroute_dropped: true
    source: |
{indented}
sinks:
  out:
    type: console
    inputs: [shape]
  dropped:
    type: console
    inputs: [shape.dropped]
""",
    )
    result = run_agent("run", "--config", str(config), "--once", env={"NODE_NAME": NODE})
    assert result.returncode == 0, result.stderr.decode()
    got = sorted(records(result.stdout), key=lambda r: r["timestamp"])
    assert len(got) == 3
    first, second, third = got
    assert "kubernetes" not in first and first["k8s"]["pod_name"] == "web-0" and "pod_labels" not in first["k8s"]
    assert first["level"] == "error" and first["msg"] == "disk full" and first["year"] == "2026"
    assert first["timestamp"] == "2026-12-02T10:00:00.000000001Z"
    assert second["level"] == "warn" and second["message"] == "WARN plain text"
    assert third["metadata"]["dropped"]["reason"] == "abort"
    assert third["metadata"]["dropped"]["component_id"] == "shape"
    assert third["message"] == "drop me" and "kubernetes" in third


def test_a_fallible_program_exits_78_naming_the_source(cluster: dict[str, Path]) -> None:  # noqa: F811
    config = write_config(
        cluster,
        f"""
sources:
  app_logs: {{type: kubernetes_logs, log_dir: {cluster['pods']}}}
transforms:
  shape:
    type: remap
    inputs: [app_logs]
    source: |
      .a = 1
      .level = upcase(.level)
sinks:
  out: {{type: console, inputs: [shape]}}
""",
    )
    result = run_agent("validate", "--config", str(config), env={"NODE_NAME": NODE})
    assert result.returncode == 78
    err = result.stderr.decode()
    assert "transforms.shape.source: line 2, column 10: error[E103]: unhandled fallible assignment" in err
    assert ".level, err = upcase(.level)" in err


def test_a_runaway_grok_match_is_a_runtime_error_and_the_agent_goes_on(cluster: dict[str, Path]) -> None:  # noqa: F811
    runaway = "a " * 1600  # the pattern backtracks cubically here: about 20 s without the limit
    web_file = cluster["pods"] / f"user-bob_web-0_{WEB_UID}" / "app" / "0.log"
    web_file.write_bytes(
        b"2026-12-02T10:00:00.000000001Z stdout F one two three end\n"
        + b"2026-12-02T10:00:00.000000002Z stdout F " + runaway.encode() + b"\n"
        + b"2026-12-02T10:00:00.000000003Z stdout F x y z end\n"
    )
    config = write_config(
        cluster,
        f"""
sources:
  app_logs: {{type: kubernetes_logs, log_dir: {cluster['pods']}}}
transforms:
  shape:
    type: remap
    inputs: [app_logs]
    source: |
      parsed, err = parse_groks(.message, patterns: ["%{{DATA:a}} %{{DATA:b}} %{{DATA:c}} end"])
      if err == null {{ .g = parsed }} else {{ .grok_error = err }}
sinks:
  out: {{type: console, inputs: [shape]}}
""",
    )
    result = run_agent("run", "--config", str(config), "--once", env={"NODE_NAME": NODE})
    assert result.returncode == 0, result.stderr.decode()
    got = sorted((r for r in records(result.stdout) if r.get("kubernetes", {}).get("pod_name") == "web-0"),
                 key=lambda r: r["timestamp"])
    assert [r.get("g") for r in got] == [{"a": "one", "b": "two", "c": "three"}, None, {"a": "x", "b": "y", "c": "z"}]
    assert "took longer than 100 ms" in got[1]["grok_error"] and got[1]["message"] == runaway
