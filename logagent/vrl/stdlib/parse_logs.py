"""Parsers of log formats: parse_klog, parse_common_log (Apache common)."""

from __future__ import annotations

import datetime
from typing import Any

from ..function import FunctionError
from ..value import Timestamp
from .chrono_parse import ParseError, parse, resolve
from .declare import B, OBJ, always, function, opt, req
from .regex import Regex

_KLOG = Regex(
    r"^\s*(?P<level>\w)(?P<timestamp>(?P<month>\d{2})\d{2}\s\d{2}:\d{2}:\d{2}\.\d{6})\s+(?P<id>\d+)\s"
    r"(?P<file>.+):(?P<line>\d+)\]\s(?P<message>.*?)\s*$"
)
_KLOG_LEVELS = {"I": "info", "W": "warning", "E": "error", "F": "fatal"}
# `[[\\"][^"]]` in VRL's pattern (a nested class) is any character
_ANY = r"(?s:.)"
_COMMON = Regex(
    r"^\s*(-|(?P<host>.*?))\s+(-|(?P<identity>.*?))\s+(-|(?P<user>.*?))\s+(-|\[(-|(?P<timestamp>[^\[]*))\])\s+"
    r'(-|"(-|(\s*(?P<message>((?P<method>\w+)\s+(?P<path>' + _ANY + r"*?)\s+(?P<protocol>" + _ANY + r"*?)\s*|"
    + _ANY + r'*?))\s*))")\s+(-|(?P<status>\d+))\s+(-|(?P<size>\d+))\s*$'
)
_INTEGER_FIELDS = frozenset(("status", "size", "pid", "tid", "cid", "port", "body_bytes_size", "request_length",
                             "upstream_response_length", "upstream_status"))


def parse_klog(value: str) -> dict[str, Any]:
    groups = _KLOG.captures(value)
    if groups is None:
        raise FunctionError("failed parsing klog message")
    names = _KLOG.names
    level = groups[names["level"]]
    if level not in _KLOG_LEVELS:
        raise FunctionError(f'unrecognized log level "{level}"')
    stamp, month = groups[names["timestamp"]], groups[names["month"]]
    now = datetime.datetime.now(datetime.timezone.utc)
    year = now.year - 1 if month == "12" and now.month == 1 else now.year
    try:
        timestamp = resolve(parse(f"{year}{stamp}", "%Y%m%d %H:%M:%S%.f"), None, False)
    except ParseError as error:
        raise FunctionError(f"failed parsing timestamp {stamp}: {error}") from None
    return {
        "level": _KLOG_LEVELS[level],
        "timestamp": timestamp,
        "id": int(groups[names["id"]]),
        "file": groups[names["file"]],
        "line": int(groups[names["line"]]),
        "message": groups[names["message"]],
    }


def _parse_time(text: str, fmt: str) -> Timestamp:
    try:
        return resolve(parse(text, fmt), None, False)
    except ParseError as error:
        raise FunctionError(f"failed parsing timestamp {text} using format {fmt}: {error}") from None


def _log_fields(pattern: Regex, groups: list[str | None], timestamp_format: str) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, index in pattern.names.items():
        text = groups[index]
        if text is None:
            continue
        if name == "timestamp":
            fields[name] = _parse_time(text, timestamp_format)
        elif name in _INTEGER_FIELDS:
            if not text.isdigit() or int(text) >= 2**63:
                raise FunctionError(f"failed parsing {name}")
            fields[name] = int(text)
        else:
            fields[name] = text
    return fields


def parse_common_log(value: str, timestamp_format: str | None) -> dict[str, Any]:
    groups = _COMMON.captures(value)
    if groups is None:
        raise FunctionError("failed parsing common log line")
    return _log_fields(_COMMON, groups, "%d/%b/%Y:%T %z" if timestamp_format is None else timestamp_format)


FUNCTIONS = [
    function("parse_klog", (req("value", B),), always(OBJ, True), parse_klog),
    function("parse_common_log", (req("value", B), opt("timestamp_format", B)), always(OBJ, True), parse_common_log),
]
