"""Configuration of the ``opentelemetry`` sink (light: no protobuf, no HTTP machinery).

Options: ``uri`` (the full URL, e.g. ``http://collector:4318/v1/logs``),
``encoding: protobuf | json``, ``severity_fields`` (record fields read for a
level, first found wins), plus the ``http`` sink's option groups (see
:mod:`logagent.sinks.http.backend_config`).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from logagent.sinks.common_config import AcknowledgementsConfig, CodecEncoding, FramingConfig, check_fields
from logagent.sinks.http.backend_config import BackendSinkOptions
from logagent.sinks.http.compression import Compression
from logagent.sinks.http.config import AuthConfig, BatchConfig, HttpSinkConfig, RequestConfig, RetryConfig, TlsConfig
from logagent.sinks.templates import FieldPath, TemplateError, parse_field_path

DEFAULT_SEVERITY_FIELDS = ["level", "severity", "parsed.level", "parsed.severity"]

#: the HTTP option groups ``protocol`` may hold (Vector's layout) instead of the top level (ours)
PROTOCOL_GROUPS = ("compression", "compression_level", "batch", "request", "retry", "auth", "tls")

#: the OTLP message Vector's ``protobuf`` codec must be given for logs
_LOGS_REQUEST = "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest"


class ProtobufCodecOptions(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    desc_file: str | None = None
    message_type: str = _LOGS_REQUEST
    use_json_names: bool = False


class OtlpEncoding(CodecEncoding, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``protocol.encoding``: ``otlp`` or ``protobuf`` (OTLP/protobuf), ``json`` (OTLP/JSON)."""

    protobuf: ProtobufCodecOptions | None = None


