"""Options shared by throttle, sample and dedupe: conditions in Vector's two forms, paths, numbers as Vector prints them.

Vector's ``exclude`` (and its other condition options) is either a VRL string
or a mapping ``{type: vrl, source: "..."}``; both compile to the same
condition here. :func:`excluded` answers a batch at once when it can (a
metadata-only condition is one memo lookup per file context), so records keep
their order when only some of them are excluded.
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec

from logagent.acks import Batch
from logagent.sinks.templates import FieldPath, TemplateError, compile_template, parse_field_path
from logagent.transforms.base import BatchCondition


class VrlCondition(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's explicit condition form: ``{type: vrl, source: '...'}``."""

    type: Literal["vrl"]
    source: str


#: what a config's condition option holds
ConditionOption = str | VrlCondition


def condition_source(option: ConditionOption) -> str:
    return option if isinstance(option, str) else option.source


def check_condition(key: str, option: ConditionOption | None) -> None:
    """Raise ``ValueError("<key>: <why>")`` if the condition does not compile."""
    if option is None:
        return
    from logagent.vrl.condition import VrlError, compile_condition  # noqa: PLC0415  (loading a config stays light)

    try:
        compile_condition(condition_source(option))
    except VrlError as exc:
        where = key if isinstance(option, str) else f"{key}.source"
        raise ValueError(f"{where}: {exc}") from None


def check_template(key: str, text: str | None) -> None:
    if text is None:
        return
    try:
        compile_template(text)
    except TemplateError as exc:
        raise ValueError(f"{key}: {exc}") from None


def check_path(key: str, text: str | None) -> FieldPath | None:
    """A field path option such as ``trace.id``; raises ``ValueError("<key>: ...")``."""
    if text is None:
        return None
    try:
        return parse_field_path(text)
    except TemplateError as exc:
        raise ValueError(f"{key}: {exc}") from None


def batch_condition(option: ConditionOption | None) -> BatchCondition | None:
    from logagent.vrl.condition import compile_condition  # noqa: PLC0415

    return None if option is None else BatchCondition(compile_condition(condition_source(option)))


def excluded(condition: BatchCondition | None, batch: Batch) -> bool | list[bool]:
    """Whether each record matches ``condition``: True or False for the whole batch, else one flag per record."""
    if condition is None or not batch.events:
        return False
    matched, unmatched = condition.split(batch)
    if not unmatched:
        return True
    if not matched:
        return False
    ids = set(map(id, matched))
    return [id(event) in ids for event in batch.events]


def number_text(value: float) -> str:
    """A number as Vector (Rust's ``Display``) prints it: ``10``, ``0.13``, ``1`` for 1.0, never an exponent."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value.is_integer():
        return str(int(value))
    text = repr(value)
    if "e" in text:  # Rust writes the digits out in full
        text = format(value, "f").rstrip("0").rstrip(".") if abs(value) >= 1 else _small(value)
    return text


def _small(value: float) -> str:
    digits, _, exponent = repr(abs(value)).partition("e")
    mantissa = digits.replace(".", "")
    zeros = -int(exponent) - 1
    return ("-" if value < 0 else "") + "0." + "0" * zeros + mantissa
