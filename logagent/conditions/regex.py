"""Translate VRL (Rust ``regex`` crate) patterns into Python ``re`` patterns.

Most syntax means the same in both. Where it does not, the pattern is either
rewritten or rejected at compile time with the position of the construct:

- ``$`` outside multi-line mode is end of text in Rust, but also matches before
  a final newline in Python: written as ``\\Z``. ``\\z`` becomes ``\\Z``.
- ``(?<name>...)`` becomes ``(?P<name>...)``; ``\\x{HHHH}`` becomes the character.
- ``[[:alpha:]]``-style ASCII classes are expanded (Python reads them literally).
- ``(?flags)`` becomes a scoped ``(?flags:...)`` group up to the end of its
  enclosing group (Python only accepts global flags at the very start).
- Rejected: look-around and backreferences (Rust has none), ``\\p{...}``
  classes, nested classes and class set operations (``&&`` ``--`` ``~~``),
  possessive quantifiers (Python-only), flags other than ``i m s u``.
"""

from __future__ import annotations

import re

from .errors import ConditionSyntaxError, error_at

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\x0B\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_SAME_ESCAPES = frozenset("dDwWsSntrfva")
_ASSERTION_ESCAPES = frozenset("AbB")
_INLINE_FLAGS = re.compile(r"([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_POSIX = re.compile(r"\[:(\^?)([a-z]*):\]")


def translate_regex(pattern: str, source: str, offset: int) -> re.Pattern[str]:
    """Compile a Rust-syntax ``pattern`` found at ``offset`` in ``source``."""
    translated = _Translator(pattern, source, offset).run()
    try:
        return re.compile(translated)
    except re.error as exc:
        raise error_at(source, offset, f"invalid regex: {exc.msg}") from None


class _Translator:
    def __init__(self, pattern: str, source: str, offset: int) -> None:
        self.pattern = pattern
        self.source = source
        self.offset = offset

    def fail(self, index: int, reason: str) -> ConditionSyntaxError:
        return error_at(self.source, self.offset + index, f"regex: {reason}")

    def run(self) -> str:
        pattern = self.pattern
        n = len(pattern)
        out: list[str] = []
        multiline = False
        # one entry per open group: (multiline flag outside it, scoped-flag groups to close)
        stack: list[tuple[bool, int]] = []
        pending_closes = 0
        at_group_start = True
        i = 0
        while i < n:
            c = pattern[i]
            if c == "\\":
                text, i = self.escape(i, in_class=False)
                out.append(text)
                at_group_start = False
            elif c == "[":
                text, i = self.char_class(i)
                out.append(text)
                at_group_start = False
            elif c == "(":
                if not pattern.startswith("(?", i):
                    out.append("(")
                    stack.append((multiline, pending_closes))
                    pending_closes, at_group_start, i = 0, True, i + 1
                    continue
                j = i + 2
                named = pattern.startswith("P<", j) or (
                    pattern.startswith("<", j) and not pattern.startswith(("<=", "<!"), j)
                )
                if named:
                    name_start = j + 2 if pattern[j] == "P" else j + 1
                    close = pattern.find(">", name_start)
                    if close == -1:
                        raise self.fail(i, "unterminated group name")
                    out.append(f"(?P<{pattern[name_start:close]}>")
                    stack.append((multiline, pending_closes))
                    pending_closes, at_group_start, i = 0, True, close + 1
                    continue
                match = _INLINE_FLAGS.match(pattern, j)
                if match is None:
                    raise self.fail(
                        i, "unsupported group (look-around, backreferences, comments and conditionals are not supported)"
                    )
                enabled, disabled, end = match.group(1), match.group(2) or "", match.group(3)
                for flag in enabled + disabled:
                    if flag not in "imsu":
                        raise self.fail(i, f"unsupported flag {flag!r} (supported: i, m, s)")
                enabled, disabled = enabled.replace("u", ""), disabled.replace("u", "")
                flags = enabled + (f"-{disabled}" if disabled else "")
                new_multiline = (multiline or "m" in enabled) and "m" not in disabled
                if end == ":":
                    out.append(f"(?{flags}:" if flags else "(?:")
                    stack.append((multiline, pending_closes))
                    pending_closes, at_group_start = 0, True
                else:
                    if not at_group_start:
                        raise self.fail(
                            i, "inline flags must come first in the pattern or group; write (?flags:...) instead"
                        )
                    if flags:
                        out.append(f"(?{flags}:")
                        pending_closes += 1
                multiline = new_multiline
                i = match.end()
            elif c == ")":
                if not stack:
                    raise self.fail(i, "unopened group")
                out.append(")" * (pending_closes + 1))
                multiline, pending_closes = stack.pop()
                at_group_start, i = False, i + 1
            elif c == "$":
                out.append("$" if multiline else "\\Z")
                at_group_start, i = False, i + 1
            elif c in "*+?}":
                out.append(c)
                i += 1
                if i < n and pattern[i] == "+":
                    raise self.fail(i, "possessive quantifiers are not supported")
                at_group_start = False
            else:
                out.append(c)
                # after '|', (?flags) scoping the rest of the group keeps the alternation intact
                at_group_start = c == "|"
                i += 1
        if stack:
            raise self.fail(n, "unclosed group")
        out.append(")" * pending_closes)
        return "".join(out)

    def escape(self, i: int, in_class: bool) -> tuple[str, int]:
        """Translate the escape sequence at ``pattern[i]`` (a backslash)."""
        pattern = self.pattern
        if i + 1 >= len(pattern):
            raise self.fail(i, "pattern ends with a lone backslash")
        c = pattern[i + 1]
        if c in _SAME_ESCAPES:
            return "\\" + c, i + 2
        if c in _ASSERTION_ESCAPES or c == "z":
            if in_class:
                raise self.fail(i, f"\\{c} is not allowed in a character class")
            if c == "b" and pattern.startswith("{", i + 2):
                raise self.fail(i, "\\b{...} word boundaries are not supported")
            return ("\\Z" if c == "z" else "\\" + c), i + 2
        if c == "x":
            if pattern.startswith("{", i + 2):
                close = pattern.find("}", i + 3)
                digits = pattern[i + 3 : close] if close != -1 else ""
                if not digits or not all(d in "0123456789abcdefABCDEF" for d in digits) or int(digits, 16) > 0x10FFFF:
                    raise self.fail(i, "invalid \\x{...} escape")
                return re.escape(chr(int(digits, 16))), close + 1
            digits = pattern[i + 2 : i + 4]
            if len(digits) != 2 or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise self.fail(i, "invalid \\x escape (write \\xHH or \\x{HHHH})")
            return "\\x" + digits, i + 4
        if c in "pP":
            raise self.fail(i, f"Unicode classes \\{c}{{...}} are not supported")
        if c.isascii() and not c.isalnum() and c not in "<>":
            return "\\" + c, i + 2
        raise self.fail(i, f"unsupported escape \\{c}")

    def char_class(self, i: int) -> tuple[str, int]:
        """Translate the bracketed class starting at ``pattern[i]`` ('[')."""
        pattern = self.pattern
        n = len(pattern)
        out = ["["]
        j = i + 1
        if j < n and pattern[j] == "^":
            out.append("^")
            j += 1
        if j < n and pattern[j] == "]":  # a leading ']' is a literal in Rust
            out.append("\\]")
            j += 1
        while j < n:
            c = pattern[j]
            if c == "]":
                if len(out) == 1 or out[-1] == "^" and len(out) == 2:
                    raise self.fail(j, "empty character class")
                out.append("]")
                return "".join(out), j + 1
            if c == "\\":
                text, j = self.escape(j, in_class=True)
                out.append(text)
            elif c == "[":
                match = _POSIX.match(pattern, j)
                if match is None:
                    raise self.fail(j, "nested character classes are not supported; write \\[ for a literal '['")
                if match.group(1):
                    raise self.fail(j, "negated ASCII classes [:^name:] are not supported")
                name = match.group(2)
                if name not in _POSIX_CLASSES:
                    raise self.fail(j, f"unknown ASCII class [:{name}:]")
                out.append(_POSIX_CLASSES[name])
                j = match.end()
            elif pattern.startswith(("&&", "--", "~~"), j):
                raise self.fail(j, f"character class set operation {pattern[j:j + 2]!r} is not supported")
            elif c in "|&~":
                out.append("\\" + c)  # literal in both; escaped so Python does not warn
                j += 1
            else:
                out.append(c)
                j += 1
        raise self.fail(i, "unclosed character class")
