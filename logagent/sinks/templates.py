"""Templates in sink options: ``logs-{{ kubernetes.pod_namespace }}-%Y.%m.%d``.

The syntax is Vector's: ``{{ field.path }}`` is replaced by the record's value
at that path (a segment may be quoted: ``{{ kubernetes.pod_labels."app.kubernetes.io/name" }}``,
a leading ``.`` is allowed), and strftime directives in the literal text
(``%Y``, ``%m``, ``%d``, ``%H``...) are filled from the record's timestamp in
UTC (the current time for a record without one). ``%%`` is a literal ``%``.

:func:`compile_template` checks the syntax when the config is loaded and raises
:class:`TemplateError` naming the problem; whether a path can exist at all is
checked against the sources' fields by :mod:`logagent.sinks.template_fields`.

Rendering gives None when a referenced field is missing or is not a scalar
(a mapping or a list): each sink decides what that means for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from logagent.event import PER_LINE_KEYS, LogEvent
from logagent.sinks.timestamps import is_utc, utc_datetime

FieldPath = tuple[str, ...]

#: strftime directives accepted (C89 plus the common POSIX/glibc ones).
_DATE_DIRECTIVES = frozenset("aAbBCdDeFgGhjmuUVwWxyY")
_HOUR_DIRECTIVES = frozenset("HIkLlp")
_MINUTE_DIRECTIVES = frozenset("MR")
_SECOND_DIRECTIVES = frozenset("cSsTX")
_OTHER_DIRECTIVES = frozenset("nt%zZ")
_DIRECTIVES = _DATE_DIRECTIVES | _HOUR_DIRECTIVES | _MINUTE_DIRECTIVES | _SECOND_DIRECTIVES | _OTHER_DIRECTIVES

_FIELD = re.compile(r"\{\{(.*?)\}\}", re.S)
_SEGMENT = re.compile(r'"((?:[^"\\]|\\.)*)"|([A-Za-z0-9_@$-]+)')


class TemplateError(ValueError):
    """A template that cannot be used; the message says why and where."""


class Template:
    """A compiled template: literal text (with strftime directives) and field paths."""

    __slots__ = ("text", "_parts", "paths", "uses_time", "_time_prefix", "reads_per_line")

    def __init__(self, text: str, parts: list[str | FieldPath], time_prefix: int | None) -> None:
        self.text = text
        self._parts = parts
        self.paths: list[FieldPath] = [p for p in parts if isinstance(p, tuple)]
        #: whether strftime directives are used (the output then depends on the record's time)
        self.uses_time = time_prefix is not None
        #: how many characters of a UTC RFC 3339 timestamp decide the strftime output
        self._time_prefix = time_prefix
        #: whether the output can differ between two lines of one file context
        self.reads_per_line = self.uses_time or any(path[0] in PER_LINE_KEYS for path in self.paths)

    @property
    def is_static(self) -> bool:
        return not self.paths and not self.uses_time

    def time_key(self, event: LogEvent) -> str | None:
        """A key under which every record renders alike as far as time goes (for caches)."""
        if self._time_prefix is None:
            return ""
        timestamp = event.timestamp
        if timestamp is not None and is_utc(timestamp) and len(timestamp) >= self._time_prefix:
            return timestamp[: self._time_prefix]
        return None

    def render(self, event: LogEvent) -> str | None:
        """The text for one record; None when a referenced field is missing or not a scalar."""
        moment: datetime | None = None
        out: list[str] = []
        for part in self._parts:
            if isinstance(part, tuple):
                value = scalar_text(lookup(event, part))
                if value is None:
                    return None
                out.append(value)
            elif "%" in part:
                if moment is None:
                    moment = utc_datetime(event.timestamp)
                out.append(moment.strftime(part))
            else:
                out.append(part)
        return "".join(out)

    def __repr__(self) -> str:
        return f"Template({self.text!r})"


def lookup(event: LogEvent, path: FieldPath) -> Any:
    """The value at ``path`` in the record (None when absent)."""
    value = event.get(path[0])
    for segment in path[1:]:
        if not isinstance(value, dict):
            return None
        value = value.get(segment)
    return value


def scalar_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return None


def parse_field_path(text: str) -> FieldPath:
    """``kubernetes.pod_labels."app.kubernetes.io/name"`` -> its segments; raises TemplateError."""
    source = text.strip()
    if source.startswith("."):
        source = source[1:]
    segments: list[str] = []
    position = 0
    while True:
        match = _SEGMENT.match(source, position)
        if match is None:
            raise TemplateError(f"{{{{ {text.strip()} }}}} is not a field path (expected e.g. kubernetes.pod_name)")
        quoted, plain = match.groups()
        segments.append(quoted.replace('\\"', '"') if quoted is not None else plain)
        position = match.end()
        if position == len(source):
            return tuple(segments)
        if source[position] != ".":
            raise TemplateError(f"{{{{ {text.strip()} }}}} is not a field path (expected e.g. kubernetes.pod_name)")
        position += 1


def _literal_directives(literal: str) -> Iterator[str]:
    index = 0
    while True:
        index = literal.find("%", index)
        if index < 0:
            return
        if index + 1 >= len(literal):
            raise TemplateError("a lone % at the end; write %% for a literal %")
        directive = literal[index + 1]
        if directive == "-" and index + 2 < len(literal):  # glibc's %-d (no padding)
            directive = literal[index + 2]
            index += 1
        if directive not in _DIRECTIVES:
            raise TemplateError(f"unknown strftime directive %{directive}; write %% for a literal %")
        yield directive
        index += 2


def _time_prefix(directives: set[str]) -> int | None:
    """How much of a timestamp ``YYYY-MM-DDTHH:MM:SS...`` the directives depend on."""
    used = directives - {"%", "n", "t", "z", "Z"}
    if not used:
        return None
    if used & _SECOND_DIRECTIVES:
        return 19
    if used & _MINUTE_DIRECTIVES:
        return 16
    if used & _HOUR_DIRECTIVES:
        return 13
    return 10


def compile_template(text: str) -> Template:
    """Parse a template; raises :class:`TemplateError` on a syntax error."""
    parts: list[str | FieldPath] = []
    directives: set[str] = set()
    position = 0
    for match in _FIELD.finditer(text):
        literal = text[position : match.start()]
        if literal:
            parts.append(literal)
        parts.append(parse_field_path(match.group(1)))
        position = match.end()
    if position < len(text):
        parts.append(text[position:])
    for part in parts:
        if isinstance(part, str):
            if "{{" in part:
                raise TemplateError("an unclosed {{ (fields are written {{ field.path }})")
            directives.update(_literal_directives(part))
    return Template(text, parts, _time_prefix(directives))
