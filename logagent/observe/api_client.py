"""Where a running agent's API is, for ``logagent tap`` and ``logagent top``.

``--url`` names it (``http://host:port`` or ``unix:///path/to/api.sock``);
``--config`` reads the agent's own config: its ``api.address`` when that is a
loopback address, else the Unix socket ``<data_dir>/api.sock`` that the agent
opens beside a network address (inside the agent's pod, through ``kubectl
exec``). Neither: ``http://127.0.0.1:8686``, the default ``api.address``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp

from logagent.observe.api_access import is_loopback_host, socket_path

DEFAULT_URL = "http://127.0.0.1:8686"


class EndpointError(Exception):
    """The API cannot be located; ``status`` is the exit status to use."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Endpoint:
    #: ``http://host:port`` (``http://localhost`` over a Unix socket)
    base: str
    socket: str | None = None

    def url(self, path: str) -> str:
        return self.base.rstrip("/") + path

    def describe(self) -> str:
        return f"unix://{self.socket}" if self.socket else self.base

    def session(self, timeout: aiohttp.ClientTimeout) -> aiohttp.ClientSession:
        connector = aiohttp.UnixConnector(path=self.socket) if self.socket else None
        return aiohttp.ClientSession(connector=connector, timeout=timeout)


def from_url(url: str) -> Endpoint:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        if not parts.path:
            raise EndpointError(f"--url {url}: expected unix:///path/to/api.sock", 2)
        return Endpoint("http://localhost", parts.path)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise EndpointError(f"--url {url}: expected http://host:port or unix:///path/to/api.sock", 2)
    return Endpoint(f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}")


def from_config(path: str) -> Endpoint:
    """The endpoint an agent running ``path`` serves (raises EndpointError, exit 78 for a bad config)."""
    from logagent.config import ConfigError, load_config
    from logagent.observe.health import parse_address

    try:
        config = load_config(path)
    except ConfigError as exc:
        raise EndpointError(f"invalid config {path}:\n  {exc}", 78) from None
    if not config.api.enabled:
        raise EndpointError(f"{path}: api.enabled is false: the agent serves no API", 78)
    host, port = parse_address(config.api.address)
    if is_loopback_host(host):
        shown = f"[{host}]" if ":" in host else host
        return Endpoint(f"http://{shown}:{port}")
    return Endpoint("http://localhost", str(socket_path(config.data_dir)))


def locate(url: str | None, config: str | None) -> Endpoint:
    if url is not None and config is not None:
        raise EndpointError("give --url or --config, not both", 2)
    if url is not None:
        return from_url(url)
    if config is not None:
        return from_config(config)
    return from_url(DEFAULT_URL)
