"""Configuration of the ``opentelemetry`` sink (light: no protobuf, no HTTP machinery).

Options: ``uri`` (the full URL, e.g. ``http://collector:4318/v1/logs``),
``encoding: protobuf | json``, ``severity_fields`` (record fields read for a
level, first found wins), plus the ``http`` sink's option groups (see
:mod:`logagent.sinks.http.backend_config`).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from logagent.sinks.http.backend_config import BackendSinkOptions
from logagent.sinks.templates import FieldPath, TemplateError, parse_field_path

DEFAULT_SEVERITY_FIELDS = ["level", "severity", "parsed.level", "parsed.severity"]


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
