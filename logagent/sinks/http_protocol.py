"""What a protocol-specific HTTP sink supplies; the ``http`` sink's own ndjson/json.

The HTTP machinery (batching into lanes, compression, retries, 413 splitting,
dead-lettering, acknowledgements) lives in :mod:`logagent.sinks.http`. A sink
that speaks a particular API (Elasticsearch bulk, Loki push, OTLP) gives it an
:class:`HttpProtocol`: how one event becomes one pre-encoded record, how a
request body is built from records, and, for APIs that answer per record
inside a 2xx, which records were delivered, are worth retrying, or go to the
dead-letter file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from logagent.event import LogEvent
from logagent.sinks.batching import encode_record


@dataclass
class Outcome:
    """Per-record result of a 2xx answer: indices into the request's records.

    Records in neither list were delivered.
    """

    #: records to send again (after a backoff), in a request of their own
    retry: list[int] = field(default_factory=list)
    #: records rejected for good, with the reason written to the dead-letter file
    dead_letter: list[tuple[int, str]] = field(default_factory=list)


class HttpProtocol:
    """The generic ``http`` sink's protocol: each record one JSON object, ndjson body.

    Subclasses override what their API needs. ``build_body`` may run in a
    worker thread: it must only read ``records`` (and immutable state).
    """

    content_type = "application/x-ndjson"
    #: read the whole answer of a 2xx and give it to ``interpret``
    reads_answer = False

    def encode(self, event: LogEvent) -> bytes | None:
        """One event as one record (bytes of JSON), or None if it cannot be encoded."""
        return encode_record(event)

    def build_body(self, records: Sequence[bytes]) -> bytes:
        """The request body of ``records``, built in one pass."""
        return b"\n".join(records) + b"\n"

    def record_size(self, record: bytes) -> int:
        """What one record adds to the body (for ``batch.max_bytes``)."""
        return len(record) + 1

    def interpret(self, answer: bytes, records: Sequence[bytes]) -> Outcome | None:
        """The per-record outcome of a 2xx answer; None when every record was delivered."""
        return None


class JsonArrayProtocol(HttpProtocol):
    """The records as one JSON array."""

    content_type = "application/json"

    def build_body(self, records: Sequence[bytes]) -> bytes:
        return b"[" + b",".join(records) + b"]"


def protocol_for(encoding: str) -> HttpProtocol:
    """The generic sink's protocol for its ``encoding`` option."""
    return JsonArrayProtocol() if encoding == "json" else HttpProtocol()
