"""Encoding events for sinks: JSON built from the file's pre-encoded fields."""

from __future__ import annotations

import msgspec

from logagent.event import LogEvent

_encode = msgspec.json.Encoder().encode
_STREAM = {"stdout": b',"stream":"stdout"', "stderr": b',"stream":"stderr"'}


def encode_json(event: LogEvent) -> bytes:
    """One event as a compact JSON object (no trailing newline).

    The file context's fields were encoded once; per line only the message,
    stream and timestamp are encoded.
    """
    body = event.ctx.json_body
    parts = [body, b',"message":' if len(body) > 1 else b'"message":', _encode(event.message)]
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
