"""Regex literals ``r'...'``: compiled once into the standard library's regex values."""

from __future__ import annotations

from typing import Any

from logagent.user_regex import RegexError
from logagent.vrl.stdlib.regex import compile_vrl_regex


def compile_regex_literal(pattern: str) -> Any:
    """The regex value of a literal; raises ValueError with the reason for a bad pattern."""
    try:
        return compile_vrl_regex(pattern)
    except RegexError as exc:
        raise ValueError(exc.reason) from None
