"""parse_syslog as VRL's (the syslog_loose crate), and to_syslog_level / _severity / _facility / _facility_code.

syslog_loose tries RFC 5424 first, then a loose RFC 3164 in which everything
but the timestamp is optional: ``[<pri>] timestamp [host] [tag[\\[pid\\]]][:]
[structured data] message``. So a line is a syslog message as soon as it starts
(after an optional ``<pri>``) with a timestamp: ``Feb  5 17:32:18``,
``Feb 5 2020 17:32:18`` or an RFC 3339 one followed by a space. A Spring Boot
line ``2026-12-02T10:00:00.456Z ERROR 1 --- [main] ...`` reads as host "ERROR",
appname "1". The parser below walks the text by index with the crate's rules
(which whitespace each step takes, what each field may contain); the shapes
and their results were taken from vrl-python, the oracle of the tests.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from ..function import FunctionError, TypeDef
from .chrono_parse import ParseError, resolve
from .declare import B, I, NULL, OBJ, TS, always, function, req
from .strings import WHITESPACE as _WHITESPACE

_ERROR = "unable to parse input as valid syslog message"
_WHITESPACE_SET = frozenset(_WHITESPACE)
SEVERITIES = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")
FACILITIES = ("kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news", "uucp", "cron", "authpriv", "ftp",
              "ntp", "audit", "alert", "clockd", *(f"local{n}" for n in range(8)))
_MONTHS = {name: number for number, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_DIGITS = re.compile(r"[0-9]+")
_BLANKS = re.compile(r"[ \t]*")  # nom's space0 / space1: spaces and tabs only
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))"
)
_PID = re.compile(r"[+-]?[0-9]+")
_ESCAPES = {"n": "\n", '"': '"', "\\": "\\", "]": "]"}


class _Fail(Exception):
    """This grammar does not match (the caller tries the next one)."""


def _digits(text: str, at: int, limit: int) -> tuple[int, int]:
    found = _DIGITS.match(text, at)
    if found is None or int(found.group()) > limit:
        raise _Fail
    return int(found.group()), found.end()


def _blanks(text: str, at: int, at_least_one: bool = False) -> int:
    end = _BLANKS.match(text, at).end()  # type: ignore[union-attr]
    if at_least_one and end == at:
        raise _Fail
    return end


def _word(text: str, at: int, colons: bool) -> tuple[str, int]:
    """A field up to whitespace (and, unless ``colons``, a colon); at least one character."""
    end = at
    while end < len(text) and text[end] not in _WHITESPACE_SET and (colons or text[end] != ":"):
        end += 1
    if end == at:
        raise _Fail
    return text[at:end], end


def _host(text: str, at: int) -> tuple[str | None, int]:
    """A host name: it may hold colons (``::1``), but not end with one (``host: message``); "-" is none.

    The "-" test is the crate's, made before the colon is dropped: ``-:`` is the host "-".
    """
    word, end = _word(text, at, True)
    if word == "-":
        return None, end
    if word.endswith(":"):
        word, end = word[:-1], end - 1
        if not word:
            raise _Fail
    return word, end


def _pri(text: str, at: int) -> tuple[int | None, int]:
    if not text.startswith("<", at):
        return None, at
    found = _DIGITS.match(text, at + 1)
    if found is None or not text.startswith(">", found.end()) or int(found.group()) > 255:
        return None, at
    return int(found.group()), found.end() + 1


def _rfc3339(text: str, at: int) -> tuple[Any, int]:
    """An RFC 3339 timestamp up to the next space (there must be one)."""
    end = text.find(" ", at)
    if end < 0:
        raise _Fail
    found = _RFC3339.fullmatch(text, at, end)
    if found is None:
        raise _Fail
    year, month, day, hour, minute, second, fraction, sign, off_hours, off_minutes = found.groups()
    fields: dict[str, Any] = {"year": int(year), "month": int(month), "day": int(day), "hour": int(hour),
                              "minute": int(minute), "second": int(second), "offset": 0}
    if fraction:
        fields["nanos"] = int(fraction[:9].ljust(9, "0"))
    if sign is not None:
        if int(off_hours) > 23 or int(off_minutes) > 59:
            raise _Fail
        fields["offset"] = (int(off_hours) * 3600 + int(off_minutes) * 60) * (-1 if sign == "-" else 1)
    if fields["hour"] > 23 or fields["minute"] > 59 or fields["second"] > 60:
        raise _Fail
    return _instant(fields), end


def _instant(fields: dict[str, Any]) -> Any:
    try:
        return resolve(fields, None, False)
    except (ParseError, ValueError, OverflowError):
        raise _Fail from None


def _resolve_year(month: int) -> int:
    """VRL's year for a timestamp without one: this year, or last year for December seen in January."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.year - 1 if month == 12 and now.month == 1 else now.year


