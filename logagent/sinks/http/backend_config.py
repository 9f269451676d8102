"""The options every backend sink (elasticsearch, loki, opentelemetry) shares with the ``http`` sink.

A light module: the config layer imports it (and the backends' ``*_config``
modules) to parse and validate a config without importing aiohttp, protobuf
or the compression libraries; the sinks themselves import those.

The backend configs take the ``http`` sink's option groups under the same
names (``compression``, ``compression_level``, ``batch``, ``request``,
``retry``, ``dead_letter``, ``auth``, ``tls``) through
:class:`BackendSinkOptions`, and each turns itself into an
:class:`~logagent.sinks.http.config.HttpSinkConfig` for the shared machinery,
which also validates those options.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from logagent.sinks.http.config import HttpOptions, HttpSinkConfig
from logagent.sinks.templates import Template, TemplateError, compile_template


class BackendSinkOptions(HttpOptions, forbid_unknown_fields=True, kw_only=True):
    """The ``http`` sink's options every backend sink has."""

    def http_config(self, uri: str, headers: dict[str, str] | None = None) -> HttpSinkConfig:
        """The shared machinery's config: these options, posting to ``uri``."""
        shared = {name: getattr(self, name) for name in HttpOptions.__struct_fields__}
        if headers:
            shared["request"] = msgspec.structs.replace(self.request, headers={**self.request.headers, **headers})
        return HttpSinkConfig(**shared, uri=uri, method="post")

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
