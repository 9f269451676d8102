"""Regex literals ``r'...'``: compiled once, through the standard library's regex values when present."""

from __future__ import annotations

from typing import Any

from logagent.conditions.regex import RegexError

try:  # h22b's capture-capable VRL regex
    from logagent.vrl.stdlib.regex import compile_vrl_regex as _compile
except ImportError:  # pragma: no cover - until the standard library's regex exists
    from logagent.conditions.regex import compile_regex as _compile


def compile_regex_literal(pattern: str) -> Any:
    """The regex value of a literal; raises ValueError with the reason for a bad pattern."""
    try:
        return _compile(pattern)
    except RegexError as exc:
        raise ValueError(exc.reason) from None
