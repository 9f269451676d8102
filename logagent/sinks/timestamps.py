"""Record timestamps (RFC 3339 strings from the container runtime) as numbers and datetimes.

A kubelet writes nanosecond UTC timestamps such as ``2026-12-02T10:00:00.123456789Z``.
Sinks need them as Unix nanoseconds (Loki, OTLP) or as a datetime for strftime
(index names). Lines of one second share their second's conversion, so the
seconds part is parsed once and cached.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from datetime import datetime, timezone
from operator import itemgetter

#: How many distinct seconds are cached before the cache starts over.
_CACHE_LIMIT = 4096

_seconds_cache: dict[str, int | None] = {}
#: ``YYYY-MM-DDTHH:MM:SS`` of UTC ("Z") timestamps -> that second in nanoseconds
_utc_seconds_nanos: dict[str, int] = {}
#: the same -> that second since the epoch as decimal text
_utc_seconds_text: dict[str, str] = {}


def _epoch_seconds(head: str, offset: str) -> int | None:
    key = head + offset
    cached = _seconds_cache.get(key, -1)
    if cached != -1:
        return cached  # type: ignore[return-value]
    try:
        moment = datetime.fromisoformat(head + (offset if offset not in ("Z", "z", "") else "+00:00"))
        seconds: int | None = int(moment.timestamp())
    except ValueError:
        seconds = None
    if len(_seconds_cache) >= _CACHE_LIMIT:
        _seconds_cache.clear()
        _utc_seconds_nanos.clear()
        _utc_seconds_text.clear()
    _seconds_cache[key] = seconds
    if seconds is not None and offset == "Z":
        _utc_seconds_nanos[head] = seconds * 1_000_000_000
        _utc_seconds_text[head] = str(seconds)
    return seconds


def unix_nanos(timestamp: str | None) -> int | None:
    """``2026-12-02T10:00:00.5Z`` -> nanoseconds since the epoch; None if unreadable."""
    # the kubelet's own form, 2026-12-02T10:00:00.123456789Z, without the general parse
    if timestamp is not None and len(timestamp) == 30 and timestamp[29] == "Z":
        nanos = _utc_seconds_nanos.get(timestamp[:19])
        if nanos is not None:
            fraction = timestamp[20:29]
            if fraction.isdigit() and timestamp[19] == ".":
                return nanos + int(fraction)
    if not timestamp or len(timestamp) < 19 or timestamp[10] not in "Tt ":
        return None
    head = timestamp[:19]
    rest = timestamp[19:]
    fraction = ""
    if rest.startswith((".", ",")):
        end = 1
        while end < len(rest) and rest[end].isdigit():
            end += 1
        fraction, rest = rest[1:end], rest[end:]
    seconds = _epoch_seconds(head, rest)
    if seconds is None:
        return None
    nanos = int((fraction + "000000000")[:9]) if fraction else 0
    return seconds * 1_000_000_000 + nanos


def unix_nanos_text(timestamp: str | None) -> str | None:
    """``unix_nanos`` as decimal text; the kubelet's form is two cached strings joined."""
    if timestamp is not None and len(timestamp) == 30 and timestamp[29] == "Z":
        seconds = _utc_seconds_text.get(timestamp[:19])
        if seconds is not None and seconds != "0":
            fraction = timestamp[20:29]
            if fraction.isdigit() and timestamp[19] == ".":
                return seconds + fraction
    nanos = unix_nanos(timestamp)
    return None if nanos is None else str(nanos)


def utc_seconds(head: str) -> int | None:
    """Seconds since the epoch of ``YYYY-MM-DDTHH:MM:SS`` in UTC (cached); None if unreadable."""
    return _epoch_seconds(head, "Z")


_SECOND = itemgetter(slice(0, 19))
#: ``2026-12-02T10:00:00.123456789Z`` and the line feed that joins them
_KUBELET_CHARS = 31
#: distinct seconds in sorted timestamps filled run by run; more are looked up record by record
_MAX_SECOND_RUNS = 16
#: ``YYYY-MM-DDTHH:MM:SS`` (bytes) -> that second since the epoch as decimal text (bytes), ten digits
_kubelet_seconds: dict[bytes, bytes | None] = {}


