"""Tokens of a VRL program.

A path (``.kubernetes.pod_labels."app.kubernetes.io/name"``, ``.tags[-1]``,
``%meta``, ``.`` alone) is one ``PATH`` token: VRL allows no whitespace inside
a path. A path directly after a variable, a call or a literal (no space) is a
query on that value; the parser joins them. Line breaks are tokens
(``NEWLINE``): they end statements, and the parser skips them where an
expression must go on (after an operator, inside brackets).
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct

from .diagnostic import Diagnostics

PATH = "path"
STRING = "string"
TEMPLATE = "template"
RAW = "raw string"
REGEX = "regex"
TIMESTAMP = "timestamp"
INTEGER = "integer"
FLOAT = "float"
IDENT = "ident"
OP = "op"
NEWLINE = "newline"
EOF = "eof"

_FIELD = re.compile(r"[A-Za-z0-9_@]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?[0-9][0-9_]*(\.[0-9][0-9_]*)?")
_DIGITS = "0123456789"
_IDENT_START = frozenset("_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_INTEGER_FIELD = re.compile(r"[0-9][0-9_]*")
_INDEX = re.compile(r"\[(-?[0-9]+)\]")
_TEMPLATE_PART = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_OPERATORS = ("==", "!=", "<=", ">=", "&&", "||", "??", "|=", "<", ">", "!", "(", ")", "[", "]", "{", "}",
              ",", ":", ";", "=", "+", "-", "*", "/", "|")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "'": "'", "\\": "\\", "{": "{", "}": "}"}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class Token(Struct, frozen=True):
    kind: str
    value: Any
    offset: int
    end: int


def tokenize(source: str, diagnostics: Diagnostics) -> list[Token]:
    """Split ``source`` into tokens; raises VrlError (E203/E202) on bad input."""
    tokens: list[Token] = []
    pos = 0
    n = len(source)
    while True:
        while pos < n:
            ch = source[pos]
            if ch in " \t\r":
                pos += 1
            elif ch == "#":
                newline = source.find("\n", pos)
                pos = n if newline == -1 else newline
            else:
                break
        if pos >= n:  # as VRL: the end of the program is where its last token (a line break too) ends
            last = tokens[-1].end if tokens else 0
            tokens.append(Token(EOF, None, last, last))
            return tokens
        ch = source[pos]
        start = pos
        if ch == "\n":
            tokens.append(Token(NEWLINE, None, pos, pos + 1))
            pos += 1
        elif ch in ".%":
            segments, pos = _lex_path(source, pos + 1, diagnostics)
            tokens.append(Token(PATH, (ch, segments), start, pos))
        elif ch == '"':
            value, pos = _lex_string(source, pos + 1, diagnostics)
            tokens.append(Token(TEMPLATE if isinstance(value, tuple) else STRING, value, start, pos))
        elif ch in "srt" and source.startswith("'", pos + 1):
            text, pos = _lex_quoted_raw(source, pos + 2, ch == "r", diagnostics)
            tokens.append(Token({"s": RAW, "r": REGEX, "t": TIMESTAMP}[ch], text, start, pos))
        elif ch in _DIGITS or (ch == "-" and pos + 1 < n and source[pos + 1] in _DIGITS):  # as VRL: 1-5 is an error
            tokens.append(_lex_number(source, pos, diagnostics))
            pos = tokens[-1].end
        elif ch in _IDENT_START:  # ASCII only, as VRL's identifiers
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
                raise diagnostics.syntax(pos, f"unexpected character {ch!r}")


def _lex_path(source: str, pos: int, diagnostics: Diagnostics) -> tuple[tuple[str | int, ...], int]:
    """The segments after the leading ``.`` or ``%``; () for the root alone."""
    segments: list[str | int] = []
    first = True
    while True:
        if first or (source.startswith(".", pos) and not source.startswith("..", pos)):
            field_pos = pos if first else pos + 1
            if source.startswith('"', field_pos):
                name, pos = _lex_string(source, field_pos + 1, diagnostics)
                if isinstance(name, tuple):
                    raise diagnostics.syntax(field_pos, "a quoted path segment cannot be a template")
                segments.append(name)
            else:
                match = _FIELD.match(source, field_pos)
                if match is None:
                    if first:
                        first = False
                        continue
                    raise diagnostics.syntax(field_pos, "expected a field name after '.'")
                if _INTEGER_FIELD.fullmatch(match.group()):  # as VRL: an integer is no field name
                    raise diagnostics.syntax(field_pos, 'unexpected syntax token: "IntegerLiteral"', match.end())
                segments.append(match.group())
                pos = match.end()
            first = False
        elif source.startswith("[", pos):
            match = _INDEX.match(source, pos)
            if match is None:
                raise diagnostics.syntax(pos + 1, 'expected one of: "integer literal"')
            segments.append(int(match.group(1)))
            pos = match.end()
        else:
            return tuple(segments), pos


def _lex_string(source: str, pos: int, diagnostics: Diagnostics) -> tuple[str | tuple[Any, ...], int]:
    """A double-quoted string after its opening quote: its text, or a template's parts."""
    start = pos - 1
    out: list[str] = []
    parts: list[Any] = []
    n = len(source)
    while pos < n:
        ch = source[pos]
        if ch == '"':
            text = "".join(out)
            if not parts:
                return text, pos + 1
            parts.append(text)
            return tuple(parts), pos + 1
        if ch == "\\":
            nxt = source[pos + 1 : pos + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                pos += 2
            elif nxt == "\n" or source.startswith("\r\n", pos + 1):
                pos += 2 if nxt == "\n" else 3
                while pos < n and source[pos] in " \t":
                    pos += 1
            else:
                raise diagnostics.error("E202", "syntax error", start, pos + 2,
                                        (f"unexpected error: invalid escape character: \\{nxt}",))
        elif ch == "{" and source.startswith("{{", pos):
            match = _TEMPLATE_PART.match(source, pos)
            if match is None:
                raise diagnostics.error("E701", "call to undefined variable", pos,
                                        source.find("}}", pos) + 2 if "}}" in source[pos:] else pos + 2,
                                        ("undefined variable",))
            parts.append("".join(out))
            out = []
            parts.append((match.group(1), match.start(1), match.end(1)))
            pos = match.end()
        else:
            out.append(ch)
            pos += 1
    raise diagnostics.error("E202", "syntax error", start, n, ("unexpected error: invalid string literal",))


def _lex_quoted_raw(source: str, pos: int, unescape_quote: bool, diagnostics: Diagnostics) -> tuple[str, int]:
    """s'...', r'...', t'...': verbatim, where \\' does not end the literal (r'' drops its backslash)."""
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
    raise diagnostics.syntax(start, "unterminated literal")


def _lex_number(source: str, pos: int, diagnostics: Diagnostics) -> Token:
    match = _NUMBER.match(source, pos)
    assert match is not None
    text = match.group()
    end = match.end()
    digits = text.replace("_", "")
    if match.group(1) is not None:
        return Token(FLOAT, float(digits), pos, end)
    value = int(digits)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise diagnostics.error("E202", "syntax error", pos, end, ("unexpected error: invalid numeric literal",))
    return Token(INTEGER, value, pos, end)
