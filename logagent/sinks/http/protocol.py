"""What a protocol-specific HTTP sink supplies; the ``http`` sink's own ndjson/json.

The HTTP machinery (batching into lanes, compression, retries, 413 splitting,
dead-lettering, acknowledgements) lives in :mod:`logagent.sinks.http.sink`. A sink
that speaks a particular API (Elasticsearch bulk, Loki push, OTLP) gives it an
:class:`HttpProtocol`: how events become pre-encoded records, how a request
body is built from them, and, for APIs that answer per record inside a 2xx,
which records were delivered, are worth retrying, or go to the dead-letter
file.

Records travel as a flat list of byte strings, ``parts_per_record`` of them per
record, so that the parts a file shares (its pre-encoded metadata) are
referenced rather than copied per record, and a body is one join.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from logagent.encoding import encode_ndjson_parts, encode_text
from logagent.event import LogEvent
from logagent.sinks.http.records import encode_record
from logagent.sinks.shaping import Shaper


@dataclass
class Outcome:
    """Per-record result of a 2xx answer: indices of records in the request part.

    Records in neither list were delivered.
    """

    #: records to send again (after a backoff), in a request of their own
    retry: list[int] = field(default_factory=list)
    #: records rejected for good, with the reason written to the dead-letter file
    dead_letter: list[tuple[int, str]] = field(default_factory=list)


class HttpProtocol:
    """The base protocol: each record one JSON object, ndjson body, any 2xx delivers all.

    A record is two parts: its JSON object and its line end (the JSON object
    may itself be split where a file's shared fields end). Subclasses override
    what their API needs. ``body_pieces`` may run in a worker thread: it must
    only read ``parts`` (and immutable state).
    """

    content_type = "application/x-ndjson"
    parts_per_record = 2
    #: read the whole answer of a 2xx and give it to ``interpret``
    reads_answer = False
    #: the encoding options' shaping of each record (``only_fields`` ...), when set
    shaper: Shaper | None = None

    def encode(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        """The parts of the events that can be encoded, and how many could not.

        One call per run of events of one file: the common case costs one
        pass in :func:`logagent.encoding.encode_ndjson_parts`; a run holding an
        event that cannot be encoded as it is (lone surrogates from invalid
        UTF-8) is encoded event by event, with U+FFFD replacements.
        """
        if self.shaper is not None:
            events = self.shaper.each(events)
        try:
            parts = encode_ndjson_parts(events)
        except (UnicodeEncodeError, TypeError, ValueError):
            parts = None
        if parts is not None and len(parts) == 2 * len(events):
            return parts, 0
        parts = []
        skipped = 0
        for event in events:
            record = encode_record(event)
            if record is None:
                skipped += 1
            else:
                parts += (record, b"\n")
        return parts, skipped

    def skipped_reasons(self, skipped: int) -> Counter[str]:
        """Why the ``skipped`` records of the last ``encode`` were not encoded, counted by reason."""
        return Counter({"unencodable": skipped})

    def body_pieces(self, parts: Sequence[bytes], records_per_piece: int) -> Iterator[bytes]:
        """The request body of the records in ``parts``, in pieces of about ``records_per_piece`` records.

        The body is the concatenation of the pieces. A compressor consumes
        them one by one, so an uncompressed body of many megabytes never
        exists at once; uncompressed, the body is asked for as one piece.
        """
        step = records_per_piece * self.parts_per_record
        for start in range(0, len(parts), step):
            yield b"".join(parts[start : start + step])

    def body_size(self, parts: Sequence[bytes], nbytes: int) -> int | None:
        """The exact body length for records of ``nbytes`` bytes in all, if known without building it.

        When known, a large uncompressed body is streamed piece by piece
        rather than built whole. None (the default for protocols) builds it.
        """
        return None

    def body_parts(self, parts: Sequence[bytes]) -> Sequence[bytes] | None:
        """``parts`` if the body is exactly their concatenation, else None (the default).

        Such a body goes to the socket without being joined (``os.writev``),
        as the console sink writes: one copy of each byte fewer.
        """
        return None

    def build_body(self, parts: Sequence[bytes]) -> bytes:
        """The whole body as one byte string."""
        return b"".join(self.body_pieces(parts, len(parts)))

    def record(self, parts: Sequence[bytes]) -> bytes:
        """One record's JSON (its parts), as written to the dead-letter file."""
        return b"".join(parts).rstrip(b"\n")

    def interpret(self, answer: bytes, parts: Sequence[bytes]) -> Outcome | None:
        """The per-record outcome of a 2xx answer to the records of ``parts``; None: all delivered."""
        return None


class NdjsonProtocol(HttpProtocol):
    """The ``http`` sink's ndjson: the body is the parts as they are."""

    def body_size(self, parts: Sequence[bytes], nbytes: int) -> int | None:
        return nbytes

    def body_parts(self, parts: Sequence[bytes]) -> Sequence[bytes] | None:
        return parts


class JsonArrayProtocol(HttpProtocol):
    """The records as one JSON array."""

    content_type = "application/json"
    #: Vector's ``payload_prefix`` / ``payload_suffix`` around the array
    prefix = b""
    suffix = b""

    def body_size(self, parts: Sequence[bytes], nbytes: int) -> int | None:
        # "[" and "]", and one separator fewer than line ends
        return nbytes + 1 + len(self.prefix) + len(self.suffix)

    def body_pieces(self, parts: Sequence[bytes], records_per_piece: int) -> Iterator[bytes]:
        # Compact JSON never holds a raw line feed (strings escape it), so the
        # line ends are exactly the places of the separators.
        opening = self.prefix + b"["
        for lines in super().body_pieces(parts, records_per_piece):
            yield opening + lines[:-1].replace(b"\n", b",")
            opening = b","
        if opening != b",":  # no records: still an array
            yield opening
        yield b"]" + self.suffix


class TextProtocol(NdjsonProtocol):
    """Vector's ``codec: text``: each record's message on a line of its own."""

    content_type = "text/plain; charset=utf-8"

    def encode(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        parts: list[bytes] = []
        for event in events:
            parts += (encode_text(event), b"\n")
        return parts, 0


def protocol_for(body_format: str, shaper: Shaper | None = None) -> HttpProtocol:
    """The generic sink's protocol for its body format (``HttpSinkConfig.body_format``)."""
    protocol = {"json": JsonArrayProtocol, "text": TextProtocol}.get(body_format, NdjsonProtocol)()
    protocol.shaper = shaper or None
    return protocol
