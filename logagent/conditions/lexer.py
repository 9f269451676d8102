"""Tokenizer for the VRL condition subset.

A path such as ``.kubernetes.pod_labels."app.kubernetes.io/name"`` or
``.kubernetes.pod_ips[-1]`` is lexed as one ``PATH`` token (VRL allows no
whitespace inside a path), so the parser never sees a bare ``.``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import error_at

# token kinds
PATH = "path"
STRING = "string"
REGEX = "regex"
INTEGER = "integer"
FLOAT = "float"
IDENT = "ident"
OP = "op"
EOF = "eof"

_FIELD = re.compile(r"[A-Za-z0-9_@]+")
_DIGITS = frozenset("0123456789")  # str.isdigit() also takes "²" and other scripts' digits
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?[0-9][0-9_]*(\.[0-9_]*)?")
_INDEX = re.compile(r"\[[ \t]*(-?[0-9]+)[ \t]*\]")
_OPERATORS = ("==", "!=", "<=", ">=", "&&", "||", "??", "<", ">", "!", "(", ")", "[", "]", ",", ":", ";")
_UNSUPPORTED = {
    "+": "arithmetic is not supported in conditions",
    "-": "arithmetic is not supported in conditions",
    "*": "arithmetic is not supported in conditions",
    "/": "arithmetic is not supported in conditions",
    "%": "arithmetic is not supported in conditions",
    "=": "assignment is not supported in conditions (did you mean '=='?)",
    "|": "'|' is not supported in conditions (did you mean '||'?)",
    "&": "'&' is not supported in conditions (did you mean '&&'?)",
    "{": "object literals and blocks are not supported in conditions",
    "}": "object literals and blocks are not supported in conditions",
    "'": "a string in single quotes needs a prefix: s'...' (raw string) or r'...' (regex)",
}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "'": "'", "\\": "\\", "{": "{"}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    value: Any
    offset: int
    end: int


def tokenize(source: str) -> list[Token]:
    """Split ``source`` into tokens; raises ConditionSyntaxError on bad input."""
    tokens: list[Token] = []
    pos = 0
    n = len(source)
    while True:
        # skip whitespace and comments
        while pos < n:
            ch = source[pos]
            if ch in " \t\r\n":
                pos += 1
            elif ch == "#":
                newline = source.find("\n", pos)
                pos = n if newline == -1 else newline
            else:
                break
        if pos >= n:
            tokens.append(Token(EOF, None, n, n))
            return tokens
        ch = source[pos]
        start = pos
        if ch == ".":
            segments, pos = _lex_path(source, pos + 1)
            tokens.append(Token(PATH, segments, start, pos))
        elif ch == '"':
            text, pos = _lex_string(source, pos + 1)
            tokens.append(Token(STRING, text, start, pos))
        elif ch in "sr" and source.startswith("'", pos + 1):
            text, pos = _lex_quoted_raw(source, pos + 2, unescape_quote=(ch == "r"))
            tokens.append(Token(REGEX if ch == "r" else STRING, text, start, pos))
        elif ch == "t" and source.startswith("'", pos + 1):
            raise error_at(source, pos, "timestamp literals t'...' are not supported in conditions")
        elif ch in _DIGITS or (ch == "-" and pos + 1 < n and source[pos + 1] in _DIGITS):
            tokens.append(_lex_number(source, pos))
            pos = tokens[-1].end
        elif (ch.isascii() and ch.isalpha()) or ch == "_":  # identifiers are ASCII (VRL's)
            match = _IDENT.match(source, pos)
            assert match is not None
            pos = match.end()
            tokens.append(Token(IDENT, match.group(), start, pos))
        else:
            for op in _OPERATORS:
                if source.startswith(op, pos):
                    pos += len(op)
                    tokens.append(Token(OP, op, start, pos))
                    break
            else:
                reason = _UNSUPPORTED.get(ch, f"unexpected character {ch!r}")
                raise error_at(source, pos, reason)


def _lex_path(source: str, pos: int) -> tuple[tuple[str | int, ...], int]:
    """Lex the segments after the leading dot; returns () for the root path '.'."""
    segments: list[str | int] = []
    first = True
    while True:
        if first or source.startswith(".", pos):
            field_pos = pos if first else pos + 1
            if source.startswith('"', field_pos):
                name, pos = _lex_string(source, field_pos + 1)
                segments.append(name)
            else:
                match = _FIELD.match(source, field_pos)
                if match is None:
                    if first:  # '.' alone: the whole record
                        first = False
                        continue
                    raise error_at(source, field_pos, "expected a field name after '.'")
                if match.group().isdigit():
                    raise error_at(
                        source, field_pos, f"a field name cannot be a number; to index an array write [{match.group()}]"
                    )
                segments.append(match.group())
                pos = match.end()
            first = False
        elif source.startswith("[", pos):
            match = _INDEX.match(source, pos)
            if match is None:
                raise error_at(source, pos, "an array index must be an integer literal, e.g. [0] or [-1]")
            segments.append(int(match.group(1)))
            pos = match.end()
        else:
            return tuple(segments), pos


def _lex_string(source: str, pos: int) -> tuple[str, int]:
    """Lex a double-quoted string body starting after the opening quote."""
    start = pos - 1
    out: list[str] = []
    n = len(source)
    while pos < n:
        ch = source[pos]
        if ch == '"':
            return "".join(out), pos + 1
        if ch == "\\":
            nxt = source[pos + 1 : pos + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                pos += 2
            elif nxt == "\n" or source.startswith("\r\n", pos + 1):
                # a backslash at the end of a line continues the string on the
                # next line, dropping the line break and the next line's indentation
                pos += 2 if nxt == "\n" else 3
                while pos < n and source[pos] in " \t":
                    pos += 1
            else:
                shown = nxt or "end of input"
                raise error_at(source, pos, f"invalid escape character: \\{shown}")
        elif ch == "{" and source.startswith("{{", pos):
            raise error_at(source, pos, "template strings ({{ ... }}) are not supported; write \\{ for a literal brace")
        else:
            out.append(ch)
            pos += 1
    raise error_at(source, start, "unterminated string")


def _lex_quoted_raw(source: str, pos: int, unescape_quote: bool) -> tuple[str, int]:
    """Lex s'...' / r'...': contents are verbatim; \\' does not end the literal.

    In r'...' VRL turns \\' into a plain quote; in s'...' the backslash stays.
    """
    start = pos - 2
    out: list[str] = []
    n = len(source)
    while pos < n:
        ch = source[pos]
        if ch == "'":
            return "".join(out), pos + 1
        if ch == "\\" and source.startswith("'", pos + 1):
            out.append("'" if unescape_quote else "\\'")
            pos += 2
        else:
            out.append(ch)
            pos += 1
    raise error_at(source, start, "unterminated literal")


def _lex_number(source: str, pos: int) -> Token:
    match = _NUMBER.match(source, pos)
    assert match is not None
    text = match.group()
    end = match.end()
    if end < len(source) and (source[end].isalpha() or source[end] == "_"):
        raise error_at(source, pos, f"invalid number literal {text + source[end]!r}...")
    digits = text.replace("_", "")
    if match.group(1) is not None:
        return Token(FLOAT, float(digits), pos, end)
    value = int(digits)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise error_at(source, pos, "integer literal does not fit in 64 bits")
    return Token(INTEGER, value, pos, end)
