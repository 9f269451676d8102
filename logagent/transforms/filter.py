"""The filter transform: keeps the records for which its condition is true.

A condition is VRL text or one of Vector's mapping forms (``condition_text``),
compiled by ``logagent.vrl.condition`` (imported when first needed: loading a
config stays light).
"""

from __future__ import annotations

from typing import Any

import msgspec

from logagent.acks import Batch
from logagent.transforms.base import DEFAULT_OUTPUT, BatchCondition, Transform, estimate_bytes


#: Vector's condition types with a constant answer here: every record is a log
_CONSTANT_CONDITIONS = {"is_log": "true", "is_metric": "false", "is_trace": "false"}
#: Vector's condition as VRL text, or as a mapping ``{type: vrl, source: ...}``, ``{type: is_log}`` ...
VectorCondition = str | dict[str, Any]


def condition_text(value: VectorCondition) -> str:
    """The VRL text of a condition in any of Vector's forms; raises ``ValueError("<key>: <why>")``."""
    if isinstance(value, str):
        return value
    kind = value.get("type")
    allowed = {"type", "source"} if kind == "vrl" else {"type"}
    for key in value:
        if key not in allowed:
            raise ValueError(f"{key}: unknown key for a condition of type {kind}; expected {', '.join(sorted(allowed))}")
    if kind == "vrl":
        source = value.get("source")
        if not isinstance(source, str):
            raise ValueError("source: expected the condition's VRL text")
        return source
    if kind in _CONSTANT_CONDITIONS:
        return _CONSTANT_CONDITIONS[kind]
    shown = f'"{kind}"' if isinstance(kind, str) else "nothing"
    raise ValueError(f"type: expected one of vrl, {', '.join(_CONSTANT_CONDITIONS)}, got {shown}")


def check_condition_option(key: str, value: VectorCondition) -> str:
    """The condition's text, or ``ValueError("<key>[.<sub-key>]: <why>")``."""
    try:
        text = condition_text(value)
    except ValueError as exc:
        raise ValueError(f"{key}.{exc}") from None
    from logagent.vrl.condition import VrlError, compile_condition  # noqa: PLC0415

    try:
        compile_condition(text)
    except VrlError as exc:
        raise ValueError(f"{key if isinstance(value, str) else key + '.source'}: {exc}") from None
    return text


class FilterConfig(msgspec.Struct, tag="filter", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    condition: VectorCondition

    def validate(self) -> None:
        check_condition_option("condition", self.condition)


class FilterTransform(Transform):
    kind = "filter"

    def __init__(self, component_id: str, config: FilterConfig) -> None:
        from logagent.vrl.condition import compile_condition  # noqa: PLC0415

        super().__init__(component_id)
        self.condition = compile_condition(condition_text(config.condition))
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