def _bsd_timestamp(text: str, at: int) -> tuple[Any, int]:
    """``Mmm d hh:mm:ss[:]``, ``Mmm d yyyy hh:mm:ss[:]`` or RFC 3339."""
    month = _MONTHS.get(text[at:at + 3].lower())
    if month is not None:
        for with_year in (False, True):
            try:
                return _bsd_clock(text, _blanks(text, at + 3, True), month, with_year)
            except _Fail:
                continue
    return _rfc3339(text, at)


def _bsd_clock(text: str, at: int, month: int, with_year: bool) -> tuple[Any, int]:
    limit = 2**32 - 1
    day, at = _digits(text, at, limit)
    at = _blanks(text, at, True)
    if with_year:
        year, at = _digits(text, at, 2**31 - 1)
        at = _blanks(text, at, True)
    else:
        year = _resolve_year(month)
    clock = []
    for index in range(3):
        if index:
            if not text.startswith(":", at):
                raise _Fail
            at += 1
        number, at = _digits(text, at, limit)
        clock.append(number)
    if text.startswith(":", at):
        at += 1
    hour, minute, second = clock
    if hour > 23 or minute > 59 or second > 59:
        raise _Fail
    return _instant({"year": year, "month": month, "day": day, "hour": hour, "minute": minute, "second": second}), at


def _param_value(text: str, at: int) -> tuple[str, int]:
    if not text.startswith('"', at):
        raise _Fail
    out = []
    at += 1
    while at < len(text):
        char = text[at]
        if char == '"':
            return "".join(out), at + 1
        if char == "\\":
            if at + 1 >= len(text):
                raise _Fail
            escaped = text[at + 1]
            out.append(_ESCAPES.get(escaped, "\\" + escaped))
            at += 2
        else:
            out.append(char)
            at += 1
    raise _Fail


def _param(text: str, at: int) -> tuple[tuple[str, str], int]:
    end = at
    while end < len(text) and text[end] not in "]=":
        end += 1
    if end == at or not text.startswith("=", end):
        raise _Fail
    value, after = _param_value(text, _blanks(text, end + 1))
    return (text[at:end], value), after


def _element(text: str, at: int, need_params: bool) -> tuple[tuple[str, dict[str, str]], int]:
    """``[id name="value" ...]``, params separated by exactly one space."""
    if not text.startswith("[", at):
        raise _Fail
    end = at + 1
    while end < len(text) and text[end] not in _WHITESPACE_SET and text[end] not in "]=":
        end += 1
    if end == at + 1:
        raise _Fail
    ident, at = text[at + 1:end], _blanks(text, end)
    params: dict[str, str] = {}
    try:
        (name, value), at = _param(text, at)
        params[name] = value
        while text.startswith(" ", at):
            try:
                (name, value), at = _param(text, at + 1)
            except _Fail:
                break
            params[name] = value
    except _Fail:
        if need_params:
            raise
    if not text.startswith("]", at):
        raise _Fail
    return (ident, params), at + 1


def _structured_data(text: str, at: int, permissive: bool) -> tuple[list[tuple[str, dict[str, str]]], int]:
    """``-``, or one or more elements; a permissive (RFC 5424) reading skips a malformed ``[...]``."""
    if text.startswith("-", at):
        return [], at + 1
    elements: list[tuple[str, dict[str, str]]] = []
    count = 0
    while True:
        try:
            element, at = _element(text, at, not permissive)
            elements.append(element)
        except _Fail:
            close = text.find("]", at + 1) if permissive and text.startswith("[", at) else -1
            if close < 0:
                break
            at = close + 1
        count += 1
    if count == 0:
        raise _Fail
    return elements, at


def _optional(word: str) -> str | None:
    return None if word == "-" else word


def _rfc5424(text: str) -> dict[str, Any]:
    pri, at = _pri(text, 0)
    version, at = _digits(text, at, 2**32 - 1)
    timestamp, at = _rfc3339(text, _blanks(text, at, True))
    hostname, at = _host(text, _blanks(text, at, True))
    words = [hostname]
    for _ in range(3):  # appname, procid, msgid: anything up to whitespace but a lone colon
        word, at = _word(text, _blanks(text, at, True), True)
        if word == ":":
            raise _Fail
        words.append(_optional(word))
    elements, at = _structured_data(text, _blanks(text, at), True)
    hostname, appname, procid, msgid = words
    return _message(text[_blanks(text, at):], pri, version, timestamp, hostname, appname, procid, msgid, elements)


def _systag(field: str) -> tuple[str, str] | None:
    """``app[pid]`` as (app, pid), when the field is exactly that."""
    start = 0
    while start < len(field) and field[start] != "[":
        start += 1
    if start == len(field) or not field.endswith("]") or "]" in field[start + 1:-1] or len(field) - start < 3:
        return None
    return field[:start], field[start + 1:-1]


