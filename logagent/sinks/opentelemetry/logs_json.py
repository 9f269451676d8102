"""OTLP/HTTP logs with ``encoding: json``: the same mapping as ``logs.LogsProtocol``, written by msgspec.

The OTLP JSON mapping (the protobuf JSON mapping with OTLP's exceptions):
lowerCamelCase field names, 64-bit integers as decimal strings, enums as
numbers, trace and span ids as hex (the agent sets neither). What every
record of one file context and stream shares (severity, attributes, the
observed time of the run) is written once per run from the protobuf
prototype of ``logs.LogsProtocol`` (``json_format`` once per prototype);
per record only the timestamp text and the message are written, in one
join. A record is two parts, as in protobuf: its resource key and its
``LogRecord`` as JSON; ``build_body`` groups records by resource and joins
them into an ``ExportLogsServiceRequest``. Records the fast way cannot take
(per-record fields, truncated lines, other timestamps, repairs) go through
the protobuf record and ``json_format``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any

import msgspec
from google.protobuf import json_format
from opentelemetry.proto.logs.v1.logs_pb2 import ScopeLogs

from logagent.event import LogEvent
from logagent.sinks.http.runs import MESSAGE, STREAM, TIMESTAMP, is_plain_run
from logagent.sinks.opentelemetry.logs import SCOPE_NAME, LogsProtocol, _Prototype
from logagent.sinks.timestamps import kubelet_nanos_texts, now_nanos

_encode = msgspec.json.Encoder().encode
_decode_key = msgspec.json.Decoder(list[tuple[str, str]]).decode
_TIME = b'{"timeUnixNano":"'
_BODY = b'","body":{"stringValue":'
#: prototypes whose shared JSON is remembered (the protocol's context cache bounds them too)
_SHARED_LIMIT = 8192


def record_json(record: Any) -> bytes:
    """A protobuf ``LogRecord`` in the OTLP JSON mapping."""
    return _encode(json_format.MessageToDict(record, use_integers_for_enums=True))


class JsonLogsProtocol(LogsProtocol):
    """``LogsProtocol`` with ``encoding: json``, bodies written by msgspec."""

    def __init__(self, severity_fields: list[Any]) -> None:
        super().__init__("json", severity_fields)
        #: prototype -> its shared fields as JSON members (b'"severityNumber":9,...', may be empty)
        self._shared: dict[_Prototype, bytes] = {}

    def encode(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        if not events:
            return [], 0
        texts = kubelet_nanos_texts(list(map(TIMESTAMP, events))) if is_plain_run(events) else None
        if texts is None:
            return self._encode_each(events)
        resource, prototypes = self._context(events[0])
        observed = b'},"observedTimeUnixNano":"%d"' % now_nanos()
        streams = list(map(STREAM, events))
        tails = {}
        for stream in set(streams):
            shared = self._shared_json(self._prototype(events[streams.index(stream)], prototypes, 0))
            tails[stream] = observed + (b"," + shared + b"}" if shared else b"}")
        try:
            messages = list(map(_encode, map(MESSAGE, events)))
        except (TypeError, ValueError):  # no message, lone surrogates: repaired record by record
            return self._encode_each(events)
        join = b"".join
        records = [join((_TIME, nanos, _BODY, message, tails[stream]))
                   for nanos, message, stream in zip(texts[0].split(b"\n"), messages, streams)]
        parts: list[bytes] = [resource] * (2 * len(events))
        parts[1::2] = records
        return parts, 0

    def _encode_each(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        parts, skipped = super()._encode_each(events)
        for index in range(1, len(parts), 2):
            (log_record,) = ScopeLogs.FromString(parts[index]).log_records
            parts[index] = record_json(log_record)
        return parts, skipped

    def _shared_json(self, prototype: _Prototype) -> bytes:
        shared = self._shared.get(prototype)
        if shared is None:
            fields = json_format.MessageToDict(prototype.record, use_integers_for_enums=True)
            for key in ("timeUnixNano", "observedTimeUnixNano", "body"):
                fields.pop(key, None)
            shared = _encode(fields)[1:-1]
            if len(self._shared) >= _SHARED_LIMIT:
                self._shared.clear()
            self._shared[prototype] = shared
        return shared

    def body_pieces(self, parts: Sequence[bytes], records_per_piece: int) -> Any:
        yield self.build_body(parts)

    def build_body(self, parts: Sequence[bytes]) -> bytes:
        resources: dict[bytes, list[bytes]] = {}
        records = parts[1::2]
        start = 0
        for key, run in groupby(parts[0::2]):
            end = start + len(list(run))
            resources.setdefault(key, []).extend(records[start:end])
            start = end
        scope = {"name": SCOPE_NAME, "version": self._scope_version}
        resource_logs = []
        for key, serialized in resources.items():
            attributes = [{"key": name, "value": {"stringValue": value}} for name, value in _decode_key(key)]
            resource_logs.append({
                "resource": {"attributes": attributes} if attributes else {},
                "scopeLogs": [{"scope": scope, "logRecords": msgspec.Raw(b"[" + b",".join(serialized) + b"]")}],
            })
        return _encode({"resourceLogs": resource_logs})

    def record(self, parts: Sequence[bytes]) -> bytes:
        """The record as OTLP JSON with its resource attributes, for the dead-letter file."""
        return _encode({"resource": dict(_decode_key(parts[0])), "logRecord": msgspec.Raw(parts[1])})
