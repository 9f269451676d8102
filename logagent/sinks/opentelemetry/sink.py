"""The ``opentelemetry`` sink: OTLP/HTTP logs (``POST <uri>``, e.g. ``http://collector:4318/v1/logs``).

The options are in :mod:`logagent.sinks.opentelemetry.config`; the mapping
of records to LogRecords is in :mod:`logagent.sinks.opentelemetry.logs`.
"""

from __future__ import annotations

import os

from logagent.sinks.http.backend import BackendSink
from logagent.sinks.opentelemetry.config import OpentelemetrySinkConfig
from logagent.sinks.opentelemetry.logs import LogsProtocol
from logagent.sinks.opentelemetry.logs_json import JsonLogsProtocol

__all__ = ["OpentelemetrySink", "OpentelemetrySinkConfig"]


class OpentelemetrySink(BackendSink):
    kind = "opentelemetry"

    def __init__(self, component_id: str, config: OpentelemetrySinkConfig, *, data_dir: str | os.PathLike[str] | None = None) -> None:
        config.validate()
        self.backend_config = config
        paths = config.severity_paths()
        encoding = config.otlp_encoding
        self.logs = JsonLogsProtocol(paths) if encoding == "json" else LogsProtocol(encoding, paths)
        super().__init__(component_id, config.http_config(config.target_uri), self.logs, data_dir=data_dir)

    @property
    def rejected_events(self) -> int:
        """Records the receiver reported rejected in ``partial_success``."""
        return self.logs.rejected_events
