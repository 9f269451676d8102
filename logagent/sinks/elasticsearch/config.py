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
from typing import Any, Literal
from urllib.parse import urlencode

import msgspec

from logagent.sinks.common_config import FieldsOptions, check_fields
from logagent.sinks.http.backend_config import BackendSinkOptions, compile_option
from logagent.sinks.templates import FieldPath, Template, TemplateError, parse_field_path

Action = Literal["index", "create"]

#: strftime directives whose output has upper-case letters, which index names cannot have
_UPPER_CASE_DIRECTIVES = re.compile(r"%-?[aAbBchpxXZ]")
_BAD_INDEX_CHARS = set('\\/*?"<>| ,#:')


class DataStreamNames(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``mode: data_stream`` writes to ``<type>-<dataset>-<namespace>`` (templates each)."""

    type: str = "logs"
    dataset: str = "generic"
    namespace: str = "default"
    #: Vector's: route by the record's own ``data_stream.*`` fields (refused when true, see validate)
    auto_routing: bool = False
    #: Vector's: write ``data_stream.*`` into each document (refused when true, see validate)
    sync_fields: bool = False


class QueryValue(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``query.<name>: {type: string | vrl, value}``; only ``string`` here."""

    value: str
    type: Literal["string", "vrl"] = "string"


class DistributionConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """How long an unhealthy endpoint stays out of rotation (Vector's names): doubling from the first to the second."""

    retry_initial_backoff_secs: float = 1.0
    retry_max_duration_secs: float = 3600.0


class BulkConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    index: str = "logagent-%Y.%m.%d"
    action: Action = "index"
    #: Vector's external versioning (refused, see validate)
    version: str | None = None
    version_type: Literal["internal", "external", "external_gte"] = "internal"
    #: Vector's index for records whose index template does not render (refused, see validate)
    template_fallback_index: str | None = None


class ElasticsearchSinkConfig(BackendSinkOptions, tag="elasticsearch", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    endpoints: list[str] = []
    #: Vector's older single endpoint (the same as ``endpoints: [<it>]``)
    endpoint: str | None = None
    mode: Literal["bulk", "data_stream"] = "bulk"
    bulk: BulkConfig = msgspec.field(default_factory=BulkConfig)
    data_stream: DataStreamNames = msgspec.field(default_factory=DataStreamNames)
    distribution: DistributionConfig = msgspec.field(default_factory=DistributionConfig)
    #: ``auto`` asks the cluster (``GET /``) at start; ``v6`` sends ``_type`` (``doc_type``)
    api_version: Literal["auto", "v6", "v7", "v8"] = "auto"
    doc_type: str = "_doc"
    #: Vector's older switch: never send ``_type`` (what v7 and v8 do anyway)
    suppress_type_name: bool = False
    #: URL parameters of every ``_bulk`` request (VictoriaLogs' ``_msg_field``, OpenSearch's ...)
    query: dict[str, str | list[str] | QueryValue] = {}
    #: the record field whose value becomes the document's ``_id`` (removed from the document)
    id_key: str | None = None
    #: the ingest pipeline (``?pipeline=``)
    pipeline: str | None = None
    encoding: FieldsOptions = msgspec.field(default_factory=FieldsOptions)
    #: Vector's: also retry the failed items of a partial success; we always retry those that can succeed
    request_retry_partial: bool = False
    opensearch_service_type: Literal["managed", "serverless"] = "managed"
    #: Vector's options for metric events: accepted, no metric event reaches this sink
    metrics: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.endpoint is not None and not self.endpoints:
            self.endpoints = [self.endpoint]

    def query_string(self) -> str:
        """The URL parameters of ``_bulk`` requests, encoded (empty without any)."""
        pairs: list[tuple[str, str]] = []
        for name, value in self.query.items():
            if isinstance(value, QueryValue):
                pairs.append((name, value.value))
            elif isinstance(value, list):
                pairs += [(name, item) for item in value]
            else:
                pairs.append((name, value))
        if self.pipeline:
            pairs.append(("pipeline", self.pipeline))
        return urlencode(pairs)

    @property
    def uris(self) -> list[str]:
        """``<endpoint>/_bulk`` (with ``query`` and ``pipeline`` as parameters) of every endpoint, in order."""
        query = self.query_string()
        suffix = "/_bulk?" + query if query else "/_bulk"
        return [endpoint.rstrip("/") + suffix for endpoint in self.endpoints]

    def id_path(self) -> FieldPath | None:
        return parse_field_path(self.id_key) if self.id_key else None

    def doc_type_for(self, major_version: int) -> str | None:
        """The ``_type`` of action lines for a cluster of this major version (None: none sent), as Vector decides."""
        if self.suppress_type_name or major_version >= 7:
            return None
        return self.doc_type

    @property
    def uri(self) -> str:
        return self.uris[0]

    def validate(self) -> None:
        if not self.endpoints:
            raise ValueError("endpoints: missing required key; give endpoints (a list of URLs) or endpoint")
        if self.endpoint is not None and self.endpoints != [self.endpoint]:
            raise ValueError("endpoint: set endpoint or endpoints, not both")
        self._validate_vector_keys()
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

    def _validate_vector_keys(self) -> None:
        check_fields(self.encoding)
        for name, value in self.query.items():
            if isinstance(value, QueryValue) and value.type == "vrl":
                raise ValueError(f"query.{name}: vrl query values are not supported; give the value itself")
        if self.id_key is not None:
            try:
                parse_field_path(self.id_key)
            except TemplateError:
                raise ValueError(f"id_key: not a field path, got {self.id_key!r}") from None
        if self.bulk.version is not None or self.bulk.version_type != "internal":
            raise ValueError("bulk.version: external document versioning is not implemented; "
                             "documents are written with Elasticsearch's internal versioning")
        if self.bulk.template_fallback_index is not None:
            raise ValueError("bulk.template_fallback_index: not implemented: a record whose index does not "
                             "render goes to the dead-letter file with the reason")
        if self.data_stream.auto_routing or self.data_stream.sync_fields:
            key = "auto_routing" if self.data_stream.auto_routing else "sync_fields"
            raise ValueError(f"data_stream.{key}: not implemented: documents go to the data stream named by "
                             "data_stream.type/dataset/namespace and are not changed; set it to false")
        if self.opensearch_service_type == "serverless":
            raise ValueError("opensearch_service_type: serverless needs AWS request signing, which is not implemented")

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
