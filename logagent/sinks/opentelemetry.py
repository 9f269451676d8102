"""The ``opentelemetry`` sink: OTLP/HTTP logs (``POST <uri>``, e.g. ``http://collector:4318/v1/logs``).

Options: ``uri`` (the full URL), ``encoding: protobuf | json``,
``severity_fields`` (record fields read for a level, first found wins), plus
the ``http`` sink's option groups. The mapping of records to LogRecords is in
:mod:`logagent.sinks.otlp_logs`.
"""

from __future__ import annotations

import os
from typing import Literal

import msgspec

from logagent.sinks.backend import BackendSink, BackendSinkOptions
from logagent.sinks.otlp_logs import DEFAULT_SEVERITY_FIELDS, LogsProtocol
from logagent.sinks.templates import FieldPath, TemplateError, parse_field_path


class OpentelemetrySinkConfig(BackendSinkOptions, tag="opentelemetry", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    uri: str
    encoding: Literal["protobuf", "json"] = "protobuf"
    severity_fields: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_SEVERITY_FIELDS))

    def validate(self) -> None:
        self.validate_http(self.uri, "uri")
        self.severity_paths()

    def severity_paths(self) -> list[FieldPath]:
        paths = []
        for index, text in enumerate(self.severity_fields):
            try:
                paths.append(parse_field_path(text))
            except TemplateError:
                raise ValueError(f"severity_fields[{index}]: not a field path, got {text!r}") from None
        return paths


class OpentelemetrySink(BackendSink):
    kind = "opentelemetry"

    def __init__(self, component_id: str, config: OpentelemetrySinkConfig, *, data_dir: str | os.PathLike[str] | None = None) -> None:
        config.validate()
        self.backend_config = config
        self.logs = LogsProtocol(config.encoding, config.severity_paths())
        super().__init__(component_id, config.http_config(config.uri), self.logs, data_dir=data_dir)

    @property
    def rejected_events(self) -> int:
        """Records the receiver reported rejected in ``partial_success``."""
        return self.logs.rejected_events
