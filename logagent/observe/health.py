"""The API server: ``/health``, ``/ready``, ``/metrics`` and ``/tap`` over HTTP.

It runs on the agent's event loop. That is the point of ``/health``: when it
answers, the loop is alive (a blocked loop makes the probe time out and the
kubelet restart the pod). ``/ready`` tells whether sinks are started and the
metadata stores hold their initial state. ``/metrics`` is the Prometheus text
exposition of a dedicated registry (see :mod:`logagent.observe.metrics`).
``/tap`` streams sampled records (see :mod:`.tap_http`), only where
:mod:`.api_access` allows: on a loopback address, on the Unix socket
``<data_dir>/api.sock`` opened beside a network address, or with a bearer token.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from logagent.file_modes import FILE_MODE, private_directory
from logagent.observe.api_access import TapAccess, is_loopback_host, network_access, socket_path
from logagent.observe.metrics import TopologyCollector, build_registry
from logagent.observe.tap import TapHub
from logagent.observe.tap_http import tap_handler

log = structlog.get_logger(__name__)


class ApiServer:
    """A running API server; ``await stop()`` closes it."""

    def __init__(
        self, runner: web.AppRunner, host: str, port: int, registry: CollectorRegistry, collector: TopologyCollector | None
    ) -> None:
        self._runner = runner
        #: the Unix socket's runner and path, when one was opened
        self.socket_runner: web.AppRunner | None = None
        self.socket: str | None = None
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
        if self.socket_runner is not None:
            await self.socket_runner.cleanup()
        if self.socket is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.socket)


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


def build_app(topology: Any, registry: CollectorRegistry, tap: tuple[TapHub, TapAccess] | None = None) -> web.Application:
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
    if tap is not None:
        app.router.add_get("/tap", tap_handler(*tap))
    return app


async def start_api_server(
    topology: Any, address: str, *, registry: CollectorRegistry | None = None, tap_token_file: str | None = None,
    data_dir: str | None = None,
) -> ApiServer:
    """Serve the topology's health, readiness and metrics on ``address``
    (``"host:port"``, port 0 picks a free one: see ``ApiServer.port``), and its tap
    where :mod:`.api_access` allows (a topology without a wiring has no tap).

    With a non-loopback ``address`` and a ``data_dir``, the API is also served
    on ``<data_dir>/api.sock`` (0600), where the tap is allowed; a socket that
    cannot be opened is logged and left out. Raises ValueError for a malformed
    address and OSError when it cannot bind the address.
    """
    host, port = parse_address(address)
    collector = None
    if registry is None:
        registry, collector = build_registry(topology)
    hub = TapHub(topology) if hasattr(topology, "wiring") else None
    socket = None
    if hub is not None and data_dir is not None and not is_loopback_host(host):
        socket = str(socket_path(data_dir))
    tap = (hub, network_access(host, tap_token_file, socket)) if hub is not None else None
    runner = web.AppRunner(build_app(topology, registry, tap), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = runner.addresses[0][1] if runner.addresses else port
    server = ApiServer(runner, host, bound, registry, collector)
    if socket is not None and hub is not None:
        server.socket_runner = await _start_socket(build_app(topology, registry, (hub, TapAccess(open=True))), socket)
        server.socket = socket if server.socket_runner is not None else None
    return server


async def _start_socket(app: web.Application, path: str) -> web.AppRunner | None:
    """Serve ``app`` on the Unix socket ``path`` (0600 in a 0700 directory); None (logged) if it cannot."""
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        private_directory(os.path.dirname(path))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # left by an earlier run
        await web.UnixSite(runner, path).start()
        os.chmod(path, FILE_MODE)
    except OSError as exc:
        await runner.cleanup()
        log.warning("cannot open the API's Unix socket; the tap is not served", path=path, error=str(exc))
        return None
    return runner
