"""parse_json through the real agent process (`logagent run --once`, offline snapshot) and its config errors."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_e2e_offline import NODE, WEB_UID, cluster, records, run_agent, write_config  # noqa: F401

LINES = [
    b'2026-12-02T10:00:00.000000001Z stdout F {"level":"error","message":"disk full","code":28}',
    b'2026-12-02T10:00:00.000000002Z stdout F {"level":"info","message":"ok"}',
    b"2026-12-02T10:00:00.000000003Z stderr F not json at all",
    b'2026-12-02T10:00:00.000000004Z stdout F ["level","error"]',
    b'2026-12-02T10:00:00.000000005Z stderr P {"level":"error", ',
    b'2026-12-02T10:00:00.000000006Z stderr F "msg":"split","file":"/etc/passwd","kubernetes":{"pod_name":"x"}}',
]


def test_parsed_fields_reach_conditions_and_the_output(cluster: dict[str, Path]) -> None:  # noqa: F811
    web_file = cluster["pods"] / f"user-bob_web-0_{WEB_UID}" / "app" / "0.log"
    web_file.write_bytes(b"\n".join(LINES) + b"\n")
    config = write_config(
        cluster,
        f"""
sources:
  app_logs: {{type: kubernetes_logs, log_dir: {cluster['pods']}}}
transforms:
  web_only:
    type: filter
    inputs: [app_logs]
    condition: '.kubernetes.pod_name == "web-0" && .level == null'
  merged:
    type: parse_json
    inputs: [web_only]
    target: .
    drop_field: true
  merged_errors:
    type: filter
    inputs: [merged]
    condition: '.level == "error"'
  nested:
    type: parse_json
    inputs: [web_only]
    target: .parsed
  by_level:
    type: route
    inputs: [nested]
    route:
      error: '.parsed.level == "error"'
sinks:
  out:
    type: console
    inputs: [merged_errors, by_level.error, by_level._unmatched]
""",
    )
    result = run_agent("run", "--config", str(config), "--once", env={"NODE_NAME": NODE})
    assert result.returncode == 0, result.stderr.decode()
    got = records(result.stdout)
    assert all(r["file"] == str(web_file) and r["kubernetes"]["pod_name"] == "web-0" for r in got)
    strip = [{k: v for k, v in r.items() if k not in ("file", "kubernetes", "source_type")} for r in got]
    merged = [r for r in strip if "level" in r]
    nested = [r for r in strip if "level" not in r]
    assert merged == [
        {"message": "disk full", "stream": "stdout", "timestamp": "2026-12-02T10:00:00.000000001Z",
         "level": "error", "code": 28},
        # the partial line merged first; no inner "message", so the record has none; file and kubernetes kept
        {"stream": "stderr", "timestamp": "2026-12-02T10:00:00.000000005Z", "level": "error", "msg": "split"},
    ]
    partial = '{"level":"error", "msg":"split","file":"/etc/passwd","kubernetes":{"pod_name":"x"}}'
    assert sorted(nested, key=lambda r: r["timestamp"]) == [
        {"message": LINES[0].split(b" F ", 1)[1].decode(), "stream": "stdout",
         "timestamp": "2026-12-02T10:00:00.000000001Z", "parsed": {"level": "error", "message": "disk full", "code": 28}},
        {"message": '{"level":"info","message":"ok"}', "stream": "stdout",
         "timestamp": "2026-12-02T10:00:00.000000002Z", "parsed": {"level": "info", "message": "ok"}},
        {"message": "not json at all", "stream": "stderr", "timestamp": "2026-12-02T10:00:00.000000003Z"},
        {"message": '["level","error"]', "stream": "stdout", "timestamp": "2026-12-02T10:00:00.000000004Z"},
        {"message": partial, "stream": "stderr", "timestamp": "2026-12-02T10:00:00.000000005Z",
         "parsed": json.loads(partial)},
    ]


def test_bad_target_exits_78_naming_the_key(cluster: dict[str, Path]) -> None:  # noqa: F811
    config = write_config(
        cluster,
        f"""
sources:
  a: {{type: kubernetes_logs, log_dir: {cluster['pods']}}}
transforms:
  parse: {{type: parse_json, inputs: [a], target: .parsed..level}}
sinks:
  o: {{type: console, inputs: [parse]}}
""",
    )
    for args in (("validate",), ("run", "--once")):
        result = run_agent(*args[:1], "--config", str(config), *args[1:], env={"NODE_NAME": NODE})
        assert result.returncode == 78, result.stderr.decode()
        stderr = result.stderr.decode()
        message = json.loads(stderr)["error"] if stderr.startswith("{") else stderr  # run logs JSON
        assert 'transforms.parse.target: expected a field path such as ".message" or ".parsed.payload", ' \
               'got ".parsed..level"' in message
        assert result.stdout == b""
    assert not (cluster["root"] / "data").exists()
