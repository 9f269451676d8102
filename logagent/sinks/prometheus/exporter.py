"""The ``prometheus_exporter`` sink: serves the agent's metrics on ``address`` in Prometheus' text format.

Every family of ``/metrics`` (the ``logagent_`` names) and, under the
``internal_metrics`` source's ``namespace``, Vector's names for those with an
equivalent (:mod:`logagent.observe.metrics.vector_names`). Served on any path
(as Vector does), read at each scrape. With ``auth``, a scrape without the
credentials gets 401. The exporter takes no records: its inputs are
``internal_metrics`` sources (checked in ``graph.py``), whose inbox stays
empty.
"""

from __future__ import annotations

import base64
import hmac
import ssl
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, ProcessCollector, generate_latest

from logagent.observe.health import parse_address
from logagent.observe.metrics import build_registry
from logagent.observe.metrics.vector_names import VectorNamesCollector
from logagent.queue import BatchQueue
from logagent.sinks.base import Sink
from logagent.sinks.http.tls import apply_versions
from logagent.sinks.prometheus.config import ExporterTls, PrometheusExporterConfig, ScrapeAuth

log = structlog.get_logger(__name__)


class PrometheusExporterSink(Sink):
    kind = "prometheus_exporter"

    def __init__(self, component_id: str, config: PrometheusExporterConfig, **_: Any) -> None:
        super().__init__(component_id)
        config.validate()
        self.config = config
        self.topology: Any = None
        self.scrapes = 0
        self.events_in = 0
        self.events_sent = 0
        self.bytes_sent = 0
        self._runner: web.AppRunner | None = None
        self.port: int | None = None

    def attach(self, topology: Any) -> None:
        """The topology whose metrics this exporter serves (given before ``start``)."""
        self.topology = topology

    def registry(self) -> CollectorRegistry:
        registry, collector = build_registry(self.topology)
        registry.register(VectorNamesCollector(collector, self.topology, self._namespace(), _process_start()))
        return registry

    def _namespace(self) -> str:
        sources = getattr(getattr(self.topology, "config", None), "sources", {}) or {}
        for name in self.config.inputs:
            namespace = getattr(sources.get(name), "namespace", None)
            if namespace:
                return str(namespace)
        return "vector"

    async def start(self) -> None:
        """Listen on ``address``; raises ``ValueError("address: ...")`` if it cannot."""
        if self._runner is not None:
            return
        registry = self.registry()
        auth = self.config.auth

        async def metrics(request: web.Request) -> web.Response:
            if auth is not None and not _authorized(request.headers.get("Authorization", ""), auth):
                return web.Response(status=401, headers={"WWW-Authenticate": auth.strategy.capitalize()})
            self.scrapes += 1
            body = generate_latest(registry)
            self.bytes_sent += len(body)
            return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

        app = web.Application()
        app.router.add_get("/{tail:.*}", metrics)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        host, port = parse_address(self.config.address)
        try:
            ssl_context = server_ssl_context(self.config.tls) if self.config.tls.enabled else None
        except ValueError:
            await runner.cleanup()
            raise
        # reuse_port: a reload that replaces the exporter starts the new one before the old one stops
        site = web.TCPSite(runner, host, port, ssl_context=ssl_context, reuse_port=True)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ValueError(f"address: cannot listen on {self.config.address}: {exc.strerror or exc}") from None
        self._runner = runner
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        log.info("prometheus exporter listening", component_id=self.component_id, address=self.config.address, port=self.port)

    async def run(self, inbox: BatchQueue) -> None:
        while (batch := await inbox.get()) is not None:  # internal_metrics sends none; release anything
            batch.release()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


def server_ssl_context(tls: ExporterTls) -> ssl.SSLContext:
    """The exporter's TLS: its certificate, and client certificates checked when ``ca_file`` is set."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(str(tls.crt_file), str(tls.key_file), password=tls.key_pass)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"tls.crt_file: cannot load the certificate: {getattr(exc, 'strerror', None) or exc}") from None
    if tls.ca_file is not None:
        try:
            context.load_verify_locations(cafile=tls.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"tls.ca_file: cannot load {tls.ca_file!r}: {getattr(exc, 'strerror', None) or exc}") from None
        context.verify_mode = ssl.CERT_REQUIRED if tls.verify_certificate is not False else ssl.CERT_OPTIONAL
    if tls.alpn_protocols:
        context.set_alpn_protocols(tls.alpn_protocols)
    apply_versions(context, tls.min_tls_version, tls.ciphersuites)
    return context


def _process_start() -> float | None:
    """The process's start time as the process collector reads it (None where /proc is missing)."""
    for family in ProcessCollector(registry=None).collect():
        if family.name == "process_start_time_seconds" and family.samples:
            return float(family.samples[0].value)
    return None


def _authorized(header: str, auth: ScrapeAuth) -> bool:
    if auth.strategy == "bearer":
        expected = f"Bearer {auth.token}"
    else:
        expected = "Basic " + base64.b64encode(f"{auth.user}:{auth.password}".encode()).decode()
    return hmac.compare_digest(header.encode(), expected.encode())
