"""The topology's sink builders: one per sink kind, each importing its sink's module on first use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from logagent.config import SINK_KINDS, parse_config
from logagent.builders import SINK_BUILDERS, build_sink, sink_kind

#: modules of the HTTP-based sinks (and what only they need), which a console-only agent never uses
HTTP_SINK_MODULES = (
    "logagent.sinks.http.sink",
    "logagent.sinks.http.backend",
    "logagent.sinks.http.batching",
    "logagent.sinks.http.client",
    "httptools",
    "logagent.sinks.elasticsearch.sink",
    "logagent.sinks.elasticsearch.bulk",
    "logagent.sinks.loki.sink",
    "logagent.sinks.loki.push",
    "logagent.sinks.opentelemetry.sink",
    "logagent.sinks.opentelemetry.logs",
    "opentelemetry.proto.logs.v1.logs_pb2",
)

CONFIG = """
sinks:
  out: {type: console, inputs: [app], target: stderr}
  ship: {type: http, inputs: [app], uri: "http://127.0.0.1:9/logs"}
  es: {type: elasticsearch, inputs: [app], endpoints: ["http://127.0.0.1:9"]}
  loki: {type: loki, inputs: [app], endpoint: "http://127.0.0.1:9", labels: {job: k8s}}
  otel: {type: opentelemetry, inputs: [app], uri: "http://127.0.0.1:9/v1/logs"}
"""


def test_every_sink_kind_of_the_config_has_a_builder() -> None:
    assert set(SINK_BUILDERS) == set(SINK_KINDS)
    for kind, struct in SINK_KINDS.items():
        assert struct.__struct_config__.tag == kind


def test_each_builder_makes_the_sink_of_its_kind(tmp_path: Path) -> None:
    text = f"data_dir: {tmp_path}\nsources:\n  app: {{type: kubernetes_logs, log_dir: {tmp_path}}}\n" + CONFIG
    config = parse_config(text, {})
    for cid, sink_config in config.sinks.items():
        sink = build_sink(cid, sink_config, data_dir=str(tmp_path))
        assert sink.component_id == cid
        assert sink.kind == sink_kind(sink_config)  # type: ignore[attr-defined]


def _loaded_after(statement: str) -> set[str]:
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out))


def test_importing_the_topology_loads_no_http_sink_module() -> None:
    loaded = _loaded_after("import logagent.topology")
    assert not loaded & set(HTTP_SINK_MODULES), sorted(loaded & set(HTTP_SINK_MODULES))