def _host_and_tag(first: str | None | bool, second: str | None | bool) -> tuple[str | None, str | None, str | None]:
    """syslog_loose's reading of the (up to) two words after the timestamp; False is a word not there, None "-"."""
    if first is not False and isinstance(second, str):
        tag = _systag(second)
        return (first or None, second, None) if tag is None else (first or None, *tag)
    only = first if second is False else second if first is False else None
    if isinstance(only, str):
        tag = _systag(only)
        return (only, None, None) if tag is None else (None, *tag)
    return None, None, None


def _rfc3164(text: str) -> dict[str, Any]:
    pri, at = _pri(text, 0)
    timestamp, at = _bsd_timestamp(text, _blanks(text, at))
    words: list[str | None | bool] = []
    for _ in range(2):  # host, tag: each after exactly one space
        if not text.startswith(" ", at):
            words.append(False)
            continue
        try:
            if words:
                tag, at = _word(text, at + 1, False)
                words.append(_optional(tag))
            else:
                host, at = _host(text, at + 1)
                words.append(host)
        except _Fail:
            words.append(False)
    at = _blanks(text, at)
    if text.startswith(":", at):
        at += 1
    at = _blanks(text, at)
    try:
        elements, at = _structured_data(text, at, False)
    except _Fail:
        elements = []
    hostname, appname, procid = _host_and_tag(*words)
    return _message(text[_blanks(text, at):], pri, None, timestamp, hostname, appname, procid, None, elements)


def _message(message: str, pri: int | None, version: int | None, timestamp: Any, hostname: str | None,
             appname: str | None, procid: str | None, msgid: str | None,
             elements: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    fields: dict[str, Any] = {"message": message}
    if hostname is not None:
        fields["hostname"] = hostname
    if pri is not None:
        fields["severity"] = SEVERITIES[pri & 7]
        if pri >> 3 < len(FACILITIES):
            fields["facility"] = FACILITIES[pri >> 3]
    if version is not None:
        fields["version"] = version
    if appname is not None:
        fields["appname"] = appname
    if msgid is not None:
        fields["msgid"] = msgid
    fields["timestamp"] = timestamp
    if procid is not None:
        fields["procid"] = int(procid) if _PID.fullmatch(procid) and -2**31 <= int(procid) < 2**31 else procid
    for ident, params in elements:
        fields[ident] = params
    return fields


def parse_syslog(value: str) -> dict[str, Any]:
    text = value.strip(_WHITESPACE)
    for grammar in (_rfc5424, _rfc3164):
        try:
            return grammar(text)
        except _Fail:
            continue
    raise FunctionError(_ERROR)


# the fields VRL's type checks know; structured data adds objects under their ids
_SYSLOG_FIELDS = {"message": B, "timestamp": TS | NULL, "procid": B | I | NULL, "version": I | NULL} | {
    name: B | NULL for name in ("hostname", "severity", "facility", "appname", "msgid")}
_PARSED = TypeDef(OBJ, True, _SYSLOG_FIELDS)

# to_syslog_facility's names: parse_syslog's, but 13-15 as VRL's table names them
_FACILITY_NAMES = (*FACILITIES[:13], "security", "console", "solaris-cron", *FACILITIES[16:])
_FACILITY_CODES = {name: code for code, name in enumerate(_FACILITY_NAMES)}
_SEVERITY_CODES = {name: code for code, name in enumerate(SEVERITIES)} | {"panic": 0, "error": 3, "warn": 4}


def to_syslog_level(value: int) -> str:
    if not 0 <= value < len(SEVERITIES):
        raise FunctionError(f"severity level {value} not valid")
    return SEVERITIES[value]


def to_syslog_severity(value: str) -> int:
    code = _SEVERITY_CODES.get(value)
    if code is None:
        raise FunctionError(f"syslog level {value} not valid")
    return code


def to_syslog_facility(value: int) -> str:
    if not 0 <= value < len(_FACILITY_NAMES):
        raise FunctionError(f"facility code {value} not valid")
    return _FACILITY_NAMES[value]


def to_syslog_facility_code(value: str) -> int:
    code = _FACILITY_CODES.get(value)
    if code is None:
        raise FunctionError(f"syslog facility '{value}' not valid")
    return code


FUNCTIONS = [
    function("parse_syslog", (req("value", B),), lambda args: _PARSED, parse_syslog),
    function("to_syslog_level", (req("value", I),), always(B, True), to_syslog_level),
    function("to_syslog_severity", (req("value", B),), always(I, True), to_syslog_severity),
    function("to_syslog_facility", (req("value", I),), always(B, True), to_syslog_facility),
    function("to_syslog_facility_code", (req("value", B),), always(I, True), to_syslog_facility_code),
]
