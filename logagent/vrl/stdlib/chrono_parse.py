"""chrono's ``parse_from_str`` for VRL's parse_timestamp (see ``chrono.py`` for the rules followed)."""

from __future__ import annotations

import datetime
from typing import Any

from ..value import Timestamp
from .chrono import _EXPAND, DAYS, MONTHS

_NANOS = 1_000_000_000
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
INVALID, SHORT, TRAILING = "input contains invalid characters", "premature end of input", "trailing input"
RANGE, NOT_ENOUGH = "input is out of range", "input is not enough for unique date and time"
_WIDTH = {"m": 2, "d": 2, "e": 2, "H": 2, "k": 2, "I": 2, "l": 2, "M": 2, "S": 2, "y": 2, "C": 2, "j": 3}
_FIELD = {"m": "month", "d": "day", "e": "day", "H": "hour", "k": "hour", "I": "hour12", "l": "hour12", "M": "minute",
          "S": "second", "y": "year2", "C": "century", "j": "ordinal"}
_RANGES = {"month": (1, 12), "day": (1, 31), "hour": (0, 23), "hour12": (1, 12), "minute": (0, 59), "second": (0, 60),
           "ordinal": (1, 366), "year2": (0, 99), "century": (0, 99)}


class ParseError(ValueError):
    pass


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text, self.i, self.fields = text, 0, {}

    def skip_space(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def digits(self, low: int, high: int, signed: bool = False) -> int:
        self.skip_space()
        start, sign = self.i, 1
        if signed and self.text[self.i : self.i + 1] in ("+", "-"):
            sign = -1 if self.text[self.i] == "-" else 1
            self.i += 1
            high = 1 << 30
        digits_start = self.i
        while self.i < len(self.text) and self.i - digits_start < high and self.text[self.i].isdigit() and self.text[self.i].isascii():
            self.i += 1
        if self.i - digits_start < low:
            raise ParseError(SHORT if self.i >= len(self.text) and start == self.i else INVALID)
        return sign * int(self.text[digits_start : self.i])

    def name(self, names: list[str]) -> int:
        head = self.text[self.i : self.i + 3].lower()
        for index, full in enumerate(names):
            if full[:3].lower() == head:
                self.i += 3
                rest = full[3:].lower()
                if self.text[self.i : self.i + len(rest)].lower() == rest:
                    self.i += len(rest)
                return index
        raise ParseError(SHORT if len(self.text) - self.i < 3 else INVALID)

    def offset(self, allow_z: bool) -> int:
        self.skip_space()
        if allow_z and self.text[self.i : self.i + 1] in ("Z", "z"):
            self.i += 1
            return 0
        sign_char = self.text[self.i : self.i + 1]
        if sign_char not in ("+", "-"):
            raise ParseError(SHORT if not sign_char else INVALID)
        self.i += 1
        hours = self._two()
        if self.text.startswith(":", self.i):
            self.i += 1
        minutes = self._two() if self.i < len(self.text) and self.text[self.i].isdigit() else 0
        total = hours * 3600 + minutes * 60
        return -total if sign_char == "-" else total

    def _two(self) -> int:
        chunk = self.text[self.i : self.i + 2]
        if len(chunk) < 2:
            raise ParseError(SHORT)
        if not chunk.isdigit():
            raise ParseError(INVALID)
        self.i += 2
        return int(chunk)


def _set(fields: dict[str, Any], name: str, value: int) -> None:
    low_high = _RANGES.get(name)
    if low_high is not None and not low_high[0] <= value <= low_high[1]:
        raise ParseError(RANGE)
    if name in fields and fields[name] != value:
        raise ParseError("no possible date and time matching input")
    fields[name] = value


def _scan(s: _Scanner, fmt: str) -> None:
    i = 0
    while i < len(fmt):
        c = fmt[i]
        if c.isspace():
            s.skip_space()
            i += 1
            continue
        if c != "%":
            if s.i >= len(s.text):
                raise ParseError(SHORT)
            if s.text[s.i] != c:
                raise ParseError(INVALID)
            s.i += 1
            i += 1
            continue
        spec = fmt[i + 1 : i + 2]
        if spec in ("-", "_", "0"):
            i += 1
            spec = fmt[i + 1 : i + 2]
        if spec in (".", ":", "#") or spec.isdigit():
            end = i + 2
            while end < len(fmt) and not fmt[end].isalpha():
                end += 1
            spec = fmt[i + 1 : end + 1]
        i += 1 + len(spec)
        _directive(s, spec)


def _directive(s: _Scanner, spec: str) -> None:
    f = s.fields
    if spec in _EXPAND:
        _scan(s, _EXPAND[spec])
    elif spec == "Y":
        _set(f, "year", s.digits(1, 4, signed=True))
    elif spec in _WIDTH:
        _set(f, _FIELD[spec], s.digits(1, _WIDTH[spec]))
    elif spec in ("b", "B"):
        _set(f, "month", s.name(MONTHS) + 1)
    elif spec in ("a", "A"):
        s.name(DAYS)
    elif spec in ("p", "P"):
        meridiem = s.text[s.i : s.i + 2].lower()
        if meridiem not in ("am", "pm"):
            raise ParseError(SHORT if len(meridiem) < 2 else INVALID)
        s.i += 2
        f["pm"] = meridiem == "pm"
    elif spec in ("f", "3f", "6f", "9f", ".f", ".3f", ".6f", ".9f"):
        _fraction(s, spec.startswith("."))
    elif spec in ("z", ":z", "::z", "#z", ":::z"):
        _set(f, "offset", s.offset(False))
    elif spec == "Z":
        while s.i < len(s.text) and not s.text[s.i].isspace():
            s.i += 1
    elif spec == "s":
        _set(f, "timestamp", s.digits(1, 1 << 30, signed=True))
    elif spec == "+":
        _scan(s, "%Y-%m-%d")
        if s.text[s.i : s.i + 1] not in ("T", "t", " "):
            raise ParseError(SHORT if s.i >= len(s.text) else INVALID)
        s.i += 1
        _scan(s, "%H:%M:%S%.f")
        _set(f, "offset", s.offset(True))
    elif spec in ("t", "n"):
        s.skip_space()
    elif spec == "%":
        if not s.text.startswith("%", s.i):
            raise ParseError(SHORT if s.i >= len(s.text) else INVALID)
        s.i += 1
    else:
        raise ParseError("bad or unsupported format string")


def _fraction(s: _Scanner, dotted: bool) -> None:
    if dotted:
        if not s.text.startswith(".", s.i):
            return
        s.i += 1
    start = s.i
    while s.i < len(s.text) and s.text[s.i].isdigit() and s.text[s.i].isascii():
        s.i += 1
    digits = s.text[start : s.i]
    if not digits:
        raise ParseError(SHORT if s.i >= len(s.text) else INVALID)
    s.fields["nanos"] = int(digits[:9].ljust(9, "0"))


def parse(text: str, fmt: str) -> dict[str, Any]:
    scanner = _Scanner(text)
    _scan(scanner, fmt)
    if scanner.i < len(text):
        raise ParseError(TRAILING)
    return scanner.fields


def resolve(fields: dict[str, Any], tz: datetime.tzinfo | None, need_offset: bool) -> Timestamp:
    """The instant the parsed fields name, as chrono resolves them."""
    if "timestamp" in fields and len(fields.keys() - {"timestamp", "nanos", "offset"}) == 0:
        return Timestamp(fields["timestamp"] * _NANOS + fields.get("nanos", 0))
    year = fields.get("year")
    if year is None and "year2" in fields:
        year = fields.get("century", 19 if fields["year2"] >= 70 else 20) * 100 + fields["year2"]
    hour = fields.get("hour")
    if hour is None and "hour12" in fields and "pm" in fields:
        hour = fields["hour12"] % 12 + (12 if fields["pm"] else 0)
    if year is None or hour is None or "minute" not in fields or not ({"month", "day"} <= fields.keys() or "ordinal" in fields):
        raise ParseError(NOT_ENOUGH)
    try:
        if "month" in fields:
            date = datetime.date(year, fields["month"], fields["day"])
        else:
            date = datetime.date(year, 1, 1) + datetime.timedelta(days=fields["ordinal"] - 1)
    except ValueError:
        raise ParseError(RANGE) from None
    second = fields.get("second", 0)
    nanos = fields.get("nanos", 0) + max(second - 59, 0) * _NANOS
    seconds = (date.toordinal() - _EPOCH_ORDINAL) * 86400 + hour * 3600 + fields["minute"] * 60 + min(second, 59)
    if "offset" in fields:
        seconds -= fields["offset"]
    elif need_offset:
        raise ParseError(NOT_ENOUGH)
    elif tz is not None:
        naive = datetime.datetime(date.year, date.month, date.day, hour, fields["minute"], min(second, 59))
        offset = naive.replace(tzinfo=tz).utcoffset()
        seconds -= int(offset.total_seconds()) if offset is not None else 0
    return Timestamp(seconds * _NANOS + nanos)
