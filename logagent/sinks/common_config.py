"""The options every sink takes, in Vector's spelling: ``buffer``, ``healthcheck``, ``acknowledgements``, ``encoding``.

A light module (msgspec only): the config layer imports it through the sinks'
config Structs. What each option does:

- ``buffer``: Vector's buffer in front of the sink. ``type: memory`` is the
  sink's inbox, ``max_events`` its size; ``when_full: block`` makes the
  sources wait (backpressure, as always), ``drop_newest`` drops the batches
  that find it full, counts them, and acknowledges them so the files'
  checkpoints move on. ``type: disk`` is accepted: the log files and the
  checkpoints are already the durable buffer.
- ``healthcheck``: Vector's start-up check of the destination
  (:mod:`logagent.sinks.healthcheck`).
- ``acknowledgements``: accepted; delivery is always end to end.
- ``encoding``: ``codec`` plus ``only_fields``, ``except_fields`` and
  ``timestamp_format``, applied to each record on the wire
  (:mod:`logagent.sinks.shaping`). Each sink keeps its short form
  (``encoding: json``).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from logagent.sinks.templates import TemplateError, parse_field_path

TimestampFormat = Literal["rfc3339", "unix", "unix_ms", "unix_us", "unix_ns", "unix_float"]

PROXY_REFUSED = "HTTP proxies are not implemented: requests go straight to the destination"

#: Vector's codecs that a log agent shipping JSON records has no use for here, and why
REFUSED_CODECS = {
    "avro": "needs a schema per record type; use json",
    "cef": "CEF is a security-event format; use json or text",
    "csv": "records are nested objects; use json",
    "gelf": "use json (GELF is JSON with fixed keys: reshape with a remap transform)",
    "logfmt": "records are nested objects; use json",
    "native": "Vector's own protobuf framing, for vector-to-vector links only",
    "native_json": "Vector's own event JSON, for vector-to-vector links only",
    "protobuf": "needs a user .desc file per message type; use json (the opentelemetry sink speaks OTLP)",
    "otlp": "only the opentelemetry sink speaks OTLP",
    "syslog": "use text (a message per line) or json",
}


class BufferConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``buffer``: ``type: memory | disk``, ``max_events``, ``max_size``, ``when_full``."""

    type: Literal["memory", "disk"] = "memory"
    #: the inbox's size in events (memory); None: the agent's default inbox
    max_events: int | None = None
    #: bytes (disk: Vector's disk buffer size, accepted; memory: the inbox's size in bytes)
    max_size: int | None = None
    when_full: Literal["block", "drop_newest"] = "block"

    def validate(self) -> None:
        if self.max_events is not None and self.max_events < 1:
            raise ValueError("buffer.max_events: must be at least 1")
        if self.max_size is not None and self.max_size < 1:
            raise ValueError("buffer.max_size: must be at least 1")
        if self.type == "disk":
            if self.max_events is not None:
                raise ValueError("buffer.max_events: only for type memory (a disk buffer is sized by max_size)")
            if self.when_full == "drop_newest":
                raise ValueError(
                    "buffer.when_full: drop_newest cannot be honoured with type disk: the log files are this "
                    "agent's disk buffer and a sink that falls behind makes the sources wait; use type memory "
                    "to drop records when the sink falls behind"
                )

    @property
    def drops(self) -> bool:
        return self.type == "memory" and self.when_full == "drop_newest"


class HealthcheckConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``healthcheck``: checked once at start-up (see :mod:`logagent.sinks.healthcheck`)."""

    enabled: bool = True
    #: the URL to GET instead of the sink's own check (http-based sinks)
    uri: str | None = None
    timeout: float = 10.0

    def validate(self) -> None:
        if not self.timeout > 0:
            raise ValueError("healthcheck.timeout: must be greater than 0")
        if self.uri is not None and not self.uri.startswith(("http://", "https://")):
            raise ValueError(f"healthcheck.uri: expected an http or https URL, got {self.uri!r}")


class AcknowledgementsConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``acknowledgements``: accepted; every record is acknowledged end to end whatever it says."""

    enabled: bool | None = None


