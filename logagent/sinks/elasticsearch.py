"""The ``elasticsearch`` sink: the ``_bulk`` API of Elasticsearch and OpenSearch.

The options (Vector's) are in :mod:`logagent.sinks.elasticsearch_config`.
Per-item results are read by :class:`~logagent.sinks.elasticsearch_bulk.BulkProtocol`.
With several ``endpoints``, each request goes to the one an
:class:`~logagent.sinks.endpoints.EndpointPool` chooses.
"""

from __future__ import annotations

import os
from contextvars import ContextVar

from logagent.sinks.backend import BackendSink
from logagent.sinks.elasticsearch_bulk import BulkProtocol
from logagent.sinks.elasticsearch_config import Action, BulkConfig, DataStreamNames, ElasticsearchSinkConfig
from logagent.sinks.endpoints import EndpointPool
from logagent.sinks.http import _Rejected, _Retry
from logagent.sinks.http_config import HttpSinkConfig, redact_uri
from logagent.sinks.http_protocol import Outcome

__all__ = ["Action", "BulkConfig", "DataStreamNames", "ElasticsearchSink", "ElasticsearchSinkConfig"]

#: the endpoint the current task's request goes to (each lane worker is its own task)
_ENDPOINT: ContextVar[int] = ContextVar("logagent_elasticsearch_endpoint", default=0)


class ElasticsearchSink(BackendSink):
    kind = "elasticsearch"

    def __init__(self, component_id: str, config: ElasticsearchSinkConfig, *, data_dir: str | os.PathLike[str] | None = None) -> None:
        config.validate()
        self.backend_config = config
        action: Action = "create" if config.mode == "data_stream" else config.bulk.action
        protocol = BulkProtocol(config.index_template(), action, data_stream=config.mode == "data_stream")
        super().__init__(component_id, config.http_config(config.uri), protocol, data_dir=data_dir)
        uris = config.uris
        self._configs = [self._configs[0], *(config.http_config(uri) for uri in uris[1:])]
        for uri in uris[1:]:
            self._redactor.add_uri_credentials(uri)
        self._uri_for_logs = ", ".join(redact_uri(uri) for uri in uris)
        distribution = config.distribution
        self.endpoints = EndpointPool(
            [redact_uri(uri) for uri in uris], distribution.retry_initial_backoff_secs, distribution.retry_max_duration_secs
        )

    # The HTTP machinery reads ``self.config.uri`` for each attempt; here it is
    # the URI of the endpoint chosen for the request the current task sends.
    @property  # type: ignore[override]
    def config(self) -> HttpSinkConfig:
        return self._configs[_ENDPOINT.get()]

    @config.setter
    def config(self, value: HttpSinkConfig) -> None:
        self._configs = [value]

    async def _send_once(self, body, parts: list[bytes]) -> Outcome | None:  # type: ignore[no-untyped-def]
        if isinstance(body, bytes) and not body:
            # every record of the request was refused (its index could not be
            # rendered): Elasticsearch would answer 400 to an empty body
            return self.protocol.interpret(b'{"errors":false,"items":[]}', parts)
        if len(self._configs) == 1:
            return await super()._send_once(body, parts)
        endpoint = self.endpoints.choose()
        token = _ENDPOINT.set(endpoint.index)
        healthy: bool | None = None  # no verdict if the request is cancelled
        reachable = True
        try:
            outcome = await super()._send_once(body, parts)
            healthy = True
            return outcome
        except _Retry as retry:
            reachable = retry.reason not in ("connection", "timeout")
            # an answer other than 5xx (a 429, an expired token) came from a working node
            healthy = reachable and not retry.reason.startswith("http_5")
            raise
        except _Rejected:
            healthy = True
            raise
        finally:
            _ENDPOINT.reset(token)
            self.endpoints.done(endpoint, healthy, reachable)
