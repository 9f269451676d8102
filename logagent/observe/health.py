"""The API server: ``/health``, ``/ready`` and ``/metrics`` over HTTP.

It runs on the agent's event loop. That is the point of ``/health``: when it
answers, the loop is alive (a blocked loop makes the probe time out and the
kubelet restart the pod). ``/ready`` tells whether sinks are started and the
metadata stores hold their initial state. ``/metrics`` is the Prometheus text
exposition of a dedicated registry (see :mod:`logagent.observe.metrics`).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from logagent.observe.metrics import TopologyCollector, build_registry


class ApiServer:
    """A running API server; ``await stop()`` closes it."""

    def __init__(
        self, runner: web.AppRunner, host: str, port: int, registry: CollectorRegistry, collector: TopologyCollector | None
    ) -> None:
        self._runner = runner
        self.host = host
        #: the bound port (the real one when the address asked for port 0)
        self.port = port
        self.registry = registry
        self.collector = collector

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def stop(self) -> None:
        await self._runner.cleanup()


def parse_address(address: str) -> tuple[str, int]:
    """``"host:port"`` (``"[::1]:8686"`` for IPv6) -> (host, port); ValueError naming the problem."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f'expected "host:port" with a port from 0 to 65535, got "{address}"')
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def readiness(topology: Any) -> list[str]:
    """What keeps the topology from being ready (empty when it is ready)."""
    if topology.ready:
        return []
    reasons = []
    if getattr(topology, "sinks_started", True) is False:
        reasons.append("sinks are not started")
    hub = getattr(topology, "hub", None)
    if hub is not None and not hub.synced:
        reasons.append("kubernetes metadata is not synced")
    return reasons or ["not ready"]


def build_app(topology: Any, registry: CollectorRegistry) -> web.Application:
    async def health(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def ready(_: web.Request) -> web.Response:
        reasons = readiness(topology)
        if reasons:
            return web.json_response({"status": "not ready", "reasons": reasons}, status=503)
        return web.json_response({"status": "ready"})

    async def metrics(_: web.Request) -> web.Response:
        # aiohttp refuses a content type with parameters in content_type=, so set the header
        return web.Response(body=generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/ready", ready)
    app.router.add_get("/metrics", metrics)
    return app


async def start_api_server(
    topology: Any, address: str, *, registry: CollectorRegistry | None = None
) -> ApiServer:
    """Serve the topology's health, readiness and metrics on ``address``
    (``"host:port"``, port 0 picks a free one: see ``ApiServer.port``).

    Raises ValueError for a malformed address and OSError when it cannot bind.
    """
    host, port = parse_address(address)
    collector = None
    if registry is None:
        registry, collector = build_registry(topology)
    runner = web.AppRunner(build_app(topology, registry), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = runner.addresses[0][1] if runner.addresses else port
    return ApiServer(runner, host, bound, registry, collector)

