"""Label and field selectors with the apiserver's syntax and matching rules."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_KEY = r"[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?"
_EXISTS = re.compile(rf"^\s*(?P<key>{_KEY})\s*$")
_NOT_EXISTS = re.compile(rf"^\s*!\s*(?P<key>{_KEY})\s*$")
_EQUALITY = re.compile(rf"^\s*(?P<key>{_KEY})\s*(?P<op>==|=|!=)\s*(?P<value>{_VALUE})\s*$")
_SET = re.compile(rf"^\s*(?P<key>{_KEY})\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\s*$")
_FIELD = re.compile(r"^\s*(?P<key>[A-Za-z0-9._-]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^,]*?)\s*$")


class SelectorError(ValueError):
    """A selector the apiserver would reject with 400 BadRequest."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!exists"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        # "!=" and "notin" also match objects that do not carry the key at all.
        return not present or labels[self.key] not in self.values


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_label_selector(text: str) -> tuple[Requirement, ...]:
    """Parse `a=b,c!=d,e in (f,g),h notin (i),j,!k`; every requirement must hold."""
    if not text.strip():
        return ()
    requirements = []
    for part in _split_top_level(text):
        if m := _SET.match(part):
            values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
            if not values:
                raise SelectorError(f"unable to parse requirement: {part.strip()!r}: a set needs at least one value")
            requirements.append(Requirement(m["key"], m["op"], values))
        elif m := _EQUALITY.match(part):
            op = "!=" if m["op"] == "!=" else "="
            requirements.append(Requirement(m["key"], op, frozenset([m["value"]])))
        elif m := _NOT_EXISTS.match(part):
            requirements.append(Requirement(m["key"], "!exists"))
        elif m := _EXISTS.match(part):
            requirements.append(Requirement(m["key"], "exists"))
        else:
            raise SelectorError(f"unable to parse requirement: found {part.strip()!r}, expected: in, notin, =, ==, !=, gt, lt")
    return tuple(requirements)


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    key: str
    equal: bool
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        return (fields.get(self.key, "") == self.value) == self.equal


def parse_field_selector(text: str, supported: frozenset[str]) -> tuple[FieldRequirement, ...]:
    """Parse `metadata.name=x,spec.nodeName!=y`; unknown field names are rejected."""
    if not text.strip():
        return ()
    requirements = []
    for part in text.split(","):
        m = _FIELD.match(part)
        if m is None:
            raise SelectorError(f"invalid selector: {text!r}; can't understand {part!r}")
        if m["key"] not in supported:
            raise SelectorError(f"field label not supported: {m['key']}")
        requirements.append(FieldRequirement(m["key"], m["op"] != "!=", m["value"]))
    return tuple(requirements)


Predicate = Callable[[Mapping[str, str], Mapping[str, str]], bool]


def make_predicate(labels: tuple[Requirement, ...], fields: tuple[FieldRequirement, ...]) -> Predicate | None:
    """A function of (labels, fields) -> bool, or None when everything matches."""
    if not labels and not fields:
        return None

    def predicate(obj_labels: Mapping[str, str], obj_fields: Mapping[str, str]) -> bool:
        return all(r.matches(obj_labels) for r in labels) and all(f.matches(obj_fields) for f in fields)

    return predicate
