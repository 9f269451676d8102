"""VRL's regex values: Rust ``regex`` syntax on RE2, with captures, find-all, replace and split.

``compile_vrl_regex`` is what a regex literal (``r'...'``) and ``to_regex``
compile to; the pattern is rewritten for RE2 by ``logagent.user_regex`` (the one
way a config's regex is compiled), so a bad pattern raises its ``RegexError``.
Offsets from RE2 are UTF-8 byte offsets: an ASCII text is sliced directly,
any other through its encoding.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import functools
from typing import Any

from ...user_regex import RegexError, compile_rust_pattern, required_literal
from ...user_regex.rust_syntax import _Rewriter
from .regex_bounded import bounded_pattern

__all__ = ["LazyRegex", "Regex", "RegexError", "compile_vrl_regex"]



@functools.cache
def _binding() -> tuple[Any, Any, Callable[[Any], dict[str, int]]]:
    """(UNANCHORED, options, group_names) of the RE2 binding, imported on the first regex (not at start)."""
    from ...user_regex import re2_binding  # noqa: PLC0415

    options = re2_binding.Options()
    options.log_errors = False
    return re2_binding.UNANCHORED, options, re2_binding.group_names
# Rust's `$name`, `${name}`, `$$` in a replacement
_REPLACEMENT = re.compile(r"\$(?:\$|\{([^}]*)\}|([_0-9A-Za-z]+))")

Spans = list[tuple[int, int]]


class Regex:
    """A compiled VRL regex; equal to another with the same pattern text."""

    is_vrl_regex = True
    __slots__ = ("pattern", "group_count", "names", "_match", "_search", "_named", "_required")

    def __init__(self, pattern: str) -> None:
        #: the pattern as written
        self.pattern = pattern
        bounded = bounded_pattern(pattern)
        if bounded is not None:
            # Rust's syntax checks without RE2 (which takes every bounded pattern they pass: test_vrl_regex_lazy);
            # RE2 (4 MiB) loads when a search needs it (a text that is not ASCII, find-all, replace, split)
            _Rewriter(pattern).run()
            self.group_count = bounded.groups
            self.names = dict(sorted(bounded.groupindex.items()))  # in RE2's order (group_names: by name)
            self._match = self._first_match
        else:
            self._compile()
        #: ``re``'s search for ASCII texts, when the pattern has no repetition (``regex_bounded.py``)
        self._search: Callable[[str], re.Match[str] | None] | None = bounded.search if bounded is not None else None
        #: whether ``re``'s groupdict() lists the names in the order of ``names``
        self._named = bounded is not None and list(bounded.groupindex) == list(self.names)
        #: text every match contains (``status=5`` of ``status=5\d\d``): a text without it does not match
        self._required = required_literal(pattern) or ""

    def _compile(self) -> None:
        unanchored, options, group_names = _binding()
        compiled = compile_rust_pattern(self.pattern, options)
        #: capture groups, not counting group 0
        self.group_count: int = compiled.NumberOfCapturingGroups()
        #: group name -> index
        self.names: dict[str, int] = group_names(compiled)
        #: RE2's unanchored search: (data, start, end) -> spans
        self._match: Callable[..., Spans] = functools.partial(compiled.Match, unanchored)

    def _first_match(self, data: bytes, start: int, end: int) -> Spans:
        """RE2's search, compiled on first use (a bounded pattern)."""
        self._compile()
        return self._match(data, start, end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Regex) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(("regex", self.pattern))

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"

    def is_match(self, text: str) -> bool:
        return matches(text, self)

    def captures(self, text: str) -> list[str | None] | None:
        """The first match's groups (0 is the whole match; None for a group that took no part)."""
        if self._search is not None and text.isascii():
            found = self._search(text)
            return None if found is None else [found.group(0), *found.groups()]
        if text.isascii():
            data = text.encode("ascii")
            spans = self._match(data, 0, len(data))
            if spans[0][0] < 0:
                return None
            return [text[a:b] if a >= 0 else None for a, b in spans]
        data = text.encode("utf-8", "surrogatepass")
        spans = self._match(data, 0, len(data))
        if spans[0][0] < 0:
            return None
        return [data[a:b].decode("utf-8", "surrogatepass") if a >= 0 else None for a, b in spans]

    def named_captures(self, text: str) -> dict[str, str | None] | None:
        """The first match's named groups (None without a match), in the order of ``names``."""
        if self._named and text.isascii():
            found = self._search(text)  # type: ignore[misc]
            return None if found is None else found.groupdict()
        groups = self.captures(text)
        return None if groups is None else {name: groups[index] for name, index in self.names.items()}

    def iter_spans(self, data: bytes) -> list[Spans]:
        """Every match of the encoded text, left to right, as Rust's ``find_iter`` reports them.

        An empty match right where the previous match ended is not reported
        (Rust's rule); after an empty match the search moves on one character.
        """
        found: list[Spans] = []
        match, pos, end, last_end = self._match, 0, len(data), -1
        while pos <= end:
            spans = match(data, pos, end)
            start, stop = spans[0]
            if start < 0:
                break
            if start == stop:
                if stop != last_end:
                    found.append(spans)
                pos = stop + _char_len(data, stop)
            else:
                found.append(spans)
                pos = stop
            last_end = stop
        return found

    def find_all(self, text: str) -> list[list[str | None]]:
        """Every match's groups, as ``captures`` gives them for the first."""
        data = text.encode("utf-8", "surrogatepass")
        return [
            [data[a:b].decode("utf-8", "surrogatepass") if a >= 0 else None for a, b in spans]
            for spans in self.iter_spans(data)
        ]

    def replace(self, text: str, replacement: str, count: int) -> str:
        """Replace the first ``count`` matches (all when negative) with Rust's ``$`` expansion."""
        if count == 0:
            return text
        data = text.encode("utf-8", "surrogatepass")
        matches = self.iter_spans(data)
        if count > 0:
            matches = matches[:count]
        if not matches:
            return text
        expand = _expander(replacement, self.names)
        pieces, last = [], 0
        for spans in matches:
            start, stop = spans[0]
            pieces.append(data[last:start])
            pieces.append(expand(data, spans))
            last = stop
        pieces.append(data[last:])
        return b"".join(pieces).decode("utf-8", "surrogatepass")

    def replace_with(self, text: str, replacer: Callable[[str], str]) -> str:
        """Replace every match with ``replacer(matched text)`` (no ``$`` expansion)."""
        data = text.encode("utf-8", "surrogatepass")
        matches = self.iter_spans(data)
        if not matches:
            return text
        pieces, last = [], 0
        for spans in matches:
            start, stop = spans[0]
            pieces.append(data[last:start].decode("utf-8", "surrogatepass"))
            pieces.append(replacer(data[start:stop].decode("utf-8", "surrogatepass")))
            last = stop
        pieces.append(data[last:].decode("utf-8", "surrogatepass"))
        return "".join(pieces)

    def split(self, text: str, limit: int) -> list[str]:
        """Rust's ``splitn``: at most ``limit`` pieces, the last one the rest of the text."""
        if limit <= 0:
            return []
        data = text.encode("utf-8", "surrogatepass")
        pieces, last = [], 0
        for spans in self.iter_spans(data):
            if len(pieces) == limit - 1:
                break
            start, stop = spans[0]
            pieces.append(data[last:start].decode("utf-8", "surrogatepass"))
            last = stop
        pieces.append(data[last:].decode("utf-8", "surrogatepass"))
        return pieces


