"""Patterns without repetition, run on Python's ``re`` for ASCII texts: a faster way to the same match.

RE2 (``regex.py``) is what keeps any pattern linear in the text; through its
binding a search still costs about three times what ``re`` costs on a short
line. A pattern with no repetition at all (no ``*``, ``+``, ``?``, ``{n,m}``)
tries a bounded number of paths at each position whatever the text, so
``re``'s backtracking cannot blow up on it; the paths are bounded here too
(alternatives multiplied over the groups, at most :data:`MAX_PATHS`). On an
ASCII text, with ``re.ASCII``, such a pattern means what it means in Rust's
crate: ``\\s \\d \\w \\b`` restricted to ASCII are the ASCII classes, ``.``
is any character but ``\\n``, alternation is leftmost-first in both, ``$``
(no ``m`` flag) is the end of the text (``\\Z`` here). Anything else (flags,
Unicode classes, nested classes, a non-ASCII character) gives None: the
pattern stays on RE2 only, and so does every non-ASCII text.
"""

from __future__ import annotations

import re

#: at most this many ways through the pattern from one position
MAX_PATHS = 64

_CLASS_ESCAPES = frozenset("sdwSDW")
_ESCAPES = _CLASS_ESCAPES | frozenset("bB")
_PUNCTUATION = frozenset(".\\[](){}|^$*+?/-#&~ \"'!,:;<=>@%`")
_CONTROL = frozenset("tnr")
_REPETITION = frozenset("*+?{")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def bounded_pattern(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` (Rust syntax) compiled by ``re`` when it has no repetition and bounded paths; else None."""
    if not pattern.isascii():
        return None
    try:
        translated = _translate(pattern)
    except _Refused:
        return None
    try:
        return re.compile(translated, re.ASCII)
    except re.error:
        return None


class _Refused(Exception):
    pass


def _translate(pattern: str) -> str:
    out: list[str] = []
    alternatives = [1]  # per open group (and the whole pattern): its number of alternatives
    paths = 1
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char in _REPETITION:
            raise _Refused
        if char == "\\":
            out.append(_escape(pattern, i + 1, False))
            i += 2
            continue
        if char == "[":
            end = _class(pattern, i, out)
            i = end
            continue
        if char == "(":
            i = _open_group(pattern, i, out)
            alternatives.append(1)
            continue
        if char == ")":
            if len(alternatives) == 1:
                raise _Refused
            paths *= alternatives.pop()
        elif char == "|":
            alternatives[-1] += 1
        out.append("\\Z" if char == "$" else char)
        i += 1
    if len(alternatives) != 1:
        raise _Refused
    if paths * alternatives[0] > MAX_PATHS:
        raise _Refused
    return "".join(out)


def _escape(pattern: str, i: int, in_class: bool) -> str:
    if i >= len(pattern):
        raise _Refused
    char = pattern[i]
    if char in (_CLASS_ESCAPES if in_class else _ESCAPES) or char in _CONTROL or char in _PUNCTUATION:
        return "\\" + char
    raise _Refused


def _open_group(pattern: str, i: int, out: list[str]) -> int:
    if not pattern.startswith("(?", i):
        out.append("(")
        return i + 1
    if pattern.startswith("(?:", i):
        out.append("(?:")
        return i + 3
    start = i + 3 if pattern.startswith("(?<", i) else i + 4 if pattern.startswith("(?P<", i) else -1
    if start < 0:
        raise _Refused  # flags, look-around
    end = pattern.find(">", start)
    name = pattern[start:end] if end > 0 else ""
    if not _NAME.fullmatch(name):
        raise _Refused
    out.append(f"(?P<{name}>")
    return end + 1


def _class(pattern: str, i: int, out: list[str]) -> int:
    """Copy the class starting at ``i`` (``[``); the index after its ``]``."""
    j = i + 1
    parts = ["["]
    if pattern.startswith("^", j):
        parts.append("^")
        j += 1
    first = True
    while j < len(pattern):
        char = pattern[j]
        if char == "]" and not first:
            parts.append("]")
            out.append("".join(parts))
            return j + 1
        if char == "[" or pattern.startswith(("&&", "--", "~~", "||"), j):
            raise _Refused  # nested classes and set operations: Rust's, not re's
        if char == "\\":
            parts.append(_escape(pattern, j + 1, True))
            j += 2
        else:
            parts.append("\\]" if char == "]" else char)
            j += 1
        first = False
    raise _Refused
