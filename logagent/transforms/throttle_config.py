"""The ``throttle`` transform's config (Vector's options), apart from its code so loading a config stays light."""

from __future__ import annotations

import msgspec

from logagent.transforms.options import ConditionOption, check_condition, check_template

#: u32 in Vector
MAX_THRESHOLD = (1 << 32) - 1


class ThrottleInternalMetrics(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    #: also count discarded records per key (``logagent_component_discarded_events_by_key``);
    #: off by default because keys are many (at most ``throttle.MAX_METRIC_KEYS`` are kept apart)
    emit_events_discarded_per_key: bool = False


class ThrottleConfig(msgspec.Struct, tag="throttle", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    #: records allowed per key per ``window_secs`` (also the burst)
    threshold: int
    window_secs: float
    #: a template: records rendering the same text share a budget (a missing field: the one unnamed bucket)
    key_field: str | None = None
    #: records matching this condition pass and use no budget
    exclude: ConditionOption | None = None
    internal_metrics: ThrottleInternalMetrics = msgspec.field(default_factory=ThrottleInternalMetrics)

    def validate(self) -> None:
        if isinstance(self.threshold, bool) or not 0 < self.threshold <= MAX_THRESHOLD:
            raise ValueError(f"threshold: must be a whole number from 1 to {MAX_THRESHOLD}, got {self.threshold}")
        if isinstance(self.window_secs, bool) or not self.window_secs > 0 or self.window_secs == float("inf"):
            raise ValueError(f"window_secs: must be a number of seconds above 0, got {self.window_secs}")
        check_template("key_field", self.key_field)
        check_condition("exclude", self.exclude)
