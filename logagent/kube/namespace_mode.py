"""``kubernetes.namespace_metadata: auto``: count the cluster's namespaces once, pick watch or lookup.

One ``LIST /api/v1/namespaces?limit=1`` (no resourceVersion: a consistent
read, which honours ``limit``): the page's item plus its
``remainingItemCount`` is the namespace count. Up to
``namespace_watch_max`` namespaces the whole set is watched (fresh labels at
once, memory that grows with the cluster); beyond it, or when the count
cannot be read, only the namespaces of this node's pods are looked up.
"""

from __future__ import annotations

import logging
from typing import Literal

import aiohttp

from logagent.kube.client import ApiError, KubeClient
from logagent.kube.config import KubernetesConfig
from logagent.kube.decode import KubeDecodeError, decode_list_count
from logagent.kube.stats import KindStats

log = logging.getLogger(__name__)

Mode = Literal["watch", "lookup"]


class ModeChoice:
    """The mode in use and why (for the start-up log line and the metrics)."""

    __slots__ = ("mode", "reason", "count")

    def __init__(self, mode: Mode, reason: str, count: int | None = None) -> None:
        self.mode: Mode = mode
        #: configured, counted, count_unknown
        self.reason = reason
        self.count = count

    def describe(self, cfg: KubernetesConfig) -> str:
        if self.reason == "configured":
            return f"{self.mode} (configured)"
        if self.count is None:
            return f"{self.mode} (auto: the namespace count cannot be read)"
        relation = "<=" if self.mode == "watch" else ">"
        return f"{self.mode} (auto: {self.count} namespaces {relation} namespace_watch_max {cfg.namespace_watch_max})"


async def count_namespaces(client: KubeClient, stats: KindStats) -> int | None:
    """The cluster's namespace count from one limited list; None (logged) if it cannot be read."""
    stats.list_requests += 1
    try:
        response = await client.get("/api/v1/namespaces", [("limit", "1")])
    except ApiError as e:
        stats.count_request("list", f"{e.status // 100}xx")
        log.warning("cannot count namespaces: %s", e)
        return None
    except (aiohttp.ClientError, OSError, TimeoutError) as e:
        stats.count_request("list", "error")
        log.warning("cannot count namespaces: %s", e or type(e).__name__)
        return None
    stats.count_request("list", "2xx")
    try:
        async with response:
            body = await response.read()
        count = decode_list_count(body)
    except (aiohttp.ClientError, OSError, TimeoutError, KubeDecodeError) as e:
        log.warning("cannot count namespaces: %s", e or type(e).__name__)
        return None
    if count is None:
        log.warning("cannot count namespaces: the list carries no remainingItemCount")
    return count


async def choose_mode(client: KubeClient, cfg: KubernetesConfig, stats: KindStats) -> ModeChoice:
    if cfg.namespace_metadata != "auto":
        return ModeChoice(cfg.namespace_metadata, "configured")
    count = await count_namespaces(client, stats)
    if count is None:
        return ModeChoice("lookup", "count_unknown")
    return ModeChoice("watch" if count <= cfg.namespace_watch_max else "lookup", "counted", count)
