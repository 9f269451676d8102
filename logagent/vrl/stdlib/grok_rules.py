"""Compiling grok rules (``parse_groks``'s patterns and aliases) to one Python regex each, once.

A rule is regex text with ``%{MATCHER}``, ``%{MATCHER:path}`` and
``%{MATCHER:path:filter}`` in it, as VRL's Datadog grok reads them: the
matcher is an alias (resolved recursively; a cycle is an error), ``regex("...")``,
``boolean``, or a pattern of ``grok_library``; ``integer``/``number`` (and the
``Ext`` forms) add their filter. The n-th capture with a destination is the
group ``grok<n>``; the groups are read in the order of their names as text
(VRL's: ``grok10`` before ``grok2``), which decides what a repeated
destination's array holds. Patterns run with ``re`` (Oniguruma's
backtracking and lookaround, which RE2 lacks), the whole value must match,
``.`` takes newlines, ``^``/``$`` are line anchors, as in VRL.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct

from ..function import ArgumentError
from .grok_filters import Filter, make_filter
from .grok_library import vrl_knows

#: a ``%{...}`` in a rule (quoted strings in it may hold "}")
_TOKEN = re.compile(r'%\{(?:[^"}]|"(?:\\.|[^"\\])*")+\}')
#: a ``%{NAME}`` or ``%{NAME:key}`` inside a library definition
_LIBRARY_REF = re.compile(r"%\{(\w+)(?::(\w+))?\}")
_LEXEME = re.compile(r'\s*(?:(?P<str>"(?:\\.|[^"\\])*")|(?P<num>[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)'
                     r"|(?P<ident>[$@_A-Za-z][$@_A-Za-z0-9-]*)|(?P<punct>[,:.()\[\]}]))")
#: an Oniguruma named group, an escape, or a ``(?s)``/``(?m)`` (dot-all in VRL's reading: always on here)
_RAW = re.compile(r"\\.|\(\?<([A-Za-z_][A-Za-z0-9_]*)>|\(\?[sm]\)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_KEYWORDS = {"true": True, "false": False, "null": None}


class Field(Struct, frozen=True):
    """Where a capture goes (``()`` is the root) and its filters, in order."""

    path: tuple[str, ...]
    filters: tuple[Filter, ...]


class GrokRule(Struct, frozen=True):
    regex: re.Pattern[str]
    #: (key, group index, field) by key; field None for a group named in a regex or a library pattern
    captures: tuple[tuple[str, int, Field | None], ...]


class _Matcher(Struct):
    name: str
    args: list[Any] | None
    path: tuple[str, ...] | None  # None: no destination
    filter: tuple[str, list[Any] | None] | None


class _Lexemes:
    def __init__(self, text: str) -> None:
        self.text, self.items, self.index = text, [], 0
        position = 2  # after "%{"
        while position < len(text):
            found = _LEXEME.match(text, position)
            if found is None or found.end() == position:
                raise _invalid(text)
            self.items.append((found.lastgroup, found.group(found.lastgroup)))
            position = found.end()

    def peek(self) -> tuple[str, str] | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def take(self, kind: str, text: str | None = None) -> str:
        item = self.peek()
        if item is None or item[0] != kind or (text is not None and item[1] != text):
            raise _invalid(self.text)
        self.index += 1
        return item[1]

    def at(self, text: str) -> bool:
        item = self.peek()
        return item is not None and item[0] == "punct" and item[1] == text


def _invalid(text: str) -> ArgumentError:
    return ArgumentError(f"failed to parse grok expression '{text}': invalid grok pattern: {text}")


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", lambda escape: _ESCAPES.get(escape.group(1), escape.group(1)), literal[1:-1], flags=re.DOTALL)


def _function(lexemes: _Lexemes) -> tuple[str, list[Any] | None]:
    name = lexemes.take("ident")
    while lexemes.at("."):
        lexemes.take("punct", ".")
        name += "." + lexemes.take("ident")
    if not lexemes.at("("):
        return name, None
    lexemes.take("punct", "(")
    args: list[Any] = []
    while not lexemes.at(")"):
        kind, text = lexemes.peek() or ("", "")
        if kind == "str":
            args.append(_unquote(lexemes.take("str")))
        elif kind == "num":
            number = lexemes.take("num")
            args.append(float(number) if any(mark in number for mark in ".eE") else int(number))
        elif kind == "ident" and text in _KEYWORDS:
            args.append(_KEYWORDS[lexemes.take("ident")])
        else:
            args.append(_function(lexemes))
        if not lexemes.at(")"):
            lexemes.take("punct", ",")
    lexemes.take("punct", ")")
    return name, args


def _path(lexemes: _Lexemes) -> tuple[str, ...]:
    segments: list[str] = []
    while not lexemes.at(":") and not lexemes.at("}"):
        if lexemes.at("["):
            lexemes.take("punct", "[")
            segments.append(_unquote(lexemes.take("str")))
            lexemes.take("punct", "]")
            continue
        if segments and lexemes.at("."):
            lexemes.take("punct", ".")
        segments.append(lexemes.take("ident"))
    return tuple(segments)


def parse_matcher(text: str) -> _Matcher:
    """``%{name(args):path:filter(args)}`` read as VRL's grammar reads it."""
    lexemes = _Lexemes(text)
    name, args = _function(lexemes)
    matcher = _Matcher(name, args, None, None)
    if lexemes.at(":"):
        lexemes.take("punct", ":")
        path = _path(lexemes)
        if lexemes.at(":"):
            lexemes.take("punct", ":")
            matcher.filter = _function(lexemes)
        if path or matcher.filter is not None:
            matcher.path = path
    lexemes.take("punct", "}")
    if lexemes.peek() is not None:
        raise _invalid(text)
    return matcher


