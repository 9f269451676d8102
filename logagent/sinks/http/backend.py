"""What the backend sinks (elasticsearch, loki, opentelemetry) share with the ``http`` sink.

:class:`BackendSink` is the HTTP sink with a protocol of the backend's own.
The options they share are in :mod:`logagent.sinks.http.backend_config` (re-exported
here), which the config layer imports without the HTTP machinery.
"""

from __future__ import annotations

import os

from logagent.sinks.http.backend_config import BackendSinkOptions, compile_option
from logagent.sinks.http.sink import HttpSink
from logagent.sinks.http.config import HttpSinkConfig
from logagent.sinks.http.protocol import HttpProtocol

__all__ = ["BackendSink", "BackendSinkOptions", "compile_option"]


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