def matches(text: str, regex: Regex) -> bool:
    """Whether ``regex`` matches anywhere in ``text`` (VRL's ``match``, text first: one call per match)."""
    if regex._required not in text:
        return False
    search = regex._search
    if search is not None and text.isascii():
        return search(text) is not None
    data = text.encode("utf-8", "surrogatepass")
    return regex._match(data, 0, len(data))[0][0] >= 0


class LazyRegex(Regex):
    """A known-good pattern of the standard library, compiled on first use (RE2 is not loaded at start)."""

    __slots__ = ()

    def __init__(self, pattern: str) -> None:  # noqa: super-init-not-called  (Regex.__init__ runs on first use)
        self.pattern = pattern

    def __getattr__(self, name: str) -> Any:
        if name in _COMPILED_SLOTS:
            Regex.__init__(self, self.pattern)
            return getattr(self, name)
        raise AttributeError(name)


_COMPILED_SLOTS = frozenset({"group_count", "names", "_match", "_search", "_named", "_required"})


def compile_vrl_regex(pattern: str) -> Regex:
    """A regex literal's value; raises ``RegexError`` (reason, index) for a pattern Rust would refuse."""
    return Regex(pattern)


def _char_len(data: bytes, index: int) -> int:
    """The length in bytes of the UTF-8 character at ``index`` (1 at the end)."""
    if index >= len(data):
        return 1
    lead = data[index]
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _expander(replacement: str, names: dict[str, int]) -> Callable[[bytes, Spans], bytes]:
    """A function that expands ``replacement`` for one match (groups by number or name)."""
    parts: list[bytes | int] = []  # literal bytes, or a group index (-1: no such group)
    last = 0
    for found in _REPLACEMENT.finditer(replacement):
        parts.append(replacement[last : found.start()].encode("utf-8", "surrogatepass"))
        name = found.group(1) if found.group(1) is not None else found.group(2)
        if name is None:
            parts.append(b"$")
        else:
            parts.append(int(name) if name.isdigit() else names.get(name, -1))
        last = found.end()
    parts.append(replacement[last:].encode("utf-8", "surrogatepass"))

    def expand(data: bytes, spans: Spans) -> bytes:
        out = []
        for part in parts:
            if type(part) is bytes:
                out.append(part)
            elif 0 <= part < len(spans) and spans[part][0] >= 0:
                out.append(data[spans[part][0] : spans[part][1]])
        return b"".join(out)

    return expand
