"""Vector's internal_metrics + prometheus_exporter pair: the agent's metrics served on the exporter's address."""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from logagent.config import ConfigError, parse_config
from logagent.graph import check_graph
from tests.agent_process import AgentProcess, offline_config, read_complete_lines
from tests.logwriter import format_line, pod_dir_name
from tests.test_sink_http import pki  # noqa: F401 - the fixture

#: the Vector Helm chart's default agent pair, with a port of the test's choosing and a token
EXPORTER = ("  internal_metrics: {type: internal_metrics}\n", "  prom_exporter:\n    type: prometheus_exporter\n"
            "    inputs: [internal_metrics]\n    address: 127.0.0.1:0\n    auth: {strategy: bearer, token: s3cret}\n")


def scrape(port: int, token: str | None) -> tuple[int, str]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def test_exporter_serves_vector_names_beside_ours(tmp_path: Path) -> None:
    log_dir = tmp_path / "pods"
    directory = log_dir / pod_dir_name("shop", "web", "uid-web") / "app"
    directory.mkdir(parents=True)
    (directory / "0.log").write_bytes(b"".join(format_line("shop/web", i, 50) for i in range(10)))
    out = tmp_path / "out.ndjson"
    sink = f"  out: {{type: console, inputs: [pods]}}\n{EXPORTER[1]}"
    config = offline_config(tmp_path, log_dir, sink=sink)
    text = config.read_text().replace("sinks:\n", EXPORTER[0] + "sinks:\n")
    config.write_text(text)
    with open(out, "wb") as stdout:
        agent = AgentProcess(config, stdout)
        try:
            agent.wait_for_log("prometheus exporter listening")
            port = next(e["port"] for e in agent.log_events() if e.get("event") == "prometheus exporter listening")
            deadline = time.monotonic() + 60
            while len(read_complete_lines(out)) < 10 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert scrape(port, None)[0] == 401 and scrape(port, "wrong")[0] == 401
            status, body = scrape(port, "s3cret")
        finally:
            agent.stop()
    assert status == 200
    lines = body.splitlines()
    assert ('vector_component_sent_events_total{component_id="out",component_kind="sink",component_type="console"} 10.0'
            in lines)
    assert any(line.startswith('vector_component_received_events_total{component_id="pods",component_kind="source",'
                               'component_type="kubernetes_logs"} 10.0') for line in lines)
    assert 'logagent_component_sent_events_total{component_id="out",component_kind="console"} 10.0' in lines
    assert any(line.startswith("vector_buffer_events{") for line in lines)
    assert 0 <= float(next(line for line in lines if line.startswith("vector_uptime_seconds ")).split()[1]) < 600


@pytest.mark.parametrize("sinks, message", [
    ("  out: {type: console, inputs: [m]}\n", 'sinks.out.inputs[0]: "m" is an internal_metrics source'),
    ("  p: {type: prometheus_exporter, inputs: [k]}\n", 'sinks.p.inputs[0]: "k" gives log records'),
])
def test_metrics_and_records_do_not_mix(sinks: str, message: str) -> None:
    config = parse_config("sources: {k: {type: kubernetes_logs}, m: {type: internal_metrics}}\nsinks:\n" + sinks, {})
    with pytest.raises(ConfigError) as caught:
        check_graph(config)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("text, message", [
    ("{type: prometheus_exporter, inputs: [m], buckets: [1.0]}", "sinks.p.buckets: not implemented"),
    ("{type: prometheus_exporter, inputs: [m], tls: {enabled: true}}", "sinks.p.tls.crt_file: a TLS exporter needs"),
    ("{type: prometheus_exporter, inputs: [m], address: nowhere}", 'sinks.p.address: expected "host:port"'),
])
def test_exporter_keys_that_cannot_be_honoured(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config("sources: {m: {type: internal_metrics}}\nsinks:\n  p: " + text + "\n", {})
    assert str(caught.value).startswith(message), str(caught.value)


async def test_exporter_over_tls_with_a_minimum_version(pki) -> None:
    """OpenShift's logging operator serves the exporter over TLS (crt_file, key_file, min_tls_version)."""
    import asyncio
    import ssl
    from types import SimpleNamespace

    from logagent.sinks.prometheus.exporter import PrometheusExporterSink

    config = parse_config(
        "sources: {m: {type: internal_metrics}}\nsinks:\n  p: {type: prometheus_exporter, inputs: [m], "
        f"address: '127.0.0.1:0', tls: {{enabled: true, crt_file: '{pki / 'server.pem'}', key_file: '{pki / 'server.key'}', "
        "min_tls_version: VersionTLS13}}\n", {})
    sink = PrometheusExporterSink("p", config.sinks["p"])
    sink.attach(SimpleNamespace(config=config, sources={}, transforms={}, sinks={"p": sink}, inboxes={}))
    await sink.start()
    try:
        client = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        reader, writer = await asyncio.open_connection("127.0.0.1", sink.port, ssl=client)
        assert writer.get_extra_info("ssl_object").version() == "TLSv1.3"
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = await reader.read()
        writer.close()
        assert answer.startswith(b"HTTP/1.1 200") and b"vector_build_info" in answer
        old = ssl.create_default_context(cafile=str(pki / "ca.pem"))
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises(OSError):  # ssl.SSLError or a reset: the handshake is refused
            await asyncio.open_connection("127.0.0.1", sink.port, ssl=old)
    finally:
        await sink.stop()


async def test_a_replacing_exporter_can_start_before_the_old_one_stops() -> None:
    """A reload starts the new sinks first: the same address must be free to take twice for a moment."""
    import socket
    from types import SimpleNamespace

    from logagent.sinks.prometheus.exporter import PrometheusExporterSink

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = parse_config("sources: {m: {type: internal_metrics}}\nsinks:\n  p: {type: prometheus_exporter, "
                          f"inputs: [m], address: '127.0.0.1:{port}'}}\n", {})
    topology = SimpleNamespace(config=config, sources={}, transforms={}, sinks={}, inboxes={})
    old, new = PrometheusExporterSink("p", config.sinks["p"]), PrometheusExporterSink("p", config.sinks["p"])
    for sink in (old, new):
        sink.attach(topology)
        await sink.start()
    await old.stop()
    try:
        status, body = await asyncio.to_thread(scrape, port, None)
        assert status == 200 and "vector_build_info" in body and new.scrapes == 1
    finally:
        await new.stop()
