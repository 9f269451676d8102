"""The ``elasticsearch`` sink: the ``_bulk`` API of Elasticsearch and OpenSearch.

Options are Vector's: ``endpoints`` (base URLs; the sink posts to
``<endpoint>/_bulk``), ``mode: bulk | data_stream``, ``bulk.index`` (a
template, default ``logagent-%Y.%m.%d``), ``bulk.action: index | create``,
``data_stream.type/dataset/namespace``, plus the ``http`` sink's option groups.
Per-item results are read by :class:`~logagent.sinks.elasticsearch_bulk.BulkProtocol`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Literal

import msgspec

from logagent.sinks.backend import BackendSink, BackendSinkOptions, compile_option
from logagent.sinks.elasticsearch_bulk import Action, BulkProtocol, DataStreamNames
from logagent.sinks.templates import Template

#: strftime directives whose output has upper-case letters, which index names cannot have
_UPPER_CASE_DIRECTIVES = re.compile(r"%-?[aAbBchpxXZ]")
_BAD_INDEX_CHARS = set('\\/*?"<>| ,#:')


class BulkConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    index: str = "logagent-%Y.%m.%d"
    action: Action = "index"


class ElasticsearchSinkConfig(BackendSinkOptions, tag="elasticsearch", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    endpoints: list[str]
    mode: Literal["bulk", "data_stream"] = "bulk"
    bulk: BulkConfig = msgspec.field(default_factory=BulkConfig)
    data_stream: DataStreamNames = msgspec.field(default_factory=DataStreamNames)

    @property
    def uri(self) -> str:
        return self.endpoints[0].rstrip("/") + "/_bulk"

    def validate(self) -> None:
        if not self.endpoints:
            raise ValueError("endpoints: expected at least one endpoint URL")
        if len(self.endpoints) > 1:
            raise ValueError("endpoints: only one endpoint is supported; put a load balancer in front of the nodes")
        self.validate_http(self.uri, "endpoints[0]")
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


class ElasticsearchSink(BackendSink):
    kind = "elasticsearch"

    def __init__(self, component_id: str, config: ElasticsearchSinkConfig, *, data_dir: str | os.PathLike[str] | None = None) -> None:
        config.validate()
        self.backend_config = config
        action: Action = "create" if config.mode == "data_stream" else config.bulk.action
        protocol = BulkProtocol(config.index_template(), action, data_stream=config.mode == "data_stream")
        super().__init__(component_id, config.http_config(config.uri), protocol, data_dir=data_dir)
