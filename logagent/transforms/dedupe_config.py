"""The ``dedupe`` transform's config (Vector's options), apart from its code so loading a config stays light."""

from __future__ import annotations

import msgspec

from logagent.transforms.options import check_path

#: Vector's default ``fields.match``: its log schema's message, host and timestamp keys
DEFAULT_MATCH = ("message", "host", "timestamp")


class DedupeFields(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    #: compare only these fields
    match: list[str] | None = None
    #: compare every field except these (exact leaf paths, as in Vector)
    ignore: list[str] | None = None


class DedupeCache(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    #: how many recent records (their compared fields) are remembered
    num_events: int = 5000


class DedupeTimeSettings(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    #: a remembered record older than this no longer makes a match a duplicate
    max_age_ms: int
    #: a dropped duplicate makes its remembered record young again
    refresh_on_drop: bool = False


class DedupeConfig(msgspec.Struct, tag="dedupe", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    fields: DedupeFields | None = None
    cache: DedupeCache = msgspec.field(default_factory=DedupeCache)
    time_settings: DedupeTimeSettings | None = None

    def validate(self) -> None:
        if self.fields is not None:
            if (self.fields.match is None) == (self.fields.ignore is None):
                raise ValueError("fields: give exactly one of match or ignore")
            name, paths = ("match", self.fields.match) if self.fields.match is not None else ("ignore", self.fields.ignore)
            for index, path in enumerate(paths or ()):
                check_path(f"fields.{name}[{index}]", path)
        if isinstance(self.cache.num_events, bool) or self.cache.num_events < 1:
            raise ValueError(f"cache.num_events: must be a whole number above 0, got {self.cache.num_events}")
        if self.time_settings is not None and self.time_settings.max_age_ms < 0:
            raise ValueError(f"time_settings.max_age_ms: must be 0 or more, got {self.time_settings.max_age_ms}")
