"""Configuration of the ``loki`` sink (light: no HTTP machinery, see :mod:`logagent.sinks.http.backend_config`).

Options are Vector's: ``endpoint`` (the base URL; the sink posts to
``<endpoint><path>``, ``path`` default ``/loki/api/v1/push``), ``labels`` and
``structured_metadata`` (maps of templates), ``tenant_id`` (sent as
``X-Scope-OrgID``), ``encoding.codec: json | text``, ``out_of_order_action:
accept | rewrite_timestamp``; ``max_label_sets`` is ours (see
:class:`~logagent.sinks.loki.push.LabelSetGuard`). Plus the ``http`` sink's
option groups.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

import msgspec

from logagent.sinks.common_config import CodecEncoding, check_fields
from logagent.sinks.http.backend_config import BackendSinkOptions, compile_option
from logagent.sinks.loki.labels import check_expansion, is_expansion
from logagent.sinks.templates import FieldPath, Template

Codec = Literal["json", "text"]
OutOfOrderAction = Literal["accept", "rewrite_timestamp", "drop"]

_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class LokiEncoding(CodecEncoding, forbid_unknown_fields=True, kw_only=True):
    """Vector's encoding mapping; the line is the record as JSON (``json``) or its message (``text``)."""

    codec: str = "json"


class LokiSinkConfig(BackendSinkOptions, tag="loki", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    endpoint: str
    path: str = "/loki/api/v1/push"
    labels: dict[str, str] = {}
    structured_metadata: dict[str, str] = {}
    tenant_id: str | None = None
    #: ours: ``json`` or ``text``; or Vector's mapping
    encoding: Codec | LokiEncoding = msgspec.field(default_factory=LokiEncoding)
    out_of_order_action: OutOfOrderAction = "accept"
    #: remove the fields the labels (or the structured metadata) read from the line
    remove_label_fields: bool = False
    remove_structured_metadata_fields: bool = False
    #: remove ``timestamp`` from the line (it is the entry's time); Vector's default is true, ours false
    remove_timestamp: bool = False
    #: distinct label sets at most (seen in the last hour); more get the overflow label set
    max_label_sets: int = 1000

    @property
    def uri(self) -> str:
        return self.endpoint.rstrip("/") + self.path

    def headers(self) -> dict[str, str]:
        return {"X-Scope-OrgID": self.tenant_id} if self.tenant_id else {}

    @property
    def codec(self) -> Codec:
        encoding = self.encoding
        return encoding if isinstance(encoding, str) else encoding.checked_codec(("json", "text"))  # type: ignore[return-value]

    @property
    def fields_options(self) -> LokiEncoding | None:
        return None if isinstance(self.encoding, str) else self.encoding

    def removed_paths(self) -> list[FieldPath]:
        """What ``remove_label_fields``, ``remove_structured_metadata_fields`` and ``remove_timestamp`` take off the line."""
        paths: list[FieldPath] = []
        for group, wanted in (("labels", self.remove_label_fields), ("structured_metadata", self.remove_structured_metadata_fields)):
            if wanted:
                for template in self.compiled(group).values():
                    paths += template.paths
        if self.remove_timestamp:
            paths.append(("timestamp",))
        return paths

    def validate(self) -> None:
        self.codec  # noqa: B018 - raises ValueError for a codec the sink cannot write
        if self.fields_options is not None:
            check_fields(self.fields_options)
            if self.fields_options.json.pretty:
                raise ValueError("encoding.json.pretty: a Loki line is one line")
        if not self.path.startswith("/"):
            raise ValueError(f"path: must start with '/', got {self.path!r}")
        self.validate_http(self.uri, "endpoint")
        for name, text in self.labels.items():
            if is_expansion(name):
                check_expansion(name, compile_option(f"labels.{name}", text))
            elif not _LABEL_NAME.fullmatch(name):
                raise ValueError(f"labels.{name}: not a Loki label name (letters, digits and _, not starting with a digit)")
        if self.tenant_id is not None:
            if "{{" in self.tenant_id:
                raise ValueError("tenant_id: templates are not supported here; give the tenant itself")
            if not self.tenant_id.strip():
                raise ValueError("tenant_id: is empty")
            if any(name.lower() == "x-scope-orgid" for name in self.request.headers):
                raise ValueError("tenant_id: conflicts with request.headers.X-Scope-OrgID; use one of them")
        if self.max_label_sets < 1:
            raise ValueError("max_label_sets: must be at least 1")
        for _ in self.templates():
            pass

    def templates(self) -> Iterator[tuple[str, Template]]:
        for group in ("labels", "structured_metadata"):
            for name, text in getattr(self, group).items():
                yield f"{group}.{name}", compile_option(f"{group}.{name}", text)

    def compiled(self, group: str) -> dict[str, Template]:
        return {name: compile_option(f"{group}.{name}", text) for name, text in getattr(self, group).items()}
