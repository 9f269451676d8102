"""Encoding events for sinks: JSON built from the file's pre-encoded fields."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from logagent.event import LogEvent

_encode = msgspec.json.Encoder().encode
_STREAM = {"stdout": b',"stream":"stdout"', "stderr": b',"stream":"stderr"'}
_STREAM_THEN_TIMESTAMP = {stream: part + b',"timestamp":' for stream, part in _STREAM.items()}


def encode_json(event: LogEvent) -> bytes:
    """One event as a compact JSON object (no trailing newline).

    The file context's fields were encoded once; per line only the message,
    stream and timestamp are encoded.
    """
    parts = [event.ctx.json_head, _encode(event.message)]
    stream = event.stream
    if stream is not None:
        parts.append(_STREAM.get(stream) or b',"stream":' + _encode(stream))
    if event.timestamp is not None:
        parts.append(b',"timestamp":')
        parts.append(_encode(event.timestamp))
    if event.truncated:
        parts.append(b',"truncated":true')
    parts.append(b"}")
    return b"".join(parts)


def encode_text(event: LogEvent) -> bytes:
    """The message only, as UTF-8 (no trailing newline)."""
    return event.message.encode("utf-8", "surrogateescape")


def encode_ndjson(events: Iterable[LogEvent]) -> bytes:
    """Events as JSON lines, each ending in a newline, joined in one buffer.

    The same bytes as ``encode_json`` per event plus ``b"\\n"``.
    """
    return b"".join(encode_ndjson_parts(events))


def encode_ndjson_parts(events: Iterable[LogEvent]) -> list[bytes]:
    """The pieces of ``encode_ndjson`` in order, not joined (for ``os.writev``).

    One pass: a common record (a known stream, a timestamp, not truncated) is
    two parts, its message and timestamp the only encoder calls. The file's
    pre-encoded fields (often most of a record's bytes) are referenced, not
    copied; the small rest of the record is joined into one part, because each
    ``writev`` (at most IOV_MAX parts) costs the console sink's writer thread a
    round trip for the GIL while the event loop is busy, and that contention
    cost far more CPU than the join.
    """
    parts: list[bytes] = []
    encode = _encode
    tails = _STREAM_THEN_TIMESTAMP
    join = b"".join
    for event in events:
        tail = tails.get(event.stream)  # type: ignore[arg-type]
        timestamp = event.timestamp
        if tail is not None and timestamp is not None and not event.truncated:
            parts += (event.ctx.json_head, join((encode(event.message), tail, encode(timestamp), b"}\n")))
        else:
            parts += (encode_json(event), b"\n")
    return parts
