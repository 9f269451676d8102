"""Vector's sink healthchecks: one check of each sink's destination at start-up, before any source reads.

What each sink checks (Vector's checks): ``elasticsearch`` ``GET <endpoint>/_cluster/health``,
``loki`` ``GET <endpoint>/ready``, ``http`` and ``opentelemetry`` ``GET healthcheck.uri``
(no check without one); ``healthcheck.uri`` replaces the sink's own URL for any
HTTP-based sink. A 2xx answer is healthy. The console and the metrics exporter
are always healthy. A failed check is logged; with the global
``healthchecks.require_healthy`` it stops the start (:class:`Unhealthy`).
``healthchecks.enabled: false`` or a sink's ``healthcheck.enabled: false``
skips the checks.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

log = structlog.get_logger(__name__)


class Unhealthy(Exception):
    """Sinks failed their healthcheck while ``healthchecks.require_healthy`` is set."""


def check_uri(config: Any) -> str | None:
    """The URL a sink's healthcheck GETs, or None for no check."""
    check = getattr(config, "healthcheck_config", None)
    if check is None or not check.enabled:
        return None
    if check.uri is not None:
        return str(check.uri)
    kind = type(config).__struct_config__.tag
    if kind == "elasticsearch":
        return f"{config.endpoints[0].rstrip('/')}/_cluster/health"
    if kind == "loki":
        return f"{config.endpoint.rstrip('/')}/ready"
    return None


async def check_sink(sink: Any, config: Any) -> str | None:
    """None if the sink is healthy (or has no check), else why not."""
    uri = check_uri(config)
    if uri is None:
        return None
    try:
        answer = await sink.probe(uri, config.healthcheck_config.timeout)
    except TimeoutError:
        return f"GET {uri}: no answer within {config.healthcheck_config.timeout:g} s"
    except Exception as exc:  # any way of getting no answer (refused, reset, malformed, no credentials) is unhealthy
        return f"GET {uri}: {exc or type(exc).__name__}"
    if 200 <= answer.status <= 299:
        return None
    return f"GET {uri}: answered {answer.status}"


async def run_healthchecks(sinks: dict[str, Any], configs: dict[str, Any], require_healthy: bool) -> None:
    """Check every sink at once; log each failure; raise :class:`Unhealthy` naming them if required."""
    ids = [cid for cid in sinks if check_uri(configs[cid]) is not None]
    results = await asyncio.gather(*(check_sink(sinks[cid], configs[cid]) for cid in ids))
    failed = {cid: reason for cid, reason in zip(ids, results) if reason is not None}
    for cid, reason in failed.items():
        log.error("healthcheck failed", component_id=cid, reason=reason, require_healthy=require_healthy)
    for cid in ids:
        if cid not in failed:
            log.info("healthcheck passed", component_id=cid)
    if failed and require_healthy:
        named = "; ".join(f"sinks.{cid}: {reason}" for cid, reason in failed.items())
        raise Unhealthy(f"healthchecks failed and healthchecks.require_healthy is set: {named}")