class JsonCodecOptions(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pretty: bool = False


class CharacterDelimited(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    delimiter: str


class FramingConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``framing``: ``newline_delimited`` (one record a line) or, for a JSON array,
    ``character_delimited`` with ``,`` (what Vector's http sink does with ``codec: json``)."""

    method: Literal["newline_delimited", "character_delimited"] = "newline_delimited"
    character_delimited: CharacterDelimited | None = None

    @property
    def json_array(self) -> bool:
        return self.method == "character_delimited"

    def validate(self, key: str = "framing") -> None:
        if self.method == "character_delimited":
            if self.character_delimited is not None and self.character_delimited.delimiter != ",":
                raise ValueError(f"{key}.character_delimited.delimiter: only \",\" (a JSON array) is implemented")
        elif self.character_delimited is not None:
            raise ValueError(f"{key}.character_delimited: only with method character_delimited")


class FieldsOptions(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's encoding ``only_fields``, ``except_fields``, ``timestamp_format`` (the elasticsearch sink's whole ``encoding``)."""

    only_fields: list[str] | None = None
    except_fields: list[str] | None = None
    timestamp_format: TimestampFormat | None = None
    #: metric events only in Vector; accepted (no metric events reach a log sink here)
    metric_tag_values: Literal["single", "full", "auto"] = "single"

    @property
    def reshapes(self) -> bool:
        return bool(self.only_fields or self.except_fields) or self.timestamp_format not in (None, "rfc3339")


class CodecEncoding(FieldsOptions, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``encoding`` mapping: ``codec`` and the field options."""

    codec: str
    json: JsonCodecOptions = msgspec.field(default_factory=JsonCodecOptions)

    def checked_codec(self, allowed: tuple[str, ...], key: str = "encoding.codec") -> str:
        """The codec if this sink has it (``raw_message`` is ``text``: the message alone), else ``ValueError``."""
        codec = "text" if self.codec == "raw_message" and "text" in allowed else self.codec
        if codec in allowed:
            return codec
        why = REFUSED_CODECS.get(self.codec)
        if why is not None:
            raise ValueError(f"{key}: {self.codec} is not supported: {why}")
        raise ValueError(f"{key}: expected one of {', '.join(allowed)}, got {self.codec!r}")


class ProxyConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``proxy``: only ``enabled: false`` (no proxy), what the sinks here always do."""

    enabled: bool = True
    http: str | None = None
    https: str | None = None
    no_proxy: list[str] = []


class CommonSinkOptions(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The keys Vector gives every sink."""

    inputs: list[str]
    buffer: BufferConfig | list[BufferConfig] = msgspec.field(default_factory=BufferConfig)
    healthcheck: HealthcheckConfig | bool = msgspec.field(default_factory=HealthcheckConfig)
    acknowledgements: AcknowledgementsConfig | bool = msgspec.field(default_factory=AcknowledgementsConfig)
    #: Vector's ``graph`` (how ``vector graph`` draws the component): accepted, nothing to draw here
    graph: dict[str, Any] | None = None
    proxy: ProxyConfig | None = None

    @property
    def buffer_config(self) -> BufferConfig:
        buffer = self.buffer
        return buffer[0] if isinstance(buffer, list) else buffer

    @property
    def healthcheck_config(self) -> HealthcheckConfig:
        check = self.healthcheck
        return HealthcheckConfig(enabled=check) if isinstance(check, bool) else check

    def validate_common(self) -> None:
        if isinstance(self.buffer, list):
            if len(self.buffer) != 1:
                raise ValueError(
                    "buffer: chained buffers (overflow into a second buffer) are not implemented; give one "
                    "buffer (the log files are already the overflow: sources wait and read on later)"
                )
        self.buffer_config.validate()
        self.healthcheck_config.validate()
        if self.proxy is not None and self.proxy.enabled and (self.proxy.http or self.proxy.https):
            raise ValueError(f"proxy.{'http' if self.proxy.http else 'https'}: {PROXY_REFUSED}")


def check_fields(options: FieldsOptions, key: str = "encoding") -> None:
    """Raise ``ValueError`` for field paths that cannot be parsed, or both field lists at once."""
    if options.only_fields and options.except_fields:
        raise ValueError(f"{key}.except_fields: set only_fields or except_fields, not both")
    for name in ("only_fields", "except_fields"):
        for index, text in enumerate(getattr(options, name) or ()):
            try:
                parse_field_path(text)
            except TemplateError:
                raise ValueError(f"{key}.{name}[{index}]: not a field path, got {text!r}") from None


class HealthchecksConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's global ``healthchecks``: run the sinks' start-up checks, and whether a failure stops the start."""

    enabled: bool = True
    require_healthy: bool = False
