"""How ``logagent tap`` prints a record: json (one line), yaml (one document), logfmt (one line)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import yaml

_json = msgspec.json.Encoder().encode


def as_json(record: Any) -> str:
    return _json(record).decode("utf-8")


def as_yaml(record: Any) -> str:
    return yaml.safe_dump(record, sort_keys=False, allow_unicode=True, explicit_start=True).rstrip("\n")


def _flatten(value: Any, key: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for name, inner in value.items():
            yield from _flatten(inner, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list) and value:
        for index, inner in enumerate(value):
            yield from _flatten(inner, f"{key}[{index}]")
    else:
        yield key, value


def _logfmt_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = value if isinstance(value, str) else as_json(value)
    if text and not any(c in text for c in ' ="\\') and text.isprintable():
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def as_logfmt(record: Any) -> str:
    """Nested keys joined with dots (``kubernetes.pod_name=web``), list items as ``key[0]``."""
    return " ".join(f"{key}={_logfmt_value(value)}" for key, value in _flatten(record, ""))


FORMATS: dict[str, Callable[[Any], str]] = {"json": as_json, "yaml": as_yaml, "logfmt": as_logfmt}
