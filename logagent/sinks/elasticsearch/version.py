"""``api_version: auto``: the cluster's major version, read once at start from ``GET /`` as Vector does."""

from __future__ import annotations

from typing import Any

import msgspec
import structlog

from logagent.sinks.http.auth import CredentialsUnavailable
from logagent.sinks.http.client import MalformedAnswer

log = structlog.get_logger(__name__)


class _Version(msgspec.Struct):
    number: str


class _Root(msgspec.Struct):
    version: _Version


async def cluster_major_version(sink: Any, endpoint: str, suppress_type_name: bool, timeout_secs: float) -> int:
    """The major version ``endpoint`` reports; when it cannot be read, Vector's guess (6 with
    ``suppress_type_name``, else 8), with a warning."""
    try:
        answer = await sink.probe(endpoint.rstrip("/") + "/", timeout_secs)
        if answer.status != 200:
            raise ValueError(f"answered {answer.status}")
        return int(msgspec.json.decode(answer.body, type=_Root).version.number.split(".")[0])
    except (OSError, TimeoutError, MalformedAnswer, CredentialsUnavailable, ValueError, msgspec.DecodeError) as exc:
        assumed = 6 if suppress_type_name else 8
        log.warning("cannot read the Elasticsearch version; set api_version to choose it",
                    component_id=sink.component_id, assumed_version=assumed, error=str(exc) or type(exc).__name__)
        return assumed
