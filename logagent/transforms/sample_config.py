"""The ``sample`` transform's config (Vector's options), apart from its code so loading a config stays light."""

from __future__ import annotations

import msgspec

from logagent.event import PER_LINE_KEYS
from logagent.transforms.options import ConditionOption, check_condition, check_path, check_template


class SampleConfig(msgspec.Struct, tag="sample", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    #: keep 1 record in ``rate`` (the first, then every rate-th)
    rate: int | None = None
    #: keep this share of the records, 0 < ratio <= 1
    ratio: float | None = None
    #: a field path: a record's own ratio, valid in (0, 1] (else the static settings apply)
    ratio_field: str | None = None
    #: a field path: a record's own rate, a whole number above 0 (else the static settings apply)
    rate_field: str | None = None
    #: a field path: records whose values hash alike are kept or dropped together
    key_field: str | None = None
    #: a template: each rendered value is sampled on its own counter
    group_by: str | None = None
    #: records matching this condition are always kept
    exclude: ConditionOption | None = None
    #: where a kept record gets the rate as text ("10", "0.13"); "" adds nothing
    sample_rate_key: str = "sample_rate"

    def validate(self) -> None:
        if self.rate is not None and self.ratio is not None:
            raise ValueError("rate: give either rate or ratio, not both")
        if self.rate is None and self.ratio is None:
            raise ValueError("rate: exactly one of rate or ratio is required")
        if self.rate is not None and (isinstance(self.rate, bool) or not 0 < self.rate < 1 << 64):
            raise ValueError(f"rate: must be a whole number above 0, got {self.rate}")
        if self.ratio is not None and (isinstance(self.ratio, bool) or not 0 < self.ratio <= 1):
            raise ValueError(f"ratio: must be above 0 and at most 1, got {self.ratio}")
        if self.ratio_field is not None and self.rate_field is not None:
            raise ValueError("ratio_field: give either ratio_field or rate_field, not both")
        if self.key_field is not None and (self.ratio_field is not None or self.rate_field is not None):
            raise ValueError("key_field: cannot be combined with ratio_field or rate_field (a record's own rate "
                             "would break the key's all-or-nothing sampling)")
        check_path("ratio_field", self.ratio_field)
        check_path("rate_field", self.rate_field)
        check_path("key_field", self.key_field)
        check_template("group_by", self.group_by)
        check_condition("exclude", self.exclude)
        path = check_path("sample_rate_key", self.sample_rate_key or None)
        if path is not None and path[0] in PER_LINE_KEYS:
            raise ValueError(f"sample_rate_key: {path[0]!r} is the record's own line field; choose another key")