def kubelet_nanos_texts(stamps: list[str | None]) -> tuple[bytes, bytes] | None:
    """Unix nanoseconds of timestamps all in the kubelet's form, as decimal text, in whole-list calls.

    Returns the texts joined by line feeds, and the timestamps (as bytes)
    likewise. Every text is 19 digits long (timestamps from 2001-09-09 to
    2286), so they sort as text. None when any timestamp is not of that form
    (UTC, nanoseconds): the caller then converts record by record.

    No Python code runs per record: the joined timestamps are checked and
    copied column by column (strided slices), the epoch seconds of each
    distinct second come from a cache and are written run by run when the
    timestamps are in order (as a file's lines are), else looked up per record
    in one ``map``.
    """
    count = len(stamps)
    try:
        raw = "\n".join(stamps).encode("ascii")  # type: ignore[arg-type]
    except (TypeError, UnicodeEncodeError):  # a record without a timestamp, or not ASCII
        return None
    width = _KUBELET_CHARS
    if len(raw) != width * count - 1 or raw[29::width].count(b"Z") != count or raw[19::width].count(b".") != count:
        return None
    if not all(raw[column::width].isdigit() for column in range(20, 29)):
        return None
    out = bytearray(20 * count - 1)
    out[19::20] = b"\n" * (count - 1)
    for column in range(9):  # the fraction's digits follow the ten of the seconds
        out[10 + column :: 20] = raw[20 + column :: width]
    if stamps == sorted(stamps):  # a file's lines in time order: a few runs of equal seconds
        filled = _fill_sorted_seconds(out, stamps)  # type: ignore[arg-type]
        if filled is not None:
            return (bytes(out), raw) if filled else None
    heads = list(map(_SECOND, raw.split(b"\n")))
    known = _kubelet_seconds
    for head in set(heads).difference(known):
        if _kubelet_second(head) is None:
            return None
    try:
        seconds_column = b"".join(map(known.__getitem__, heads))  # type: ignore[arg-type]
    except (KeyError, TypeError):  # the cache started over meanwhile, or a second before 2001
        return None
    for column in range(10):
        out[column::20] = seconds_column[column::10]
    return bytes(out), raw


def _fill_sorted_seconds(out: bytearray, stamps: list[str]) -> bool | None:
    """Write the seconds' digits of sorted timestamps, one run of equal seconds at a time.

    False if a second is unusable; None if there are too many distinct
    seconds for this to pay (then the caller looks them up one by one).
    """
    start, count, runs = 0, len(stamps), 0
    while start < count:
        runs += 1
        if runs > _MAX_SECOND_RUNS:
            return None
        head = stamps[start][:19]
        end = bisect_right(stamps, head + "/", start)  # "/" sorts after the "." that follows every second
        seconds = _kubelet_seconds.get(head.encode()) or _kubelet_second(head.encode())
        if seconds is None:
            return False
        for column in range(10):
            out[20 * start + column : 20 * end : 20] = seconds[column : column + 1] * (end - start)
        start = end
    return True


def _kubelet_second(second: bytes) -> bytes | None:
    value = utc_seconds(second.decode())
    if len(_kubelet_seconds) >= _CACHE_LIMIT:
        _kubelet_seconds.clear()
    text = _kubelet_seconds[second] = str(value).encode() if value is not None and 10**9 <= value < 10**10 else None
    return text


def kubelet_nanos(stamps: list[str | None]) -> list[int] | None:
    """``unix_nanos`` of timestamps all in the kubelet's form, in whole-list calls; None if any is not."""
    converted = kubelet_nanos_texts(stamps)
    if converted is None:
        return None
    return list(map(int, converted[0].split(b"\n")))


def now_nanos() -> int:
    return time.time_ns()


def utc_datetime(timestamp: str | None) -> datetime:
    """The record's time in UTC; the current time when it has none or it is unreadable."""
    nanos = unix_nanos(timestamp)
    if nanos is None:
        return datetime.now(timezone.utc)
    return datetime.fromtimestamp(nanos // 1_000_000_000, timezone.utc)


def is_utc(timestamp: str | None) -> bool:
    """Whether the string's own digits are UTC (a ``Z`` suffix), so its prefix names the UTC date."""
    return bool(timestamp) and timestamp[-1] in "Zz"  # type: ignore[index]
