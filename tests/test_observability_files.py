"""daemonset/observability/: the Grafana dashboard and the alert rules, against a running agent's /metrics."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from prometheus_client.parser import text_string_to_metric_families

from receivers.ndjson import Receiver
from tests.agent_process import REPO, AgentProcess, offline_config
from tests.logwriter import LogWriter
from tests.test_tap import api_url

OBSERVABILITY = REPO / "daemonset" / "observability"
DASHBOARD = OBSERVABILITY / "dashboard.json"
ALERTS = OBSERVABILITY / "alerts.yaml"
SCHEMA = REPO / "tests" / "fixtures" / "grafana_dashboard.schema.json"
#: names Prometheus itself provides, not the agent
PROMETHEUS_OWN = {"up"}
METRIC_NAME = re.compile(r"\b(logagent_[a-z0-9_]+|up)\b")

RULES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["groups"],
    "properties": {"groups": {"type": "array", "minItems": 1, "items": {
        "type": "object",
        "required": ["name", "rules"],
        "additionalProperties": False,
        "properties": {"name": {"type": "string"}, "interval": {"type": "string"}, "rules": {"type": "array", "items": {
            "type": "object",
            "required": ["alert", "expr", "labels", "annotations"],
            "additionalProperties": False,
            "properties": {
                "alert": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                "expr": {"type": "string", "minLength": 1},
                "for": {"type": "string", "pattern": "^[0-9]+[smhd]$"},
                "labels": {"type": "object", "required": ["severity"], "properties": {"severity": {"enum": ["warning", "critical"]}}},
                "annotations": {"type": "object", "required": ["summary", "description"]},
            },
        }}},
    }}},
}


def dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def alert_rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(ALERTS.read_text(encoding="utf-8"))
    jsonschema.validate(document, RULES_SCHEMA)
    return [rule for group in document["groups"] for rule in group["rules"]]


def expressions() -> list[str]:
    exprs = [target["expr"] for panel in dashboard()["panels"] for target in panel.get("targets", ())]
    return exprs + [rule["expr"] for rule in alert_rules()]


def test_the_dashboard_passes_the_schema_and_its_panels_do_not_overlap() -> None:
    board = dashboard()
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA.read_text()))
    jsonschema.validate(board, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    taken: set[tuple[int, int]] = set()
    for panel in board["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        cells = {(x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])}
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells
    variables = {v["name"] for v in board["templating"]["list"]}
    for expr in expressions()[: sum(len(p.get("targets", ())) for p in board["panels"])]:
        assert set(re.findall(r"\$(\w+)", expr)) - {"__rate_interval"} <= variables, expr


def test_the_alerts_cover_what_operators_need() -> None:
    names = {rule["alert"] for rule in alert_rules()}
    assert names >= {"LogagentDown", "LogagentNotReady", "LogagentFallingBehind", "LogagentUndeliveredRecords",
                     "LogagentDeadLettered", "LogagentSinkErrors", "LogagentDeletedFilesHeldOpen", "LogagentWatchStale"}
    falling = next(rule for rule in alert_rules() if rule["alert"] == "LogagentFallingBehind")
    assert falling["for"] == "10m" and "[10m]" in falling["expr"]
    undelivered = next(rule for rule in alert_rules() if rule["alert"] == "LogagentUndeliveredRecords")
    assert "> 300" in undelivered["expr"]


def exposed_names(exposition: str) -> set[str]:
    """Every name a query may use: samples, and each family's names by its type (counters' _total...)."""
    names: set[str] = set()
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}
    for family in text_string_to_metric_families(exposition):
        names.add(family.name)
        names.update(family.name + suffix for suffix in suffixes.get(family.type, ()))
        names.update(sample.name for sample in family.samples)
    return names


async def test_every_metric_they_name_is_in_the_metrics_of_a_running_agent(tmp_path: Path) -> None:
    receiver = Receiver()
    await receiver.start()
    pods = tmp_path / "pods"
    pods.mkdir()
    sinks = ("  out: {type: console, inputs: [pods]}\n"
             f"  ship: {{type: http, inputs: [pods], uri: 'http://127.0.0.1:{receiver.port}/ingest', "
             "batch: {timeout_secs: 0.1}}\n")
    config = offline_config(tmp_path, pods, sink=sinks)
    config.write_text(config.read_text().replace("api: {enabled: false}", 'api: {enabled: true, address: "127.0.0.1:0"}'))
    agent = AgentProcess(config, subprocess.DEVNULL)
    writer = LogWriter(pods, "default", "web-0", "uid-1")
    try:
        url = await asyncio.to_thread(api_url, agent)
        writer.write(50)
        deadline = time.monotonic() + 60
        while receiver.accepted_records < 50 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert receiver.accepted_records >= 50
        exposition = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{url}/metrics", timeout=10).read().decode())
    finally:
        agent.stop()
        writer.close()
        await receiver.stop()
    exposed = exposed_names(exposition)
    named = {name for expr in expressions() for name in METRIC_NAME.findall(expr)} - PROMETHEUS_OWN
    assert len(named) >= 20
    assert sorted(named - exposed) == []
    # the latency histogram was observed for both sinks
    assert 'logagent_delivery_latency_seconds_count{component_id="ship",component_kind="http"} 50.0' in exposition
