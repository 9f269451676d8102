"""ApiServerEmulator: the running aiohttp server, its switches, counters and mutation methods."""

from __future__ import annotations

import hmac
import ssl
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from .cluster import Cluster
from .control import control_routes
from .faults import Accounting, Faults, FaultRule, RequestRecord
from .http_api import KubeApi
from .responses import status_response
from .settings import Settings
from .tls import make_self_signed_cert, write_kubeconfig


class ApiServerEmulator:
    """An in-process Kubernetes apiserver for core/v1 pods, namespaces and nodes.

    Use `async with ApiServerEmulator() as emu:` or `await emu.start()` / `await emu.stop()`.
    """

    def __init__(
        self,
        *,
        token: str = "emulator-token",
        host: str = "127.0.0.1",
        port: int = 0,
        tls: bool = False,
        history_size: int = 10_000,
        bookmark_interval: float = 60.0,
        watch_list: str = "enabled",
        workdir: Path | None = None,
    ):
        self.host, self.port, self.tls = host, port, tls
        self.settings = Settings(token=token)
        self.settings.update({"bookmark_interval": bookmark_interval, "watch_list": watch_list})
        self.cluster = Cluster(history_size=history_size)
        self.faults = Faults()
        self.accounting = Accounting()
        self.api = KubeApi(self.cluster, self.settings, self.faults, self.accounting)
        self._workdir = workdir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._runner: web.AppRunner | None = None
        self.ca_cert: Path | None = None

    # -- lifecycle -------------------------------------------------------

    async def start(self) -> ApiServerEmulator:
        app = web.Application(middlewares=[self._auth_middleware], client_max_size=256 * 1024 ** 2)
        app.add_routes(self.api.routes())
        app.add_routes(control_routes(self))
        ssl_context = None
        if self.tls:
            if self._workdir is None:
                self._tmp = tempfile.TemporaryDirectory(prefix="apiserver-emulator-")
                self._workdir = Path(self._tmp.name)
            cert, key = make_self_signed_cert(self._workdir, self.host)
            self.ca_cert = cert
            ssl_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ssl_context.load_cert_chain(cert, key)
        # handler_cancellation: a client that hangs up ends its watch handler at once.
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ssl_context)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        self.drop_watches()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def __aenter__(self) -> ApiServerEmulator:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @web.middleware
    async def _auth_middleware(self, request: web.Request,
                               handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        path = request.path
        if path == "/api" or path.startswith(("/api/", "/apis")):
            auth = request.headers.get("Authorization", "")
            expected = f"Bearer {self.settings.token}"
            if not hmac.compare_digest(auth.encode(), expected.encode()):
                self.accounting.statuses[("auth", "*", 401)] += 1
                return status_response(401, "Unauthorized", "Unauthorized")
        return await handler(request)

    # -- client-side helpers -----------------------------------------------

    @property
    def token(self) -> str:
        return self.settings.token

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    def write_kubeconfig(self, path: Path | str, insecure: bool = False, namespace: str = "default") -> Path:
        return write_kubeconfig(path, self.url, self.token, self.ca_cert, insecure, namespace)

    def kube_configuration(self) -> Any:
        """A kubernetes_asyncio Configuration pointing at this emulator."""
        from kubernetes_asyncio import client

        config = client.Configuration(host=self.url, api_key={"BearerToken": self.token},
                                      api_key_prefix={"BearerToken": "Bearer"})
        if self.ca_cert is not None:
            config.ssl_ca_cert = str(self.ca_cert)
        return config

    # -- counters ------------------------------------------------------------

    @property
    def requests(self) -> Mapping[tuple[str, str], int]:
        """Requests by (verb, resource); verb is list, watch or get."""
        return self.accounting.requests

    @property
    def statuses(self) -> Mapping[tuple[str, str, int], int]:
        """Responses by (verb, resource, HTTP status)."""
        return self.accounting.statuses

    @property
    def bytes_sent(self) -> Mapping[tuple[str, str], int]:
        """Response body bytes by (verb, resource), counted as written (open watches included)."""
        return self.accounting.bytes_sent

    @property
    def open_watches(self) -> Mapping[str, int]:
        return self.accounting.open_watches

    def requests_matching(self, verb: str | None = None, resource: str | None = None) -> list[RequestRecord]:
        """The logged requests (with their query parameters) of a verb/resource, oldest first."""
        return self.accounting.requests_matching(verb, resource)

    # -- mutations (each change gets a new global resourceVersion) -----------

    def create(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        return self.cluster.create(resource, obj)

    def update(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        return self.cluster.update(resource, obj)

    def apply(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        return self.cluster.apply(resource, obj)

    def patch(self, resource: str, name: str, patch: Mapping[str, Any], namespace: str = "") -> dict[str, Any]:
        return self.cluster.patch(resource, name, patch, namespace)

    def patch_labels(self, resource: str, name: str, labels: Mapping[str, str | None],
                     namespace: str = "") -> dict[str, Any]:
        """Set labels (a None value removes the label)."""
        return self.cluster.patch(resource, name, {"metadata": {"labels": dict(labels)}}, namespace)

    def delete(self, resource: str, name: str, namespace: str = "") -> dict[str, Any]:
        return self.cluster.delete(resource, name, namespace)

    def get(self, resource: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        return self.cluster.get(resource, name, namespace)

    def seed_namespaces(self, count: int, name_format: str = "ns-{i:06d}", **kwargs: Any) -> int:
        return self.cluster.seed_namespaces(count, name_format, **kwargs)

    def compact(self) -> int:
        """Forget all history: older resourceVersions now answer 410 Gone."""
        return self.cluster.compact()

    @property
    def resource_version(self) -> int:
        return self.cluster.rv

    # -- faults --------------------------------------------------------------

    def inject_fault(self, verb: str, resource: str, status: int, count: int = 1, retry_after: int = 1,
                     message: str = "") -> FaultRule:
        """The next `count` requests matching (verb, resource) ("*" = any) answer `status` (429/500/503/...)."""
        return self.faults.inject(verb, resource, status, count, retry_after, message)

    def set_delay(self, verb: str, resource: str, seconds: float) -> None:
        self.faults.delays[(verb, resource)] = seconds

    def close_watches_after(self, resource: str, events: int | None) -> None:
        """Watches of `resource` end (cleanly) after sending this many object events; None = never."""
        if events is None:
            self.faults.close_watch_after.pop(resource, None)
        else:
            self.faults.close_watch_after[resource] = events

    def drop_watches(self, resource: str | None = None, abort: bool = False) -> int:
        """End open watches: cleanly (stream ends), or abort=True (connection reset)."""
        return self.api.drop_watches(resource, abort)
