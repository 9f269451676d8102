"""VRL timestamps to and from RFC 3339 text."""

from __future__ import annotations

import time

from logagent.sinks.timestamps import unix_nanos

from .value import Timestamp


def parse_rfc3339(text: str) -> int | None:
    """Nanoseconds since the epoch of an RFC 3339 timestamp; None when it is not one."""
    if len(text) < 20 or text[10] not in "Tt" or not (text.endswith(("Z", "z")) or text[-6] in "+-"):
        return None
    return unix_nanos(text)


def to_timestamp(text: str) -> Timestamp | str:
    """A record's ``timestamp`` text as a Timestamp (the text itself when it is not RFC 3339)."""
    nanos = unix_nanos(text)
    return text if nanos is None else Timestamp(nanos)


def format_rfc3339(value: Timestamp) -> str:
    """``2026-12-04T10:00:00.123456789Z``: UTC, nine digits of fraction, as the kubelet writes."""
    seconds, nanos = divmod(value.nanos, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{nanos:09d}Z"
