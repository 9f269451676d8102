"""The ``opentelemetry`` sink: OTLP/HTTP logs (``POST <uri>``, e.g. ``http://collector:4318/v1/logs``).

The options are in :mod:`logagent.sinks.opentelemetry.config`; the mapping
of records to LogRecords is in :mod:`logagent.sinks.opentelemetry.logs`.
"""

from __future__ import annotations

import os

from logagent.sinks.http.backend import BackendSink
from logagent.sinks.http.protocol import HttpProtocol, protocol_for
from logagent.sinks.opentelemetry.config import OpentelemetrySinkConfig, OtlpHttpProtocol
from logagent.sinks.shaping import shaper_for
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
        protocol: HttpProtocol
        if encoding == "records" and config.protocol is not None:  # Vector's codec json: the records as they are
            self.logs = None
            protocol = records_protocol(config.protocol)
        else:
            self.logs = JsonLogsProtocol(paths) if encoding == "json" else LogsProtocol(encoding, paths)
            protocol = self.logs
        super().__init__(component_id, config.http_config(config.target_uri), protocol, data_dir=data_dir)

    @property
    def rejected_events(self) -> int:
        """Records the receiver reported rejected in ``partial_success``."""
        return self.logs.rejected_events if self.logs is not None else 0


def records_protocol(protocol: OtlpHttpProtocol) -> HttpProtocol:
    """Vector's ``codec: json``: the (OTLP-shaped) records as a JSON array, with ``payload_prefix``/``suffix``, or ndjson."""
    body = protocol_for(protocol.body_format, shaper_for(protocol.encoding))
    if protocol.body_format == "json":
        body.prefix, body.suffix = protocol.payload_prefix.encode(), protocol.payload_suffix.encode()  # type: ignore[attr-defined]
    return body
