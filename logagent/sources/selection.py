"""Kubernetes label and field selectors, parsed once and matched client-side.

Each source keeps its own selection while the pod watch underneath is shared,
so a source's ``extra_label_selector`` is applied here, against the compact
pod and namespace objects in the stores.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

Labels = Mapping[str, str]

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"


class SelectorError(ValueError):
    pass


class LabelSelector:
    """A conjunction of requirements; the empty selector matches everything."""

    def __init__(self, text: str, requirements: list[Callable[[Labels], bool]]) -> None:
        self.text = text
        self._requirements = requirements

    def __bool__(self) -> bool:
        return bool(self._requirements)

    def matches(self, labels: Labels | None) -> bool:
        labels = labels or {}
        return all(req(labels) for req in self._requirements)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts]


def parse_label_selector(text: str) -> LabelSelector:
    requirements: list[Callable[[Labels], bool]] = []
    if not text.strip():
        return LabelSelector(text, requirements)
    for part in _split_top_level(text):
        if not part:
            raise SelectorError(f"empty requirement in {text!r}")
        requirements.append(_parse_label_requirement(part))
    return LabelSelector(text, requirements)


def _check_key(key: str) -> str:
    if not re.fullmatch(_KEY, key):
        raise SelectorError(f"invalid label key {key!r}")
    return key


def _check_value(value: str) -> str:
    if len(value) > 63 or not re.fullmatch(_VALUE, value):
        raise SelectorError(f"invalid label value {value!r}")
    return value


def _parse_label_requirement(part: str) -> Callable[[Labels], bool]:
    set_match = re.fullmatch(r"(\S+)\s+(in|notin)\s*\(([^)]*)\)", part)
    if set_match:
        key = _check_key(set_match.group(1))
        values = frozenset(_check_value(v.strip()) for v in set_match.group(3).split(",") if v.strip())
        if not values:
            raise SelectorError(f"empty value set in {part!r}")
        if set_match.group(2) == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    op_match = re.fullmatch(r"([^!=\s]+)\s*(==|!=|=)\s*(\S*)", part)
    if op_match:
        key = _check_key(op_match.group(1))
        value = _check_value(op_match.group(3))
        if op_match.group(2) == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if part.startswith("!"):
        key = _check_key(part[1:].strip())
        return lambda labels: key not in labels
    key = _check_key(part)
    return lambda labels: key in labels


class FieldSelector:
    def __init__(self, text: str, requirements: list[tuple[str, bool, str]]) -> None:
        self.text = text
        #: (field, equal, value)
        self.requirements = requirements

    def __bool__(self) -> bool:
        return bool(self.requirements)

    def matches(self, fields: Mapping[str, Any]) -> bool:
        for field, equal, value in self.requirements:
            actual = fields.get(field)
            actual = "" if actual is None else str(actual)
            if (actual == value) != equal:
                return False
        return True


#: pod fields a field selector may name, as the apiserver supports them
POD_SELECTOR_FIELDS = frozenset(
    {"metadata.name", "metadata.namespace", "spec.nodeName", "status.podIP", "metadata.uid"}
)


def parse_field_selector(text: str) -> FieldSelector:
    requirements: list[tuple[str, bool, str]] = []
    if not text.strip():
        return FieldSelector(text, requirements)
    for part in (p.strip() for p in text.split(",")):
        match = re.fullmatch(r"([A-Za-z.]+)\s*(==|!=|=)\s*(\S*)", part)
        if not match:
            raise SelectorError(f"invalid requirement {part!r}, expected field=value or field!=value")
        field = match.group(1)
        if field not in POD_SELECTOR_FIELDS:
            raise SelectorError(f"unsupported field {field!r}, expected one of {', '.join(sorted(POD_SELECTOR_FIELDS))}")
        requirements.append((field, match.group(2) != "!=", match.group(3)))
    return FieldSelector(text, requirements)
