"""How each component kind is built: one line per kind, implementations imported on first use.

Transforms are found by their config Struct's type, sinks by their kind (the
config's ``type`` tag). A builder that imports its module lazily keeps what a
config does not use (the VRL compiler, RE2, the HTTP machinery, protobuf) out
of the process.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from logagent.queue import BatchQueue, DroppingQueue
from logagent.sinks.base import Sink
from logagent.transforms.base import Transform
from logagent.transforms.dedupe_config import DedupeConfig
from logagent.transforms.filter import FilterConfig, FilterTransform
from logagent.transforms.parse_json import ParseJsonConfig, ParseJsonTransform
from logagent.transforms.remap_config import RemapConfig
from logagent.transforms.route import RouteConfig, RouteTransform
from logagent.transforms.sample_config import SampleConfig
from logagent.transforms.throttle_config import ThrottleConfig

if TYPE_CHECKING:
    from logagent.sinks.console import ConsoleSinkConfig

#: per sink inbox budget
INBOX_EVENTS = 20_000
INBOX_BYTES = 8 << 20

# ---------------------------------------------------------------- builders
# One line per component kind: transforms by config Struct type, sinks by kind.

def _lazy(module: str, class_name: str) -> Callable[[str, Any], Transform]:
    """A builder that imports its transform's module on first use (the VRL compiler, RE2, ...)."""

    def build(component_id: str, config: Any) -> Transform:
        cls: Callable[[str, Any], Transform] = getattr(importlib.import_module(module), class_name)
        return cls(component_id, config)

    return build


TRANSFORM_BUILDERS: dict[type, Callable[[str, Any], Transform]] = {
    FilterConfig: FilterTransform,
    RouteConfig: RouteTransform,
    ParseJsonConfig: ParseJsonTransform,
    RemapConfig: _lazy("logagent.transforms.remap", "RemapTransform"),
    ThrottleConfig: _lazy("logagent.transforms.throttle", "ThrottleTransform"),
    SampleConfig: _lazy("logagent.transforms.sample", "SampleTransform"),
    DedupeConfig: _lazy("logagent.transforms.dedupe", "DedupeTransform"),
}

#: (component id, config, the fd that stands for stdout in tests or None, data_dir) -> sink
SinkBuilder = Callable[[str, Any, int | None, str | None], Sink]


def _console(component_id: str, config: ConsoleSinkConfig, stdout_fd: int | None, data_dir: str | None) -> Sink:
    from logagent.sinks.console import ConsoleSink

    return ConsoleSink(component_id, config, fd=stdout_fd if config.target == "stdout" else None)


def _http_based(module: str, class_name: str) -> SinkBuilder:
    """The builder of a sink on the HTTP machinery, whose module is imported on first use."""

    def build(component_id: str, config: Any, stdout_fd: int | None, data_dir: str | None) -> Sink:
        sink_class = getattr(importlib.import_module(module), class_name)
        return sink_class(component_id, config, data_dir=data_dir)  # type: ignore[no-any-return]

    return build


#: sink kind (its config's ``type`` tag, as in ``config.SINK_KINDS``) -> builder. A sink's
#: module is imported when a config first uses it, so an agent without HTTP-based sinks
#: never loads the HTTP sink machinery, the backend protocols or the protobuf classes.
SINK_BUILDERS: dict[str, SinkBuilder] = {
    "console": _console,
    "http": _http_based("logagent.sinks.http.sink", "HttpSink"),
    "elasticsearch": _http_based("logagent.sinks.elasticsearch.sink", "ElasticsearchSink"),
    "loki": _http_based("logagent.sinks.loki.sink", "LokiSink"),
    "opentelemetry": _http_based("logagent.sinks.opentelemetry.sink", "OpentelemetrySink"),
    "prometheus_exporter": _http_based("logagent.sinks.prometheus.exporter", "PrometheusExporterSink"),
}


def build_transform(component_id: str, config: Any) -> Transform:
    return TRANSFORM_BUILDERS[type(config)](component_id, config)


def sink_kind(config: msgspec.Struct) -> str:
    """A sink config's kind: the ``type`` tag its Struct is decoded by."""
    return str(type(config).__struct_config__.tag)


def build_sink(component_id: str, config: Any, stdout_fd: int | None = None, data_dir: str | None = None) -> Sink:
    return SINK_BUILDERS[sink_kind(config)](component_id, config, stdout_fd, data_dir)


def new_inbox(config: Any = None) -> BatchQueue:
    """A sink's inbox: sized and dropping or not as its ``buffer`` says (the default inbox without one)."""
    buffer = getattr(config, "buffer_config", None)
    if buffer is None or buffer.type == "disk":  # the files on disk are the disk buffer
        return BatchQueue(INBOX_EVENTS, INBOX_BYTES)
    events = buffer.max_events or INBOX_EVENTS
    size = buffer.max_size or INBOX_BYTES
    return (DroppingQueue if buffer.drops else BatchQueue)(events, size)
