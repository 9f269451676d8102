"""What the backend sinks (elasticsearch, loki, opentelemetry) share with the ``http`` sink.

Their configs take the ``http`` sink's option groups under the same names
(``compression``, ``compression_level``, ``batch``, ``request``, ``retry``,
``dead_letter``, ``auth``, ``tls``) through :class:`BackendSinkOptions`, and
each turns itself into an :class:`HttpSinkConfig` for the shared machinery,
which also validates those options. :class:`BackendSink` is the HTTP sink with
a protocol of the backend's own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import msgspec

from logagent.sinks.compression import Compression
from logagent.sinks.http import HttpSink
from logagent.sinks.http_config import (
    AuthConfig,
    BatchConfig,
    DeadLetterConfig,
    HttpSinkConfig,
    RequestConfig,
    RetryConfig,
    TlsConfig,
)
from logagent.sinks.http_protocol import HttpProtocol
from logagent.sinks.templates import Template, TemplateError, compile_template


class BackendSinkOptions(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The ``http`` sink's options every backend sink has."""

    inputs: list[str]
    compression: Compression = "none"
    compression_level: int | None = None
    batch: BatchConfig = msgspec.field(default_factory=BatchConfig)
    request: RequestConfig = msgspec.field(default_factory=RequestConfig)
    retry: RetryConfig = msgspec.field(default_factory=RetryConfig)
    dead_letter: DeadLetterConfig = msgspec.field(default_factory=DeadLetterConfig)
    auth: AuthConfig | None = None
    tls: TlsConfig = msgspec.field(default_factory=TlsConfig)

    def http_config(self, uri: str, headers: dict[str, str] | None = None) -> HttpSinkConfig:
        """The shared machinery's config: these options, posting to ``uri``."""
        request = self.request
        if headers:
            request = msgspec.structs.replace(request, headers={**request.headers, **headers})
        return HttpSinkConfig(
            inputs=self.inputs,
            uri=uri,
            method="post",
            compression=self.compression,
            compression_level=self.compression_level,
            batch=self.batch,
            request=request,
            retry=self.retry,
            dead_letter=self.dead_letter,
            auth=self.auth,
            tls=self.tls,
        )

    def validate_http(self, uri: str, uri_key: str) -> None:
        """Validate the shared options; a problem with the URL is reported under ``uri_key``."""
        try:
            self.http_config(uri).validate()
        except ValueError as exc:
            message = str(exc)
            if message.startswith("uri: "):
                raise ValueError(f"{uri_key}: {message[5:]}") from None
            raise

    def templates(self) -> Iterator[tuple[str, Template]]:
        """Every template option as (key path, compiled template), for the field check."""
        return iter(())


def compile_option(key: str, text: str) -> Template:
    """A template option compiled, or ``ValueError("<key>: <reason>")``."""
    try:
        return compile_template(text)
    except TemplateError as exc:
        raise ValueError(f"{key}: {exc}") from None


class BackendSink(HttpSink):
    """The HTTP sink with a backend's protocol (its ``kind`` names the backend)."""

    def __init__(
        self,
        component_id: str,
        config: HttpSinkConfig,
        protocol: HttpProtocol,
        *,
        data_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(component_id, config, data_dir=data_dir, protocol=protocol)
