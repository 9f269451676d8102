"""The HTTP-based sinks' 413 splits and dead-lettered records, read through /metrics.

A real topology (files, snapshot metadata) ships to a real receiver that
answers 413 to bodies over a size and 400 to bodies holding a marker; the
same records go to an ``http`` and an ``elasticsearch`` sink. The scraped
figures are checked against what the receiver answered and what the
dead-letter files hold, not only against the sinks' own attributes.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from logagent.config import parse_config
from logagent.observe.health import start_api_server
from logagent.observe.metrics import build_registry
from logagent.sinks.http.dead_letter import dead_letter_path
from logagent.topology import Topology
from receivers.backends import BackendReceiver
from receivers.ndjson import Receiver

NODE = "node-a"
UID = "11111111-2222-4333-8444-555555555555"
TIMEOUT = 60
#: answered 413 above this many (decompressed) body bytes
MAX_BODY = 2500
LINES = 40
#: this line is too large for any body: one record answered 413 alone
BIG_LINE = 7
#: the body holding this line is answered 400
MARKED_LINE = 23
MARKER = "reject-me"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _message(n: int) -> str:
    if n == BIG_LINE:
        return "big " + "x" * 3000
    return f"line {n:02d} " + (MARKER if n == MARKED_LINE else "") + "." * 60


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    log = tmp_path / "pods" / f"shop_web-0_{UID}" / "app" / "0.log"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"2026-12-02T10:00:00.{n:09d}Z stdout F {_message(n)}\n" for n in range(LINES)))
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "shop", "uid": UID, "resourceVersion": "1"},
        "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "example/app:1"}]},
    }
    (tmp_path / "cluster.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [pod]}))
    return tmp_path


def _topology(root: Path, http_url: str, es_url: str) -> Topology:
    common = "batch: {max_events: 50, timeout_secs: 0.05}, request: {concurrency: 1}, " \
             "retry: {initial_backoff_secs: 0.01, max_backoff_secs: 0.05}"
    text = f"""
data_dir: {root / 'data'}
api: {{enabled: false}}
kubernetes: {{node_name: {NODE}, snapshot: {root / 'cluster.json'}}}
sources:
  app: {{type: kubernetes_logs, log_dir: {root / 'pods'}}}
sinks:
  ship: {{type: http, inputs: [app], uri: "{http_url}", {common}}}
  es: {{type: elasticsearch, inputs: [app], endpoints: ["{es_url}"], {common}}}
"""
    return Topology(parse_config(text, {}))


async def _scrape(url: str) -> Samples:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT)) as http:
        async with http.get(f"{url}/metrics") as response:
            assert response.status == 200
            text = await response.text()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _dead_letter_reasons(root: Path, sink: str) -> Counter[str]:
    path = dead_letter_path(root / "data", sink)
    return Counter(json.loads(line)["reason"] for line in path.read_bytes().splitlines())


async def test_splits_and_dead_lettered_records_of_http_based_sinks(cluster: Path) -> None:
    receivers = {"ship": Receiver(), "es": BackendReceiver(kind="elasticsearch")}
    for receiver in receivers.values():
        receiver.limit_body(MAX_BODY)
        receiver.reject_containing(MARKER.encode(), 400)
        await receiver.start()
    topology = _topology(cluster, receivers["ship"].url, receivers["es"].url.rsplit("/", 1)[0])
    server = await start_api_server(topology, "127.0.0.1:0")
    try:
        async with asyncio.timeout(TIMEOUT):
            await topology.run(once=True)
        samples = await _scrape(server.url)
    finally:
        await server.stop()
        for receiver in receivers.values():
            await receiver.stop()

    for cid, kind in (("ship", "http"), ("es", "elasticsearch")):
        labels = (("component_id", cid), ("component_kind", kind))
        receiver = receivers[cid]
        reasons = _dead_letter_reasons(cluster, cid)
        # the big record alone, answered 413; the records sent with the marker, answered 400
        assert reasons["http_413"] == 1 and reasons["http_400"] >= 1, reasons
        assert set(reasons) == {"http_413", "http_400"}
        for reason, count in reasons.items():
            assert samples[("logagent_sink_dead_lettered_events_total", (*labels, ("reason", reason)))] == count
        assert receiver.accepted_records + sum(reasons.values()) == LINES  # nothing lost, nothing twice
        # every 413 either split a request in two or gave up on a single record
        answered_413 = sum(1 for entry in receiver.received if entry.status == 413)
        splits = samples[("logagent_sink_request_splits_total", labels)]
        assert splits == answered_413 - reasons["http_413"] and splits >= 1
        assert splits == topology.sinks[cid].splits  # type: ignore[attr-defined]


def test_every_http_based_sink_exports_the_counters(tmp_path: Path) -> None:
    text = f"""
data_dir: {tmp_path}
kubernetes: {{node_name: {NODE}, snapshot: {tmp_path / 'cluster.json'}}}
sources:
  app: {{type: kubernetes_logs, log_dir: {tmp_path / 'pods'}}}
sinks:
  ship: {{type: http, inputs: [app], uri: "http://127.0.0.1:9/logs"}}
  es: {{type: elasticsearch, inputs: [app], endpoints: ["http://127.0.0.1:9"]}}
  loki: {{type: loki, inputs: [app], endpoint: "http://127.0.0.1:9", labels: {{job: k8s}}}}
  otel: {{type: opentelemetry, inputs: [app], uri: "http://127.0.0.1:9/v1/logs"}}
  out: {{type: console, inputs: [app]}}
"""
    topology = Topology(parse_config(text, {}))  # built, never run: every counter is zero
    topology.sinks["loki"].dead_lettered_events["http_400"] = 2  # type: ignore[attr-defined]
    topology.sinks["es"].dead_letter.records_discarded = 5  # type: ignore[attr-defined]
    registry, collector = build_registry(topology, process_metrics=False)
    assert not collector.missing_attributes
    for cid, kind in (("ship", "http"), ("es", "elasticsearch"), ("loki", "loki"), ("otel", "opentelemetry")):
        labels = {"component_id": cid, "component_kind": kind}
        assert registry.get_sample_value("logagent_sink_request_splits_total", labels) == 0
        discarded = registry.get_sample_value("logagent_sink_dead_letter_discarded_events_total", labels)
        assert discarded == (5 if cid == "es" else 0)
    loki_400 = {"component_id": "loki", "component_kind": "loki", "reason": "http_400"}
    assert registry.get_sample_value("logagent_sink_dead_lettered_events_total", loki_400) == 2
    # a console sink sends no requests: none of the request metrics
    exposition = generate_latest(registry).decode()
    assert not [line for line in exposition.splitlines() if "sink_request" in line and 'component_id="out"' in line]