class OtlpHttpProtocol(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``protocol: {type: http, uri, ...}``: the http sink's options, nested."""

    type: Literal["http"]
    uri: str
    method: Literal["post"] = "post"
    encoding: OtlpEncoding = msgspec.field(default_factory=lambda: OtlpEncoding(codec="otlp"))
    framing: FramingConfig | None = None
    #: Vector's older place of request headers (the same as ``request.headers``)
    headers: dict[str, str] = {}
    payload_prefix: str = ""
    payload_suffix: str = ""
    acknowledgements: AcknowledgementsConfig | bool = msgspec.field(default_factory=AcknowledgementsConfig)
    compression: Compression = "none"
    compression_level: int | None = None
    batch: BatchConfig = msgspec.field(default_factory=BatchConfig)
    request: RequestConfig = msgspec.field(default_factory=RequestConfig)
    retry: RetryConfig = msgspec.field(default_factory=RetryConfig)
    auth: AuthConfig | None = None
    tls: TlsConfig = msgspec.field(default_factory=TlsConfig)
    dangerously_allow_unconfined_template_resolution: bool = False
    #: Vector's retry_strategy (refused in validate)
    retry_strategy: dict[str, Any] | None = None

    def otlp_encoding(self) -> str:
        """``protobuf``, or ``records`` for Vector's ``codec: json`` (the records themselves as JSON, as
        Vector sends them: OTLP-shaped by a remap transform); ``ValueError`` for another codec."""
        codec = self.encoding.codec
        if codec in ("otlp", "protobuf"):
            options = self.encoding.protobuf
            if codec == "protobuf" and options is not None and options.message_type != _LOGS_REQUEST:
                raise ValueError(f"protocol.encoding.protobuf.message_type: records are sent as {_LOGS_REQUEST}, "
                                 f"got {options.message_type!r}")
            return "protobuf"
        self.encoding.checked_codec(("json",), "protocol.encoding.codec")
        return "records"

    @property
    def body_format(self) -> str:
        """For ``records``: ``json`` (an array, Vector's default framing) or ``ndjson`` (newline_delimited)."""
        framing = self.framing
        return "ndjson" if framing is not None and not framing.json_array else "json"


class OpentelemetrySinkConfig(BackendSinkOptions, tag="opentelemetry", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    #: ours; or Vector's ``protocol.uri``
    uri: str = ""
    encoding: Literal["protobuf", "json"] = "protobuf"
    severity_fields: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_SEVERITY_FIELDS))
    protocol: OtlpHttpProtocol | None = None

    @property
    def target_uri(self) -> str:
        """Where requests go: ``uri``, or Vector's ``protocol.uri``."""
        return self.protocol.uri if self.protocol is not None else self.uri

    @property
    def otlp_encoding(self) -> str:
        """``protobuf`` or ``json`` (OTLP/JSON): ours; ``protobuf`` or ``records`` from Vector's ``protocol.encoding.codec``."""
        return self.protocol.otlp_encoding() if self.protocol is not None else self.encoding

    def http_config(self, uri: str, headers: dict[str, str] | None = None) -> HttpSinkConfig:
        """With Vector's ``protocol``, its option groups are the sink's."""
        protocol = self.protocol
        if protocol is None:
            return super().http_config(uri, headers)
        nested = {name: getattr(protocol, name) for name in PROTOCOL_GROUPS}
        if protocol.headers:
            nested["request"] = msgspec.structs.replace(protocol.request, headers={**protocol.request.headers, **protocol.headers})
        return super(OpentelemetrySinkConfig, msgspec.structs.replace(self, **nested, protocol=None)).http_config(uri, headers)

    def validate(self) -> None:
        if self.protocol is not None:
            self._validate_protocol(self.protocol)
        elif not self.uri:
            raise ValueError("uri: missing required key; give uri (ours) or protocol.uri (Vector's)")
        self.validate_http(self.target_uri, "uri" if self.protocol is None else "protocol.uri")
        self.severity_paths()

    def _validate_protocol(self, protocol: OtlpHttpProtocol) -> None:
        conflicts = [name for name in ("uri", "encoding", *PROTOCOL_GROUPS) if _set_at_top(self, name)]
        if conflicts:
            raise ValueError(f"{conflicts[0]}: set it inside protocol (Vector's layout) or at the top (ours), not both")
        encoding = protocol.encoding
        check_fields(encoding, "protocol.encoding")
        if protocol.retry_strategy is not None:
            raise ValueError("protocol.retry_strategy: retry strategies other than default are not implemented: 408, "
                             "429 and 5xx answers are retried, other answers go to the dead-letter file")
        if protocol.otlp_encoding() == "records":  # Vector's codec json: the http sink's body of the records
            if protocol.framing is not None:
                protocol.framing.validate("protocol.framing")
            if (protocol.payload_prefix or protocol.payload_suffix) and protocol.body_format != "json":
                raise ValueError("protocol.payload_prefix: only with a JSON array body (no framing, or character_delimited)")
            return
        if encoding.timestamp_format not in (None, "rfc3339"):
            raise ValueError("protocol.encoding.timestamp_format: OTLP carries the time as timeUnixNano, not as a field")
        for name in ("only_fields", "except_fields"):
            if getattr(encoding, name):
                raise ValueError(f"protocol.encoding.{name}: not implemented for OTLP (a record's fields become its "
                                 "resource and attributes); with codec json the records go as they are")
        if protocol.framing is not None:
            raise ValueError("protocol.framing: an OTLP request body is one ExportLogsServiceRequest")
        if protocol.payload_prefix or protocol.payload_suffix:
            raise ValueError("protocol.payload_prefix: an OTLP request body is the ExportLogsServiceRequest alone")

    def severity_paths(self) -> list[FieldPath]:
        paths = []
        for index, text in enumerate(self.severity_fields):
            try:
                paths.append(parse_field_path(text))
            except TemplateError:
                raise ValueError(f"severity_fields[{index}]: not a field path, got {text!r}") from None
        return paths


def _set_at_top(config: OpentelemetrySinkConfig, name: str) -> bool:
    """Whether the top-level option differs from its default (then it was given there)."""
    field = {f.name: f for f in msgspec.structs.fields(config)}[name]
    default = field.default_factory() if field.default_factory is not msgspec.NODEFAULT else field.default
    return bool(getattr(config, name) != default)
