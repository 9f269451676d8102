"""Raw-bytes access to the Kubernetes API through kubernetes-asyncio.

kubernetes-asyncio supplies the configuration (kubeconfig with its auth
plugins, or in-cluster service account) and the ``ApiClient`` that performs
requests (TLS, proxy, bearer token). Every request is made with
``_preload_content=False``: the caller gets the aiohttp response and decodes
its bytes itself (see :mod:`logagent.kube.decode`); no kubernetes-asyncio model
object is ever built, and the model classes are not even imported (see
:mod:`logagent.kube.k8s_import`).

Token rotation: in-cluster, kubernetes-asyncio installs a
``refresh_api_key_hook`` that re-reads the bound service-account token file
once a minute; the hook runs on every request (``auth_settings``), so the
rotated token is used without a restart. Kubeconfig exec/OIDC plugins refresh
through the same hook.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import aiohttp

from logagent import __version__
from logagent.kube.config import KubernetesConfig
from logagent.kube.decode import ApiStatus, decode_status
from logagent.kube.k8s_import import import_kubernetes_asyncio

#: the most of an error body we read, to find its Status
_ERROR_BODY_LIMIT = 64 * 1024


class KubeConfigError(Exception):
    """No usable API configuration (kubeconfig or in-cluster)."""


class ApiError(Exception):
    """A non-2xx answer from the API server."""

    def __init__(self, status: int, reason: str, message: str, retry_after: float | None = None):
        super().__init__(f"HTTP {status} {reason}: {message}" if message else f"HTTP {status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after


def _kubeconfig_path(cfg: KubernetesConfig) -> str | None:
    if cfg.kubeconfig:
        return cfg.kubeconfig
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return None  # in-cluster
    env = os.environ.get("KUBECONFIG")
    if env:
        return env  # kubernetes-asyncio merges a ':'-separated list
    return str(Path.home() / ".kube" / "config")


async def load_configuration(cfg: KubernetesConfig) -> Any:
    """Build a kubernetes-asyncio ``Configuration``; raises :class:`KubeConfigError`."""
    k8s_config, Configuration, _ = import_kubernetes_asyncio()
    configuration = Configuration()
    path = _kubeconfig_path(cfg)
    try:
        if path is None:
            k8s_config.load_incluster_config(client_configuration=configuration)
        else:
            first = path.split(os.pathsep)[0]
            if not Path(first).expanduser().is_file():
                raise KubeConfigError(
                    f"kubernetes: kubeconfig {first} does not exist; set `kubernetes.kubeconfig`, "
                    "$KUBECONFIG, run in a cluster, or use `kubernetes.snapshot`"
                )
            await k8s_config.load_kube_config(
                config_file=path, client_configuration=configuration, persist_config=False
            )
    except KubeConfigError:
        raise
    except Exception as e:  # ConfigException, YAML errors, bad certificates...
        where = "in-cluster service account" if path is None else f"kubeconfig {path}"
        raise KubeConfigError(f"kubernetes: cannot load the {where}: {e}") from None
    return configuration


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare from the apiserver; fall back to backoff


class KubeClient:
    """GET requests that hand back raw aiohttp responses."""

    def __init__(self, configuration: Any, request_timeout: float = 30.0) -> None:
        _, _, ApiClient = import_kubernetes_asyncio()
        self._api = ApiClient(configuration)
        self._api.user_agent = f"logagent/{__version__}"
        self.request_timeout = request_timeout

    @classmethod
    async def from_config(cls, cfg: KubernetesConfig) -> KubeClient:
        return cls(await load_configuration(cfg), cfg.request_timeout_secs)

    async def get(
        self,
        path: str,
        params: list[tuple[str, str]],
        *,
        read_timeout: float | None = None,
    ) -> aiohttp.ClientResponse:
        """Start a GET; returns the open response (status 2xx) for the caller to read
        and close, or raises :class:`ApiError` (non-2xx) / ``aiohttp.ClientError``."""
        timeout = aiohttp.ClientTimeout(
            connect=self.request_timeout,
            sock_connect=self.request_timeout,
            sock_read=read_timeout if read_timeout is not None else self.request_timeout,
        )
        response: aiohttp.ClientResponse = await self._api.call_api(
            path,
            "GET",
            query_params=params,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _request_timeout=timeout,
        )
        if 200 <= response.status < 300:
            return response
        try:
            body = await response.content.read(_ERROR_BODY_LIMIT)
        except (aiohttp.ClientError, TimeoutError):
            body = b""
        finally:
            response.release()
        status = decode_status(body) or ApiStatus()
        raise ApiError(
            response.status,
            status.reason or (response.reason or ""),
            status.message,
            _retry_after(response.headers),
        )

    async def close(self) -> None:
        await self._api.close()
