"""Vector's ``ingestion_timestamp_field``: the time the source read each record, in a field of its own.

Only sources that set it pay for it: their records carry a per-record
``fields`` dict (the slower encoding path), everyone else's do not.
"""

from __future__ import annotations

from datetime import UTC, datetime

from logagent.event import LogEvent


def ingestion_time() -> str:
    """Now, as RFC 3339 in UTC with microseconds (how Vector writes a timestamp in JSON, to the microsecond)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def stamp(events: list[LogEvent], field: str) -> list[LogEvent]:
    """The events with ``field`` set to the time they were read (one clock reading per chunk)."""
    now = {field: ingestion_time()}
    # a source's events have no per-record fields of their own yet (event.py), so each gets the one dict
    return [LogEvent(e.message, e.stream, e.timestamp, e.ctx, e.truncated, now) for e in events]
