"""Record timestamps (RFC 3339 strings from the container runtime) as numbers and datetimes.

A kubelet writes nanosecond UTC timestamps such as ``2026-12-02T10:00:00.123456789Z``.
Sinks need them as Unix nanoseconds (Loki, OTLP) or as a datetime for strftime
(index names). Lines of one second share their second's conversion, so the
seconds part is parsed once and cached.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from operator import add, itemgetter

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
_FRACTION = itemgetter(slice(20, 29))
#: ``2026-12-02T10:00:00.123456789Z`` and the line feed that joins them
_KUBELET_CHARS = 31


def split_kubelet_stamps(stamps: list[str | None]) -> tuple[list[bytes], list[bytes], list[bytes]] | None:
    """Each timestamp's second (``YYYY-MM-DDTHH:MM:SS``), its nine fraction digits, and itself, as bytes.

    For a run of records in whole-list calls (no Python code per record).
    None unless every one is in the kubelet's form (UTC, nanoseconds); the
    seconds are not checked here (see :func:`utc_seconds`).
    """
    count = len(stamps)
    try:
        joined = "\n".join(stamps)  # type: ignore[arg-type]
    except TypeError:  # a record without a timestamp
        return None
    if len(joined) != _KUBELET_CHARS * count - 1 or joined[29::31].count("Z") != count or joined[19::31].count(".") != count:
        return None
    try:
        raw = joined.encode("ascii")
    except UnicodeEncodeError:
        return None
    whole = raw.split(b"\n")
    fractions = list(map(_FRACTION, whole))
    if not b"".join(fractions).isdigit():
        return None
    return list(map(_SECOND, whole)), fractions, whole


def kubelet_nanos(stamps: list[str | None]) -> list[int] | None:
    """``unix_nanos`` of timestamps all in the kubelet's form, in whole-list calls; None if any is not."""
    split = split_kubelet_stamps(stamps)
    if split is None:
        return None
    seconds, fractions, _ = split
    known = _utc_seconds_nanos
    try:
        base = list(map(known.__getitem__, map(bytes.decode, seconds)))
    except KeyError:
        for second in set(seconds):
            if utc_seconds(second.decode()) is None:
                return None
        try:
            base = list(map(known.__getitem__, map(bytes.decode, seconds)))
        except KeyError:  # the cache started over meanwhile
            return None
    return list(map(add, base, map(int, fractions)))


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
