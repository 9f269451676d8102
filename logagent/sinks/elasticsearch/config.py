"""Configuration of the ``elasticsearch`` sink (light: no HTTP machinery, see :mod:`logagent.sinks.http.backend_config`).

Options are Vector's: ``endpoints`` (base URLs; the sink posts to
``<endpoint>/_bulk``, spreading requests over them, see
:mod:`logagent.sinks.elasticsearch.endpoints`), ``distribution.retry_initial_backoff_secs``
and ``distribution.retry_max_duration_secs``, ``mode: bulk | data_stream``,
``bulk.index`` (a template, default ``logagent-%Y.%m.%d``), ``bulk.action:
index | create``, ``data_stream.type/dataset/namespace``, plus the ``http``
sink's option groups.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

import msgspec

from logagent.sinks.http.backend_config import BackendSinkOptions, compile_option
from logagent.sinks.templates import Template

Action = Literal["index", "create"]

#: strftime directives whose output has upper-case letters, which index names cannot have
_UPPER_CASE_DIRECTIVES = re.compile(r"%-?[aAbBchpxXZ]")
_BAD_INDEX_CHARS = set('\\/*?"<>| ,#:')


class DataStreamNames(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``mode: data_stream`` writes to ``<type>-<dataset>-<namespace>`` (templates each)."""

    type: str = "logs"
    dataset: str = "generic"
    namespace: str = "default"


class DistributionConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """How long an unhealthy endpoint stays out of rotation (Vector's names): doubling from the first to the second."""

    retry_initial_backoff_secs: float = 1.0
    retry_max_duration_secs: float = 3600.0


class BulkConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    index: str = "logagent-%Y.%m.%d"
    action: Action = "index"


class ElasticsearchSinkConfig(BackendSinkOptions, tag="elasticsearch", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    endpoints: list[str]
    mode: Literal["bulk", "data_stream"] = "bulk"
    bulk: BulkConfig = msgspec.field(default_factory=BulkConfig)
    data_stream: DataStreamNames = msgspec.field(default_factory=DataStreamNames)
    distribution: DistributionConfig = msgspec.field(default_factory=DistributionConfig)

    @property
    def uris(self) -> list[str]:
        """``<endpoint>/_bulk`` of every endpoint, in order."""
        return [endpoint.rstrip("/") + "/_bulk" for endpoint in self.endpoints]

    @property
    def uri(self) -> str:
        return self.uris[0]

    def validate(self) -> None:
        if not self.endpoints:
            raise ValueError("endpoints: expected at least one endpoint URL")
        for index, uri in enumerate(self.uris):
            self.validate_http(uri, f"endpoints[{index}]")
        if len(set(self.uris)) != len(self.uris):
            raise ValueError("endpoints: the same endpoint is listed twice")
        if len({uri.split(":", 1)[0].lower() for uri in self.uris}) > 1:
            raise ValueError("endpoints: all endpoints must use the same scheme (http or https)")
        distribution = self.distribution
        if not distribution.retry_initial_backoff_secs > 0:
            raise ValueError("distribution.retry_initial_backoff_secs: must be greater than 0")
        if distribution.retry_max_duration_secs < distribution.retry_initial_backoff_secs:
            raise ValueError("distribution.retry_max_duration_secs: must be at least retry_initial_backoff_secs")
        for key, template in self.templates():
            _check_index_template(key, template)

    def templates(self) -> Iterator[tuple[str, Template]]:
        if self.mode == "data_stream":
            for name in ("type", "dataset", "namespace"):
                yield f"data_stream.{name}", compile_option(f"data_stream.{name}", getattr(self.data_stream, name))
        else:
            yield "bulk.index", compile_option("bulk.index", self.bulk.index)

    def index_template(self) -> Template:
        if self.mode == "data_stream":
            names = self.data_stream
            return compile_option("data_stream", f"{names.type}-{names.dataset}-{names.namespace}")
        return compile_option("bulk.index", self.bulk.index)


def _check_index_template(key: str, template: Template) -> None:
    literal = re.sub(r"\{\{.*?\}\}", "", template.text)
    upper = _UPPER_CASE_DIRECTIVES.search(literal)
    if upper:
        raise ValueError(f"{key}: strftime {upper.group(0)} gives upper-case letters, which index names cannot have")
    text = re.sub(r"%-?.", "", literal)
    if any(ch.isupper() for ch in text):
        raise ValueError(f"{key}: index names must be lower case, got {template.text!r}")
    bad = sorted(_BAD_INDEX_CHARS & set(text))
    if bad:
        raise ValueError(f"{key}: index names cannot contain {' '.join(repr(c) for c in bad)}")
    if template.text[:1] in ("-", "_", "+"):
        raise ValueError(f"{key}: index names cannot start with '-', '_' or '+'")
