"""Parsers of log formats: parse_klog, parse_glog, parse_common_log, parse_apache_log, parse_nginx_log."""

from __future__ import annotations

import datetime
from typing import Any

from ..function import ArgumentError, FunctionError
from ..value import Timestamp
from .chrono_parse import ParseError, parse, resolve
from ..function import TypeDef
from .declare import B, F, I, NULL, OBJ, TS, Args, function, opt, req
from .regex import LazyRegex, Regex
from .types import rust_parse_float

_KLOG = LazyRegex(
    r"^\s*(?P<level>\w)(?P<timestamp>(?P<month>\d{2})\d{2}\s\d{2}:\d{2}:\d{2}\.\d{6})\s+(?P<id>\d+)\s"
    r"(?P<file>.+):(?P<line>\d+)\]\s(?P<message>.*?)\s*$"
)
_KLOG_LEVELS = {"I": "info", "W": "warning", "E": "error", "F": "fatal"}
# `[[\\"][^"]]` in VRL's pattern (a nested class) is any character
_ANY = r"(?s:.)"
_COMMON = LazyRegex(
    r"^\s*(-|(?P<host>.*?))\s+(-|(?P<identity>.*?))\s+(-|(?P<user>.*?))\s+(-|\[(-|(?P<timestamp>[^\[]*))\])\s+"
    r'(-|"(-|(\s*(?P<message>((?P<method>\w+)\s+(?P<path>' + _ANY + r"*?)\s+(?P<protocol>" + _ANY + r"*?)\s*|"
    + _ANY + r'*?))\s*))")\s+(-|(?P<status>\d+))\s+(-|(?P<size>\d+))\s*$'
)
_FLOAT_FIELDS = frozenset(("excess", "request_time", "upstream_response_time"))
_INTEGER_FIELDS = frozenset(("status", "size", "pid", "tid", "cid", "port", "body_bytes_size", "request_length",
                             "upstream_response_length", "upstream_status"))


def parse_klog(value: str) -> dict[str, Any]:
    return _klog_like(_KLOG, "klog", value)


# glog's line is klog's with the year in the timestamp
_GLOG = LazyRegex(
    r"^\s*(?P<level>\w)(?P<timestamp>\d{4}\d{2}\d{2}\s\d{2}:\d{2}:\d{2}\.\d{6})\s+(?P<id>\d+)\s"
    r"(?P<file>.+):(?P<line>\d+)\]\s(?P<message>.*?)\s*$"
)


def parse_glog(value: str) -> dict[str, Any]:
    return _klog_like(_GLOG, "glog", value)


