"""The record that flows through the graph, split into per-line and per-file parts.

Everything that is the same for every line of one file under one version of its
metadata lives in a shared :class:`FileContext`; a :class:`LogEvent` holds only
what differs per line. Conditions read events through :meth:`LogEvent.get`, sinks
encode them with :func:`logagent.encoding.encode_json`.

A transform that adds fields to single records (``parse_json``) gives the new
event a per-record ``fields`` dict; an event without one (``fields`` is None,
as every event a source makes) costs nothing extra anywhere.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

_json_encode = msgspec.json.Encoder().encode
_json_decode = msgspec.json.Decoder().decode

#: Top-level keys whose value differs from line to line. Any other key comes
#: from the file's context (and is the same for every line of that file) or
#: from the event's own ``fields``.
PER_LINE_KEYS = frozenset({"message", "stream", "timestamp", "truncated"})

#: Per-line keys only the source sets: never taken from an event's ``fields``.
SOURCE_KEYS = frozenset({"stream", "timestamp", "truncated"})


class FileContext:
    """Fields shared by every line of a file for one version of its metadata.

    Never mutated after construction except for ``memo``, a cache of results of
    conditions that read only these fields (keyed by the condition object), and
    of contexts derived from this one by transforms (keyed by a tuple).
    """

    __slots__ = ("fields", "json_head", "memo")

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields
        #: what precedes every record's encoded message: b'{"file":"...","message":'
        self.json_head: bytes = _json_encode(fields)[:-1] + b',"message":' if fields else b'{"message":'
        self.memo: dict[object, Any] = {}

    def get(self, key: str) -> Any:
        return self.fields.get(key)

    def has(self, key: str) -> bool:
        """Whether top-level ``key`` is present, even with a null value (VRL's ``exists``)."""
        return key in self.fields


class LogEvent(msgspec.Struct, gc=False, eq=False):
    """One log record: the per-line fields plus a reference to its file context.

    A msgspec Struct: created in C (the source makes one per line), and with
    ``gc=False`` never tracked by the cyclic garbage collector, so millions of
    short-lived events do not trigger collections. That is safe because an
    event never takes part in a reference cycle (it points to strings, to its
    FileContext, which never points back, and to ``fields``, which holds only
    JSON values). ``eq=False``: events compare by identity, as plain objects do.

    The record is, in this order: ``ctx.fields``, ``message`` (left out when
    None: a transform dropped it), ``stream``, ``timestamp``, ``truncated``
    (each left out when None/False), then ``fields``: top-level keys of this
    record alone. ``fields`` never holds a key of ``ctx.fields``, nor
    ``message`` unless ``message`` is None (a transform then put a non-string
    message there), nor ``stream``/``timestamp`` unless that attribute is None
    and ``truncated`` unless it is False (a remap then set it to some other
    value, a null, a number, ..., which Vector keeps as it is). It is None,
    never empty, when there is nothing in it and ``message`` is a string, so
    encoders can take the fast way on ``fields is None`` alone. Events are
    never changed once made: a transform makes a new event (one event may sit
    in several batches of different branches).

    A value directly under a key of ``fields`` may be a ``msgspec.Raw``: the
    text of a JSON object, already validated and without raw line breaks,
    not decoded yet. Encoders embed it as written; :meth:`get` and
    :meth:`to_dict` (and so conditions) see it decoded (see :func:`resolve`).
    ``fields`` may also be a :class:`MessageFields`: its one key's value is
    the record's own ``message`` (a string), read as such a JSON object.

    Or ``fields`` is :data:`MERGED_MESSAGE`: the record's own keys are those
    of the object whose text is its ``message`` (``parse_json`` merging it),
    none of them a key of ``ctx.fields`` or a per-line key. The message was
    validated, not decoded: encoders write its text, readers decode it.
    """

    message: str | None
    stream: str | None
    timestamp: str | None
    ctx: FileContext
    truncated: bool = False
    fields: dict[str, Any] | None = None

    def get(self, key: str) -> Any:
        """Top-level field lookup used by conditions; a missing field is None."""
        if key == "message":
            message = self.message
            if message is None and self.fields is not None:
                return resolve(self.fields.get("message"))
            return message
        if key == "stream":
            stream = self.stream
            if stream is None and self.fields is not None:
                return self.fields.get("stream")  # a remap set it to something else than a string
            return stream
        if key == "timestamp":
            timestamp = self.timestamp
            if timestamp is None and self.fields is not None:
                return self.fields.get("timestamp")
            return timestamp
        if key == "truncated":
            if not self.truncated and self.fields is not None:
                return self.fields.get("truncated")
            return True if self.truncated else None
        fields = self.fields
        if fields is not None:
            if fields is MERGED_MESSAGE:
                if key not in self.ctx.fields:
                    value = message_value(self.message, key)  # type: ignore[arg-type]
                    return None if value is msgspec.UNSET else value
            elif key in fields:
                value = fields[key]
                return resolve(msgspec.Raw(self.message) if value is MESSAGE_JSON else value)
        return self.ctx.fields.get(key)

    def has(self, key: str) -> bool:
        """Whether top-level ``key`` is present, even with a null value (VRL's ``exists``).

        Conditions call it only after :meth:`get` gave None, so it need not be fast.
        """
        fields = self.fields
        if key == "message":
            return self.message is not None or (fields is not None and "message" in fields)
        if key in SOURCE_KEYS:
            return self.get(key) is not None or (fields is not None and key in fields)
        if key in self.ctx.fields:
            return True
        if fields is MERGED_MESSAGE:
            return message_value(self.message, key) is not msgspec.UNSET  # type: ignore[arg-type]
        return fields is not None and key in fields

    def to_dict(self) -> dict[str, Any]:
        """The complete record as a new dict (nested values are shared, not copied)."""
        record = dict(self.ctx.fields)
        if self.message is not None:
            record["message"] = self.message
        if self.stream is not None:
            record["stream"] = self.stream
        if self.timestamp is not None:
            record["timestamp"] = self.timestamp
        if self.truncated:
            record["truncated"] = True
        if self.fields:
            record.update(resolved(self.fields, self.message))
        return record

    def __repr__(self) -> str:
        return f"LogEvent({self.to_dict()!r})"


def resolve(value: Any) -> Any:
    """A value of ``LogEvent.fields`` as plain JSON values: a ``msgspec.Raw`` is decoded (each time).

    Not cached: the event is shared and its record must encode the same
    whether or not a condition looked at it first.
    """
    if type(value) is not msgspec.Raw:
        return value
    try:
        return _json_decode(value)
    except msgspec.DecodeError:
        # valid JSON that msgspec will not decode: a number beyond the float range
        return json.loads(bytes(value))


def resolved(fields: dict[str, Any], message: str | None) -> dict[str, Any]:
    """``fields`` of a record with ``message`` as plain JSON values (the same dict when nothing needs decoding)."""
    if type(fields) is MessageFields:
        return {fields.key: resolve(msgspec.Raw(message))}
    if fields is MERGED_MESSAGE:
        return message_object(message)  # type: ignore[arg-type]
    for value in fields.values():
        if type(value) is msgspec.Raw:
            return {key: resolve(value) for key, value in fields.items()}
    return fields


def raw_fields(fields: dict[str, Any], message: str | None) -> dict[str, Any]:
    """``fields`` of a record with ``message`` as msgspec can encode them (a MessageFields' value as Raw)."""
    if type(fields) is MessageFields:
        return {fields.key: msgspec.Raw(message)}
    if fields is MERGED_MESSAGE:
        return message_object(message)  # type: ignore[arg-type]
    return fields


def message_object(message: str) -> dict[str, Any]:
    """The object whose validated text is ``message`` (decoded each time it is asked for)."""
    return resolve(msgspec.Raw(message))  # type: ignore[no-any-return]


def message_value(message: str, key: str) -> Any:
    """``message_object(message)[key]``, or ``msgspec.UNSET`` when absent, decoding only that key's value.

    A msgspec Struct whose one field is ``key`` (made once per key) skips the
    other values in C: reading one key of a merged record costs little more
    than validating it, not a decode of the whole object.
    """
    decode = _KEY_DECODERS.get(key)
    if decode is None:
        struct = msgspec.defstruct("MessageKey", [("value", Any, msgspec.UNSET)], rename={"value": key}, gc=False)
        decode = msgspec.json.Decoder(struct).decode
        if len(_KEY_DECODERS) < _MAX_KEY_DECODERS:
            _KEY_DECODERS[key] = decode
    try:
        return decode(message).value
    except msgspec.DecodeError:  # that value is a number beyond the float range: as resolve reads it
        return message_object(message).get(key, msgspec.UNSET)


#: keys read from merged records are those of conditions and templates: few; the cap is a safety net
_MAX_KEY_DECODERS = 1024
_KEY_DECODERS: dict[str, Any] = {}


class _MessageJson:
    """The value under a :class:`MessageFields`' key: the record's message, read as JSON."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MESSAGE_JSON"


MESSAGE_JSON = _MessageJson()


class MessageFields(dict):  # type: ignore[type-arg]
    """``LogEvent.fields`` of a record whose one own key holds its message's JSON object.

    ``parse_json`` with a key target gives it to every record whose message
    is the text of an object (validated, without raw line breaks): the record
    then needs no dict and no ``msgspec.Raw`` of its own, and encoders write
    ``prefix`` and the message's text as is. The same instance, one per key
    (see :func:`message_fields`), is shared by all such records and never
    changed; :meth:`LogEvent.get`, :meth:`LogEvent.to_dict` and
    :func:`resolved` decode the message when asked.
    """

    __slots__ = ("key", "prefix")

    def __init__(self, key: str) -> None:
        super().__init__({key: MESSAGE_JSON})
        self.key = key
        #: what precedes the object in an encoded record: b',"<key>":'
        self.prefix: bytes = b"," + _json_encode(key) + b":"

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError("MessageFields are shared by many records and never changed")

    def __reduce__(self) -> Any:
        return (MessageFields, (self.key,))


_MESSAGE_FIELDS: dict[str, MessageFields] = {}


class SharedFields(dict):  # type: ignore[type-arg]
    """``LogEvent.fields`` that many records share (a remap's table of small dicts, ``{"level": "INFO"}``).

    Never changed, so ``encoding.encode_ndjson_parts`` keeps the end of a record with these fields in
    ``encoded`` (None until then) and writes it for every record instead of encoding the same dict again.
    """

    __slots__ = ("encoded",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.encoded: bytes | None = None

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError("SharedFields are shared by many records and never changed")

    def __reduce__(self) -> Any:
        return (SharedFields, (dict(self),))


class _MergedMessage(dict):  # type: ignore[type-arg]
    """The class of :data:`MERGED_MESSAGE` (one instance)."""

    __slots__ = ()

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError("MERGED_MESSAGE is shared by many records and never changed")

    def __reduce__(self) -> str:
        return "MERGED_MESSAGE"  # the module-level singleton, also through copy and pickle


#: ``LogEvent.fields`` of a record whose own keys are its message's object's
#: (see LogEvent). Not empty, so that ``if event.fields`` holds; its one entry
#: (a sentinel, not a string) is not a key of the record: test for it with
#: ``is`` before reading ``fields`` as a dict.
MERGED_MESSAGE = _MergedMessage({MESSAGE_JSON: MESSAGE_JSON})


def message_fields(key: str) -> MessageFields:
    """The one :class:`MessageFields` for ``key``."""
    fields = _MESSAGE_FIELDS.get(key)
    if fields is None:
        fields = _MESSAGE_FIELDS[key] = MessageFields(key)
    return fields
