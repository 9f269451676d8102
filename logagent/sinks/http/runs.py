"""Runs of records: the checks the backend protocols make before encoding a run in whole-run calls.

A run is the list of records one ``encode`` call gets. When every record is
of one file, has no per-record fields and is not truncated, its encoding is
the file's shared part plus a few per-record values, and the protocols
(Loki, OTLP, Elasticsearch) encode it with a few calls for the whole run;
anything else goes record by record.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from logagent.event import LogEvent

TIMESTAMP = attrgetter("timestamp")
MESSAGE = attrgetter("message")
STREAM = attrgetter("stream")
CTX = attrgetter("ctx")
FIELDS = attrgetter("fields")
TRUNCATED = attrgetter("truncated")


def of_one_file(events: Sequence[LogEvent]) -> bool:
    """Whether every record of a non-empty run shares the first one's file context."""
    return list(map(CTX, events)).count(events[0].ctx) == len(events)


def is_plain_run(events: Sequence[LogEvent]) -> bool:
    """One file's records, none with fields of its own, none truncated."""
    return (
        of_one_file(events)
        and list(map(FIELDS, events)).count(None) == len(events)
        and not any(map(TRUNCATED, events))
    )
