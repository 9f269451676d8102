"""chrono's strftime (what VRL's format_timestamp and parse_timestamp use), on nanosecond timestamps.

Formatting covers chrono's directives with its padding modifiers (``%-d``,
``%_d``, ``%0d``); parsing covers the date, time, fraction, offset and name
directives real configs use, with chrono's rules: a space in the format
matches any whitespace, numbers may be preceded by whitespace, month and day
names match case-insensitively in short or long form. Python's strptime is
not used: it differs in each of these.
"""

from __future__ import annotations

import datetime
import re
from typing import Any

from ..value import Timestamp

_NANOS = 1_000_000_000
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_EXPAND = {"D": "%m/%d/%y", "x": "%m/%d/%y", "F": "%Y-%m-%d", "v": "%e-%b-%Y", "R": "%H:%M", "T": "%H:%M:%S",
           "X": "%H:%M:%S", "r": "%I:%M:%S %p", "c": "%a %b %e %H:%M:%S %Y", "h": "%b"}
_DIRECTIVE = re.compile(r"%([-_0]?)(\.?[369]?f|:{1,3}z|#z|[a-zA-Z%+])")


class FormatError(ValueError):
    """A format string chrono would refuse."""


def timezone_named(name: str) -> datetime.tzinfo | None:
    """A named zone or a fixed offset, as VRL's ``TimeZone::parse``; None when unknown."""
    if name == "local":
        return datetime.datetime.now().astimezone().tzinfo
    import zoneinfo  # here: with sysconfig, 0.6 MiB that programs without a named zone never need

    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


def _local(ts: Timestamp, tz: datetime.tzinfo | None) -> tuple[datetime.datetime, int]:
    seconds, nanos = divmod(ts.nanos, _NANOS)
    moment = _EPOCH + datetime.timedelta(seconds=seconds)
    return (moment.astimezone(tz) if tz is not None else moment), nanos


def _offset(moment: datetime.datetime, colons: int) -> str:
    total = int(moment.utcoffset().total_seconds())  # type: ignore[union-attr]
    sign = "-" if total < 0 else "+"
    hours, rest = divmod(abs(total), 3600)
    minutes, seconds = divmod(rest, 60)
    if colons == 0:
        return f"{sign}{hours:02d}{minutes:02d}"
    if colons == 2:
        return f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"
    if colons == 3:
        return f"{sign}{hours:02d}"
    return f"{sign}{hours:02d}:{minutes:02d}"


def _pad(number: int, width: int, flag: str, default: str = "0") -> str:
    pad = {"-": "", "_": " ", "0": "0"}.get(flag, default)
    text = str(abs(number))
    if pad:
        text = text.rjust(width, pad)
    return ("-" + text) if number < 0 else text


def _fraction(spec: str, nanos: int) -> str:
    if spec == ".f":
        from .display import fraction_auto

        return fraction_auto(nanos)
    digits = int(spec[-2]) if len(spec) >= 2 and spec[-2].isdigit() else 9
    text = f"{nanos:09d}"[:digits]
    return ("." + text) if spec.startswith(".") else text


def format_timestamp(ts: Timestamp, fmt: str, tz: datetime.tzinfo | None) -> str:
    """chrono's ``format``; raises FormatError for a directive chrono does not know."""
    moment, nanos = _local(ts, tz)
    out, last = [], 0
    for found in _DIRECTIVE.finditer(fmt):
        out.append(fmt[last : found.start()])
        out.append(_directive(found.group(1), found.group(2), moment, nanos, ts, tz))
        last = found.end()
    tail = fmt[last:]
    if "%" in tail:
        raise FormatError("invalid format")
    out.append(tail)
    return "".join(out)


def _directive(flag: str, spec: str, m: datetime.datetime, nanos: int, ts: Timestamp, tz: Any) -> str:
    if spec in _EXPAND:
        return format_timestamp(ts, _EXPAND[spec], tz)
    if spec.endswith("f"):
        return _fraction(spec, nanos)
    simple = {
        "Y": lambda: _pad(m.year, 4, flag) if 0 <= m.year <= 9999 else f"{m.year:+d}",
        "C": lambda: _pad(m.year // 100, 2, flag), "y": lambda: _pad(m.year % 100, 2, flag),
        "m": lambda: _pad(m.month, 2, flag), "q": lambda: str((m.month - 1) // 3 + 1), "b": lambda: MONTHS[m.month - 1][:3], "B": lambda: MONTHS[m.month - 1],
        "d": lambda: _pad(m.day, 2, flag), "e": lambda: _pad(m.day, 2, flag, " "),
        "a": lambda: DAYS[m.weekday()][:3], "A": lambda: DAYS[m.weekday()],
        "w": lambda: str(m.isoweekday() % 7), "u": lambda: str(m.isoweekday()),
        "U": lambda: _pad(int(m.strftime("%U")), 2, flag), "W": lambda: _pad(int(m.strftime("%W")), 2, flag),
        "G": lambda: _pad(m.isocalendar()[0], 4, flag), "g": lambda: _pad(m.isocalendar()[0] % 100, 2, flag),
        "V": lambda: _pad(m.isocalendar()[1], 2, flag), "j": lambda: _pad(m.timetuple().tm_yday, 3, flag),
        "H": lambda: _pad(m.hour, 2, flag), "k": lambda: _pad(m.hour, 2, flag, " "),
        "I": lambda: _pad((m.hour + 11) % 12 + 1, 2, flag), "l": lambda: _pad((m.hour + 11) % 12 + 1, 2, flag, " "),
        "P": lambda: "am" if m.hour < 12 else "pm", "p": lambda: "AM" if m.hour < 12 else "PM",
        "M": lambda: _pad(m.minute, 2, flag), "S": lambda: _pad(m.second, 2, flag),
        "Z": lambda: (m.tzname() or "UTC") if tz is not None else "UTC",
        "z": lambda: _offset(m, 0), ":z": lambda: _offset(m, 1), "::z": lambda: _offset(m, 2),
        ":::z": lambda: _offset(m, 3), "#z": lambda: _offset(m, 3),
        "s": lambda: str(ts.nanos // _NANOS), "t": lambda: "\t", "n": lambda: "\n", "%": lambda: "%",
        "+": lambda: format_timestamp(ts, "%Y-%m-%dT%H:%M:%S", tz) + _fraction(".f", nanos) + (_offset(m, 1) if tz is not None else "+00:00"),
    }
    handler = simple.get(spec)
    if handler is None:
        raise FormatError("invalid format")
    return handler()