def _klog_like(regex: LazyRegex, name: str, value: str) -> dict[str, Any]:
    """klog's or glog's fields; klog's timestamp has no year (this year's, last year's for December in January)."""
    groups = regex.captures(value)
    if groups is None:
        raise FunctionError(f"failed parsing {name} message")
    names = regex.names
    level = groups[names["level"]]
    if level not in _KLOG_LEVELS:
        raise FunctionError(f'unrecognized log level "{level}"')
    stamp = full_stamp = groups[names["timestamp"]]
    if "month" in names:
        now = datetime.datetime.now(datetime.timezone.utc)
        year = now.year - 1 if groups[names["month"]] == "12" and now.month == 1 else now.year
        full_stamp = f"{year}{stamp}"
    try:
        timestamp = resolve(parse(full_stamp, "%Y%m%d %H:%M:%S%.f"), None, False)  # type: ignore[arg-type]
    except ParseError as error:
        raise FunctionError(f"failed parsing timestamp {stamp}: {error}") from None
    return {
        "level": _KLOG_LEVELS[level],
        "timestamp": timestamp,
        "id": int(groups[names["id"]]),  # type: ignore[arg-type]
        "file": groups[names["file"]],
        "line": int(groups[names["line"]]),  # type: ignore[arg-type]
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
        elif name in _FLOAT_FIELDS:
            try:
                fields[name] = rust_parse_float(text)
            except ValueError:
                raise FunctionError(f"failed parsing {name}") from None
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


# Apache's formats (VRL's patterns, written without the `x` flag RE2 lacks): common is parse_common_log's;
# combined adds the quoted referrer and agent and, as VRL's, is not anchored at the end; error tries a
# simple shape, then Apache 2.4's threaded MPM shape (whose message parts VRL returns as message1, message2)
_COMBINED = LazyRegex(
    _COMMON.pattern[: _COMMON.pattern.rindex(r"\s*$")]
    + r'\s+(-|"(-|(\s*(?P<referrer>' + _ANY + r'*?)")))\s+(-|"(-|(\s*(?P<agent>' + _ANY + r'*?)")))'
)
_APACHE_ERROR = (
    LazyRegex(
        r"^\s*(-|\[(-|(?P<timestamp>[^\[]*))\])\s+(-|\[(-|(?P<module>[^:]*):(?P<severity>[^\[]*))\])\s+"
        r"(-|\[\s*pid\s*(-|(?P<pid>[^:]*)(:\s*tid\s*(?P<thread>[^\[]*))?)\])\s"
        r"(-|\[\s*client\s*(-|(?P<client>.*:?):(?P<port>[^\[]*))\])\s(-|(?P<message>.*))\s*$"
    ),
    LazyRegex(
        r"^\s*\[(?P<timestamp>[^\]]+)\]\s+\[(-|(?P<module>[^:]+)):(?P<severity>[^\]]+)\]\s+"
        r"\[pid\s+(?P<pid>\d+)(:tid\s+(?P<thread>\d+))?\]\s+(?P<message1>[^\[]*?:\s+([^\[]*?:\s+)?)?"
        r"(\[client\s+(?P<client>.+?):(?P<port>\d+)\]\s+)?(?P<message2>.*)(,referer.*)?\s*$"
    ),
)
_APACHE = {"common": (_COMMON,), "combined": (_COMBINED,), "error": _APACHE_ERROR}


def parse_apache_log(value: str, format_: str, timestamp_format: str | None) -> dict[str, Any]:
    for pattern in _APACHE[format_]:
        groups = pattern.captures(value)
        if groups is not None:
            return _log_fields(pattern, groups, "%d/%b/%Y:%T %z" if timestamp_format is None else timestamp_format)
    raise FunctionError(f"failed parsing {format_} log line")


_NGINX = {
    "combined": LazyRegex(
        r'^\s*(-|(?P<client>\S+))\s+\-\s+(-|(?P<user>\S+))\s+\[(?P<timestamp>.+)\]\s+"(?P<request>[^"]*)"\s+'
        r'(?P<status>\d+)\s+(?P<size>\d+)\s+"(?P<referer>[^"]*)"\s+"(?P<agent>[^"]*)"(\s+"(-|(?P<compression>[^"]+))")?\s*$'
    ),
    "main": LazyRegex(
        r'^\s*(-|(?P<remote_addr>\S+))\s+\-\s+(-|(?P<remote_user>\S+))\s+\[(?P<timestamp>[^\]]+)\]\s+"(?P<request>[^"]*)"\s+'
        r'(?P<status>\d+)\s+(?P<body_bytes_size>\d+)\s+"(-|(?P<http_referer>[^"]*))"\s+"(-|(?P<http_user_agent>[^"]+))"\s+'
        r'"(-|(?P<http_x_forwarded_for>[^"]+))"\s*$'
    ),
    "ingress_upstreaminfo": LazyRegex(
        r'^\s*(-|(?P<remote_addr>\S+))\s+\-\s+(-|(?P<remote_user>\S+))\s+\[(?P<timestamp>[^\]]+)\]\s+"(?P<request>[^"]*)"\s+'
        r'(?P<status>\d+)\s+(?P<body_bytes_size>\d+)\s+"(-|(?P<http_referer>[^"]*))"\s+"(-|(?P<http_user_agent>[^"]+))"\s+'
        r"(?P<request_length>\d+)\s+(?P<request_time>\d+\.\d+)\s+\[(?P<proxy_upstream_name>[^\]]+)\]\s+"
        r"\[(?P<proxy_alternative_upstream_name>[^\]]+)?\]\s+(?P<upstream_addr>\S+)\s+(-|(?P<upstream_response_length>\d+))\s+"
        r"(-|(?P<upstream_response_time>\d+\.\d+))\s+(-|(?P<upstream_status>\d+))\s+(?P<req_id>\S+)\s*$"
    ),
    "error": LazyRegex(
        r"^\s*(?P<timestamp>.+)\s+\[(?P<severity>\w+)\]\s+(?P<pid>\d+)\#(?P<tid>\d+):(\s+\*(?P<cid>\d+))?\s+(?P<message>.+?)"
        r'(,\s+excess:\s+(?P<excess>[^\s,]+),?\sby\szone\s"(?P<zone>[^,]+)")?(,\s+client:\s+(?P<client>[^,]+))?'
        r'(,\s+server:\s+(?P<server>[^,]*))?(,\s+request:\s+"(?P<request>[^"]*)")?(,\s+upstream:\s+"(?P<upstream>[^"]*)")?'
        r'(,\s+host:\s+"(?P<host>[^"]*)")?(,\s+refer?rer:\s+"(?P<referrer>[^"]*)")?\s*$'
    ),
}


def parse_nginx_log(value: str, format_: str, timestamp_format: str | None) -> dict[str, Any]:
    pattern = _NGINX[format_]
    groups = pattern.captures(value)
    if groups is None:
        raise FunctionError("failed parsing log line")
    default = "%Y/%m/%d %H:%M:%S" if format_ == "error" else "%d/%b/%Y:%T %z"
    fields = _log_fields(pattern, groups, default if timestamp_format is None else timestamp_format)
    if "referrer" in fields:
        fields["referer"] = fields.pop("referrer")
    return fields


# The fields VRL's type checks know of each parser's object (and no others: reading another is null)
_COMMON_FIELDS = {name: B | NULL for name in ("host", "identity", "user", "message", "method", "path", "protocol")} | {
    "timestamp": TS | NULL, "status": I | NULL, "size": I | NULL}
_APACHE_FIELDS = {
    "common": _COMMON_FIELDS,
    "combined": _COMMON_FIELDS | {"referrer": B | NULL, "agent": B | NULL},
    "error": {"timestamp": TS | NULL} | {name: B | NULL for name in ("module", "severity", "thread", "port", "message")},
}
_NGINX_ACCESS = {"remote_addr": B | NULL, "remote_user": B | NULL, "timestamp": TS, "request": B, "status": I,
                 "body_bytes_size": I, "http_referer": B | NULL, "http_user_agent": B | NULL}
_NGINX_FIELDS = {
    "combined": {"client": B, "user": B | NULL, "timestamp": TS, "request": B, "status": I, "size": I,
                 "referer": B | NULL, "agent": B | NULL, "compression": B | NULL},
    "main": _NGINX_ACCESS | {"http_x_forwarded_for": B | NULL},
    "ingress_upstreaminfo": _NGINX_ACCESS | {
        "request_length": I, "request_time": F, "proxy_upstream_name": B, "proxy_alternative_upstream_name": B | NULL,
        "upstream_addr": B, "upstream_response_length": I, "upstream_response_time": F, "upstream_status": I,
        "req_id": B},
    "error": {"timestamp": TS, "severity": B, "pid": I, "tid": I, "cid": I, "message": B, "excess": F | NULL} | {
        name: B | NULL for name in ("zone", "client", "server", "request", "upstream", "host", "port")},
}
_KLOG_FIELDS = {"level": B, "timestamp": TS, "id": I, "file": B, "line": I, "message": B}
_SYSLOG_FIELDS = {"message": B, "timestamp": TS | NULL, "procid": B | I | NULL, "version": I | NULL} | {
    name: B | NULL for name in ("hostname", "severity", "facility", "appname", "msgid")}


def _object_of(fields: dict[str, Any]) -> Any:
    result = TypeDef(OBJ, True, fields)
    return lambda args: result


def _object_by_format(tables: dict[str, dict[str, Any]]) -> Any:
    def type_def(args: Args) -> TypeDef:
        arg = args[1]
        return TypeDef(OBJ, True, tables.get(arg.value) if arg is not None and arg.constant else None)

    return type_def


def _format_check(formats: dict[str, Any]) -> Any:
    def check(args: Any) -> None:
        arg = args[1]
        if arg is None or not arg.constant or arg.value not in formats:
            names = ", ".join(f'"{name}"' for name in formats)
            raise ArgumentError(f'invalid enum variant for argument "format"; expected one of: {names}')

    return check


FUNCTIONS = [
    function("parse_nginx_log", (req("value", B), req("format", B), opt("timestamp_format", B)),
             _object_by_format(_NGINX_FIELDS), parse_nginx_log, check=_format_check(_NGINX)),
    function("parse_apache_log", (req("value", B), req("format", B), opt("timestamp_format", B)),
             _object_by_format(_APACHE_FIELDS), parse_apache_log, check=_format_check(_APACHE)),
    function("parse_klog", (req("value", B),), _object_of(_KLOG_FIELDS), parse_klog),
    function("parse_glog", (req("value", B),), _object_of(_KLOG_FIELDS), parse_glog),
    function("parse_common_log", (req("value", B), opt("timestamp_format", B)), _object_of(_COMMON_FIELDS),
             parse_common_log),
]

