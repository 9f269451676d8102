"""The ``elasticsearch`` sink: the ``_bulk`` API of Elasticsearch and OpenSearch.

The options (Vector's) are in :mod:`logagent.sinks.elasticsearch.config`.
Per-item results are read by :class:`~logagent.sinks.elasticsearch.bulk.BulkProtocol`.
With several ``endpoints``, each request goes to the one an
:class:`~logagent.sinks.elasticsearch.endpoints.EndpointPool` chooses.
"""

from __future__ import annotations

import os

import structlog

from logagent.sinks.http.backend import BackendSink
from logagent.sinks.http.compression import BodyBuilder, StreamedBody
from logagent.sinks.http.dead_letter import DeadLetterFile
from logagent.sinks.elasticsearch.bulk import BulkProtocol
from logagent.sinks.elasticsearch.config import Action, BulkConfig, DataStreamNames, ElasticsearchSinkConfig
from logagent.sinks.elasticsearch.endpoints import EndpointPool
from logagent.sinks.http.config import HttpSinkConfig, redact_uri
from logagent.sinks.http.delivery import Delivery, Rejected, RetryLater
from logagent.sinks.http.protocol import Outcome
from logagent.sinks.elasticsearch.version import cluster_major_version
from logagent.sinks.shaping import shaper_for

__all__ = ["Action", "BulkConfig", "DataStreamNames", "ElasticsearchSink", "ElasticsearchSinkConfig"]


class ElasticsearchSink(BackendSink):
    kind = "elasticsearch"

    def __init__(self, component_id: str, config: ElasticsearchSinkConfig, *, data_dir: str | os.PathLike[str] | None = None) -> None:
        config.validate()
        self.backend_config = config
        action: Action = "create" if config.mode == "data_stream" else config.bulk.action
        id_path = config.id_path()
        shaper = shaper_for(config.encoding, remove=[id_path] if id_path else ())
        protocol = BulkProtocol(config.index_template(), action, data_stream=config.mode == "data_stream",
                                id_key=id_path, shaper=shaper)
        if config.api_version != "auto":
            protocol.set_doc_type(config.doc_type_for(int(config.api_version[1:])))
        distribution = config.distribution
        self.endpoints = EndpointPool(
            [redact_uri(uri) for uri in config.uris],
            distribution.retry_initial_backoff_secs,
            distribution.retry_max_duration_secs,
        )
        super().__init__(component_id, config.http_config(config.uri), protocol, data_dir=data_dir)

    async def start(self) -> None:
        await super().start()
        if self.backend_config.api_version == "auto":
            config = self.backend_config
            major = await cluster_major_version(self, config.endpoints[0], config.suppress_type_name,
                                                config.healthcheck_config.timeout)
            self.protocol.set_doc_type(self.backend_config.doc_type_for(major))  # type: ignore[attr-defined]

    def _new_delivery(self, config: HttpSinkConfig, log: structlog.typing.FilteringBoundLogger) -> Delivery:
        return BulkDelivery(config, self.protocol, self._bodies, self.dead_letter, log,
                            self.backend_config.uris, self.endpoints)


class BulkDelivery(Delivery):
    """Sends each attempt to the endpoint the pool chooses, and tells the pool how it went."""

    def __init__(
        self,
        config: HttpSinkConfig,
        protocol: BulkProtocol,
        bodies: BodyBuilder,
        dead_letter: DeadLetterFile | None,
        log: structlog.typing.FilteringBoundLogger,
        uris: list[str],
        endpoints: EndpointPool,
    ) -> None:
        super().__init__(config, protocol, bodies, dead_letter, log)
        self._uris = uris
        self._endpoints = endpoints
        for uri in uris[1:]:
            self._redactor.add_uri_credentials(uri)
        self._uri_for_logs = ", ".join(redact_uri(uri) for uri in uris)

    async def _send_once(self, body: bytes | StreamedBody, parts: list[bytes]) -> Outcome | None:
        if isinstance(body, bytes) and not body:
            # every record of the request was refused (its index could not be
            # rendered): Elasticsearch would answer 400 to an empty body
            return self._protocol.interpret(b'{"errors":false,"items":[]}', parts)
        if len(self._uris) == 1:
            return await self._send_to(self._uris[0], body, parts)
        endpoint = self._endpoints.choose()
        healthy: bool | None = None  # no verdict if the request is cancelled
        reachable = True
        try:
            outcome = await self._send_to(self._uris[endpoint.index], body, parts)
            healthy = True
            return outcome
        except RetryLater as retry:
            reachable = retry.reason not in ("connection", "timeout")
            # an answer other than 5xx (a 429, an expired token) came from a working node
            healthy = reachable and not retry.reason.startswith("http_5")
            raise
        except Rejected:
            healthy = True
            raise
        finally:
            self._endpoints.done(endpoint, healthy, reachable)
