"""parse_tokens, as VRL's tokenizer: words, "quoted text" and [bracketed text]; "-" and empty are null.

Escapes (\\" in quotes, \\] in brackets, \\\\ in both) delimit but are kept as written.
"""

from __future__ import annotations

from .declare import ARR, B, always, function, req

_BLANKS = " \t"  # what VRL skips between tokens (a newline is part of a word)
_WORD_ENDS = frozenset(' \t["')


def _closing(value: str, at: int, close: str) -> int | None:
    """The index of ``close`` ending text that starts at ``at``; only it and a backslash may be escaped."""
    while at < len(value):
        char = value[at]
        if char == close:
            return at
        if char == "\\":
            if at + 1 >= len(value) or value[at + 1] not in (close, "\\"):
                return None
            at += 2
        else:
            at += 1
    return None


def _token(value: str, at: int) -> tuple[str, int]:
    """The token at ``at`` and where it ends; what cannot be read as one is the rest of the text."""
    char = value[at]
    if char in '["':
        close = _closing(value, at + 1, "]" if char == "[" else '"')
        if close is not None:
            return value[at + 1:close], close + 1
    elif char not in " \t":
        end = at
        while end < len(value) and value[end] not in _WORD_ENDS:
            end += 1
        return value[at:end], end
    return value[at:], len(value)


def parse_tokens(value: str) -> list[str | None]:
    tokens: list[str | None] = []
    at = 0
    while at < len(value):
        token, at = _token(value, at)
        tokens.append(None if token in ("", "-") else token)
        while at < len(value) and value[at] in _BLANKS:
            at += 1
    return tokens


FUNCTIONS = [function("parse_tokens", (req("value", B),), always(ARR), parse_tokens)]
