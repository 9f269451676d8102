"""Encoding events for sinks: JSON built from the file's pre-encoded fields."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from logagent.event import MERGED_MESSAGE, FileContext, LogEvent, MessageFields, SharedFields, raw_fields

_encode = msgspec.json.Encoder().encode
_STREAM = {"stdout": b',"stream":"stdout"', "stderr": b',"stream":"stderr"'}
_STREAM_THEN_TIMESTAMP = {stream: part + b',"timestamp":' for stream, part in _STREAM.items()}
_MESSAGE_KEY = b',"message":'



def encode_json(event: LogEvent) -> bytes:
    """One event as a compact JSON object (no trailing newline): the complete record.

    The file context's fields were encoded once; per line only the message,
    stream and timestamp are encoded, and the event's own ``fields`` if any.
    """
    if event.message is None:
        return _encode_without_message(event)
    return event.ctx.json_head + _after_head(event, b"}")


def _after_head(event: LogEvent, end: bytes) -> bytes:
    """What follows ``ctx.json_head`` for an event with a message, closed by ``end``."""
    parts = [_encode(event.message)]
    stream = event.stream
    if stream is not None:
        parts.append(_STREAM.get(stream) or b',"stream":' + _encode(stream))
    if event.timestamp is not None:
        parts.append(b',"timestamp":')
        parts.append(_encode(event.timestamp))
    if event.truncated:
        parts.append(b',"truncated":true')
    fields = event.fields
    if type(fields) is MessageFields:
        parts.append(fields.prefix)
        parts.append(event.message.encode())  # type: ignore[union-attr]  # the object's text, validated
    elif fields is MERGED_MESSAGE:  # the object's keys as the message writes them, between its braces
        parts.append(b",")
        parts.append(event.message[1:-1].encode())  # type: ignore[index]
    elif fields:
        # {"a":1,...} without its braces continues the record
        parts.append(b",")
        parts.append(_encode(fields)[1:-1])
    parts.append(end)
    return b"".join(parts)


def _encode_without_message(event: LogEvent) -> bytes:
    """``encode_json`` for a record whose message was dropped by a transform."""
    head = event.ctx.json_head
    # the head is b'{<context fields>,"message":' or, with no context fields, b'{"message":'
    parts = [head[: -len(_MESSAGE_KEY)] if event.ctx.fields else b"{"]
    if event.stream is not None:
        parts.append(b',"stream":' + _encode(event.stream))
    if event.timestamp is not None:
        parts.append(b',"timestamp":' + _encode(event.timestamp))
    if event.truncated:
        parts.append(b',"truncated":true')
    if event.fields:
        parts.append(b"," + _encode(raw_fields(event.fields, event.message))[1:])
    else:
        parts.append(b"}")
    if not event.ctx.fields and len(parts) > 1 and parts[1].startswith(b","):
        parts[1] = parts[1][1:]  # the first key after a bare "{"
    return b"".join(parts)


def _bare_head(ctx: FileContext) -> bytes:
    """``ctx.json_head`` without its ``,"message":`` (kept in ``ctx.memo``): the record's start without a message."""
    head = ctx.memo.get(_BARE_HEAD)
    if head is None:
        head = ctx.memo[_BARE_HEAD] = ctx.json_head[: -len(_MESSAGE_KEY)]
    return head  # type: ignore[no-any-return]


_BARE_HEAD = ("encoding", "bare_head")


def encode_text(event: LogEvent) -> bytes:
    """The message only, as UTF-8 (no trailing newline).

    A record without a string message (a transform dropped it, or replaced it
    with a JSON value) gives that value as JSON, or nothing when there is none.
    """
    message = event.message
    if message is None:
        value = event.get("message")
        return b"" if value is None else _encode(value)
    return message.encode("utf-8", "surrogateescape")


def encode_ndjson(events: Iterable[LogEvent]) -> bytes:
    """Events as JSON lines, each ending in a newline, joined in one buffer.

    The same bytes as ``encode_json`` per event plus ``b"\\n"``.
    """
    return b"".join(encode_ndjson_parts(events))


def encode_ndjson_parts(events: Iterable[LogEvent]) -> list[bytes]:
    """The pieces of ``encode_ndjson`` in order, not joined (for ``os.writev``).

    One pass: a common record (a known stream, a timestamp, not truncated, no
    per-record ``fields``) is two parts, its message and timestamp the only
    encoder calls; so is one whose ``fields`` are a :class:`MessageFields`
    (the message's text follows as is) or are ``MERGED_MESSAGE``
    (the message's text is the rest of the record); any record with a message
    is two parts. The file's
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
            fields = event.fields
            if fields is None:
                parts += (event.ctx.json_head, join((encode(event.message), tail, encode(timestamp), b"}\n")))
                continue
            if type(fields) is MessageFields:  # parse_json's object is the message's text: written as is
                message = event.message
                parts += (event.ctx.json_head, join((encode(message), tail, encode(timestamp), fields.prefix,
                                                     message.encode(), b"}\n")))  # type: ignore[union-attr]
                continue
            if fields is MERGED_MESSAGE:  # parse_json merged the message: its text is the rest of the record
                parts += (event.ctx.json_head, join((encode(event.message), tail, encode(timestamp), b",",
                                                     event.message[1:].encode(), b"\n")))  # type: ignore[index]
                continue
            if type(fields) is SharedFields and fields and event.message is not None:  # encoded once, for all
                end = fields.encoded
                if end is None:
                    end = fields.encoded = b"," + encode(fields)[1:] + b"\n"
                parts += (event.ctx.json_head, join((encode(event.message), tail, encode(timestamp), end)))
                continue
            if fields and event.message is not None:
                parts += (event.ctx.json_head,
                          join((encode(event.message), tail, encode(timestamp), b",", encode(fields)[1:], b"\n")))
                continue
            if fields and type(fields) is dict and event.ctx.fields:  # no message (a transform took it)
                head = event.ctx.memo.get(_BARE_HEAD) or _bare_head(event.ctx)
                parts += (head, join((tail, encode(timestamp), b",", encode(fields)[1:], b"\n")))
                continue
        if event.message is not None:
            parts += (event.ctx.json_head, _after_head(event, b"}\n"))
        else:
            parts += (_encode_without_message(event), b"\n")
    return parts
