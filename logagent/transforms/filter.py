"""The filter transform: keeps the records for which its condition is true."""

from __future__ import annotations

import msgspec

from logagent.acks import Batch
from logagent.conditions import ConditionSyntaxError, compile_condition
from logagent.transforms.base import DEFAULT_OUTPUT, BatchCondition, Transform, estimate_bytes


class FilterConfig(msgspec.Struct, tag="filter", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    condition: str

    def validate(self) -> None:
        try:
            compile_condition(self.condition)
        except ConditionSyntaxError as exc:
            raise ValueError(f"condition: {exc}") from None


class FilterTransform(Transform):
    kind = "filter"

    def __init__(self, component_id: str, config: FilterConfig) -> None:
        super().__init__(component_id)
        self.condition = compile_condition(config.condition)
        self._batch_condition = BatchCondition(self.condition)
        self.events_dropped = 0

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        total = len(batch.events)
        self.events_in += total
        kept, dropped = self._batch_condition.split(batch)
        self.events_dropped += len(dropped)
        if not kept:
            batch.release()
            return []
        self.events_out += len(kept)
        if not dropped:
            return [(DEFAULT_OUTPUT, batch)]
        return [(DEFAULT_OUTPUT, Batch(kept, batch.acks, estimate_bytes(batch, len(kept)), batch.ctx,
                                       batch.ctx_with_fields))]