class _Builder:
    """One rule's regex text and captures, built as the rule and its aliases are read."""

    def __init__(self, aliases: dict[str, str], library: dict[str, str], datadog: bool) -> None:
        self.aliases, self.library, self.datadog = aliases, library, datadog
        self.parts: list[str] = []
        self.fields: dict[str, tuple[tuple[str, ...], list[Filter]]] = {}
        self.groups: list[tuple[str, str]] = []  # (python group name, key)
        self.stack: list[str] = []

    def open_group(self, key: str | None) -> None:
        if key is None:
            self.parts.append("(?:")
        else:
            name = f"_{len(self.groups)}"
            self.groups.append((name, key))
            self.parts.append(f"(?P<{name}>")

    def raw(self, text: str) -> None:
        """Regex text of the rule, Oniguruma's ``(?<name>`` made ``re``'s."""
        def rewrite(found: re.Match[str]) -> str:
            if found.group(1) is not None:
                name = f"_{len(self.groups)}"
                self.groups.append((name, found.group(1)))
                return f"(?P<{name}>"
            return "" if found.group().startswith("(?") else found.group()

        self.parts.append(_RAW.sub(rewrite, text))

    def rule(self, text: str) -> None:
        position = 0
        for found in _TOKEN.finditer(text):
            self.raw(text[position : found.start()])
            position = found.end()
            self.matcher(parse_matcher(found.group()))
        self.raw(text[position:])

    def matcher(self, matcher: _Matcher) -> None:
        key = None
        if matcher.filter is not None and not self.datadog:
            raise ArgumentError(f"unknown filter '{matcher.filter[0]}'")
        if matcher.path is not None:
            key = f"grok{len(self.fields)}"
            filters = [make_filter(*matcher.filter)] if matcher.filter is not None else []
            self.fields[key] = (matcher.path, filters)
        name = matcher.name
        if name in self.aliases:
            if name in self.stack:
                raise ArgumentError(f"Circular dependency found in the alias '{self.stack[0]}'")
            self.open_group(key)
            self.stack.append(name)
            self.rule(self.aliases[name])
            self.stack.pop()
            self.parts.append(")")
        elif self.datadog and name in ("regex", "boolean"):
            self.open_group(key)
            if name == "boolean":
                self.parts.append("boolean")  # VRL's grok matches the word itself
            elif matcher.args and type(matcher.args[0]) is str:
                self.raw(matcher.args[0])
            else:
                raise ArgumentError(f"invalid arguments for the function '{name}'")
            self.parts.append(")")
        else:
            if self.datadog and name in ("integer", "integerExt", "number", "numberExt"):
                if key is not None:
                    self.fields[key][1].insert(0, make_filter(name, None))
                name += "Str"
            self.library_pattern(name, key)

    def library_pattern(self, name: str, key: str | None) -> None:
        definition = self.library.get(name)
        if definition is None:
            if vrl_knows(name) or name == "date":
                raise ArgumentError(f'grok pattern "{name}" is not implemented by logagent')
            raise ArgumentError(f'The given pattern definition name "{name}" could not be found in the definition map')
        self.open_group(key)
        position = 0
        for found in _LIBRARY_REF.finditer(definition):
            self.parts.append(definition[position : found.start()])
            position = found.end()
            self.library_pattern(found.group(1), found.group(2))
        self.parts.append(definition[position:])
        self.parts.append(")")

    def build(self, source: str) -> GrokRule:
        text = "".join(self.parts)
        try:
            regex = re.compile(text, re.DOTALL | re.MULTILINE if self.datadog else re.MULTILINE)
        except (re.error, OverflowError, RecursionError) as error:
            raise ArgumentError(f"failed to parse grok expression '{source}': {error}") from None
        captures: dict[str, tuple[str, int, Field | None]] = {}
        for group, key in self.groups:
            if key in captures:
                continue
            known = self.fields.get(key)
            field = Field(known[0], tuple(known[1])) if known is not None else None
            captures[key] = (key, regex.groupindex[group], field)
        ordered = sorted(captures.values(), key=lambda capture: capture[0].encode())
        return GrokRule(regex, tuple(ordered))


def compile_rules(patterns: list[str], aliases: dict[str, str], library: dict[str, str],
                  datadog: bool = True) -> tuple[GrokRule, ...]:
    """Each non-empty pattern compiled (ArgumentError, worded as VRL's where VRL has the error).

    ``datadog`` False: Logstash's grok (``parse_grok``), without matcher functions and filters.
    """
    rules = []
    for pattern in patterns:
        if pattern:
            builder = _Builder(aliases, library, datadog)
            builder.rule(pattern)
            rules.append(builder.build(pattern))
    return tuple(rules)
