"""``sample``'s ``ratio_field`` / ``rate_field``: the rate read from each record, as Vector's ``sample`` does.

Vector's rules, reproduced:

- ``ratio_field``: an integer or float, or a string Rust parses as a float,
  valid in (0, 1]; ``rate_field``: an integer, or a string of digits (an
  optional ``+``), above 0; a float is refused. Anything else, or no field,
  falls back to the static ``rate`` / ``ratio`` (its counters, its label).
- A record with a valid value is decided on a counter of its own per
  ``group_by`` value (apart from the static one): the SeaHash of the group
  (as Rust hashes an ``Option<&str>``: 8 bytes of discriminant, the text,
  0xFF) followed by the counter's value before it (8 bytes, little-endian) is
  kept when at most ``ratio`` of 2^64, or a multiple of ``rate``.
- The record's ``sample_rate_key`` then holds its own value as text (``0.25``,
  ``1``, ``10``).
"""

from __future__ import annotations

import re
from typing import Any

from logagent.transforms.options import number_text
from logagent.transforms.seahash import seahash

#: Rust's ``f64::from_str`` (``inf``, ``infinity`` and ``nan`` in any case)
_RUST_FLOAT = re.compile(r"[+-]?(?:(?i:inf|infinity|nan)|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
#: Rust's ``u64::from_str``
_RUST_UINT = re.compile(r"\+?[0-9]+")
_I64_MAX = (1 << 63) - 1
_U64 = 1 << 64


def record_ratio(value: Any) -> float | None:
    """The ratio a ``ratio_field`` value stands for, or None (fall back to the static settings)."""
    if type(value) is bool:
        return None
    if isinstance(value, int):
        ratio = float(value) if -_I64_MAX - 1 <= value <= _I64_MAX else None
    elif isinstance(value, float):
        ratio = value
    elif isinstance(value, str) and _RUST_FLOAT.fullmatch(value):
        ratio = float(value)
    else:
        return None
    return ratio if ratio is not None and 0.0 < ratio <= 1.0 else None


def record_rate(value: Any) -> int | None:
    """The rate a ``rate_field`` value stands for, or None (fall back to the static settings)."""
    if type(value) is bool:
        return None
    if isinstance(value, int):
        rate = value if value <= _I64_MAX else None
    elif isinstance(value, str) and _RUST_UINT.fullmatch(value):
        rate = int(value)
    else:
        return None
    return rate if rate is not None and 0 < rate < _U64 else None


class DynamicSampler:
    """The per-record decisions of one ``sample`` transform with ``ratio_field`` or ``rate_field``."""

    def __init__(self, ratio: bool) -> None:
        self.ratio = ratio
        #: records decided by their own value, per group
        self._counters: dict[str | None, int] = {}

    def parse(self, value: Any) -> tuple[float | int, str] | None:
        """The record's ratio or rate and its label, or None."""
        number = record_ratio(value) if self.ratio else record_rate(value)
        return None if number is None else (number, number_text(number))

    def keep(self, number: float | int, group: str | None) -> bool:
        seen = self._counters.get(group, 0)
        self._counters[group] = seen + 1
        digest = seahash(_group_bytes(group) + seen.to_bytes(8, "little"))
        if self.ratio:
            return digest <= min(int(number * 2.0**64), _U64 - 1)
        return digest % number == 0  # type: ignore[operator]


def _group_bytes(group: str | None) -> bytes:
    """What Rust's ``Hash`` writes for an ``Option<&str>``: the discriminant (isize), then the text and 0xFF."""
    if group is None:
        return bytes(8)
    return b"\x01" + bytes(7) + group.encode("utf-8", "surrogatepass") + b"\xff"
