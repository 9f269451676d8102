"""The ``elasticsearch`` sink: the ``_bulk`` API of Elasticsearch and OpenSearch.

The options (Vector's) are in :mod:`logagent.sinks.elasticsearch_config`.
Per-item results are read by :class:`~logagent.sinks.elasticsearch_bulk.BulkProtocol`.
"""

from __future__ import annotations

import os

from logagent.sinks.backend import BackendSink
from logagent.sinks.elasticsearch_bulk import BulkProtocol
from logagent.sinks.elasticsearch_config import Action, BulkConfig, DataStreamNames, ElasticsearchSinkConfig

__all__ = ["Action", "BulkConfig", "DataStreamNames", "ElasticsearchSink", "ElasticsearchSinkConfig"]


class ElasticsearchSink(BackendSink):
    kind = "elasticsearch"

    def __init__(self, component_id: str, config: ElasticsearchSinkConfig, *, data_dir: str | os.PathLike[str] | None = None) -> None:
        config.validate()
        self.backend_config = config
        action: Action = "create" if config.mode == "data_stream" else config.bulk.action
        protocol = BulkProtocol(config.index_template(), action, data_stream=config.mode == "data_stream")
        super().__init__(component_id, config.http_config(config.uri), protocol, data_dir=data_dir)
