"""An :class:`HttpProtocol` whose records are one part each, encoded event by event.

The backend protocols (Elasticsearch bulk, Loki push, OTLP) build a record per
event with state of their own (cached index names, label sets, resources) and
a body that is not a plain concatenation (grouped streams, one protobuf
message), so each record is a single byte string and the body is built whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from logagent.event import LogEvent
from logagent.sinks.http_protocol import HttpProtocol


class RecordProtocol(HttpProtocol):
    parts_per_record = 1

    def encode(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        parts: list[bytes] = []
        skipped = 0
        encode_event = self.encode_event
        for event in events:
            record = encode_event(event)
            if record is None:
                skipped += 1
            else:
                parts.append(record)
        return parts, skipped

    def encode_event(self, event: LogEvent) -> bytes | None:
        """One event as one record, or None if it cannot be encoded."""
        raise NotImplementedError

    def body_pieces(self, parts: Sequence[bytes], records_per_piece: int) -> Iterator[bytes]:
        yield self.build_body(parts)

    def build_body(self, parts: Sequence[bytes]) -> bytes:
        raise NotImplementedError

    def record(self, parts: Sequence[bytes]) -> bytes:
        return self.dead_letter_record(parts[0])

    def dead_letter_record(self, record: bytes) -> bytes:
        """The record as JSON for the dead-letter file."""
        return record
