"""Records as OTLP logs (``ExportLogsServiceRequest``), built with the opentelemetry-proto classes.

Mapping (OpenTelemetry semantic conventions):

- one ``ResourceLogs`` per container: ``kubernetes.*`` become resource
  attributes ``k8s.pod.name``, ``k8s.namespace.name``, ``k8s.container.name``,
  ``k8s.pod.uid``, ``k8s.node.name``, ``container.image.name``, ``container.id``,
  the owner as ``k8s.<kind>.name`` (replicaset, statefulset, daemonset, job),
  labels as ``k8s.pod.label.<key>``, ``k8s.namespace.label.<key>`` and
  ``k8s.node.label.<key>``; other fields of the file become attributes of
  every record;
- a ``LogRecord`` per record: ``body`` the message, ``time_unix_nano`` the
  record's timestamp, ``observed_time_unix_nano`` when it was encoded,
  severity from a parsed level field when there is one (``level``,
  ``severity``... see ``severity_fields``), else from the stream (stdout INFO,
  stderr ERROR), attributes ``log.iostream`` and ``log.file.path``, and any
  per-record field the pipeline added (a parsed object, for example).

:class:`LogsProtocol` is the protocol half; the HTTP machinery batches, sends,
retries and dead-letters.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from itertools import groupby
from operator import attrgetter
from typing import Any

import msgspec
import structlog
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ScopeLogs

import logagent
from logagent.encoding import encode_text
from logagent.event import LogEvent
from logagent.sinks.http.protocol import HttpProtocol, Outcome
from logagent.sinks.opentelemetry.config import DEFAULT_SEVERITY_FIELDS
from logagent.sinks.http.runs import MESSAGE, STREAM, TIMESTAMP, is_plain_run
from logagent.sinks.templates import FieldPath, lookup
from logagent.sinks.timestamps import kubelet_nanos, now_nanos, unix_nanos

SCOPE_NAME = "logagent"

#: record field -> resource attribute
_RESOURCE_NAMES = {
    "pod_name": "k8s.pod.name",
    "pod_namespace": "k8s.namespace.name",
    "container_name": "k8s.container.name",
    "pod_uid": "k8s.pod.uid",
    "pod_node_name": "k8s.node.name",
    "container_image": "container.image.name",
}
_LABEL_PREFIXES = {
    "pod_labels": "k8s.pod.label.",
    "namespace_labels": "k8s.namespace.label.",
    "node_labels": "k8s.node.label.",
}
_OWNER_KINDS = {"ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "Deployment"}

#: Top-level fields the mapping places itself; any other one becomes an attribute.
_MAPPED_FIELDS = frozenset({"message", "stream", "timestamp", "file", "source_type", "kubernetes", "truncated"})

#: level names (lower case) -> severity number (the first of each range)
_SEVERITIES = {
    "trace": 1, "debug": 5, "info": 9, "information": 9, "informational": 9, "notice": 10,
    "warn": 13, "warning": 13, "error": 17, "err": 17, "fatal": 21, "critical": 21,
    "crit": 21, "panic": 21, "emerg": 21, "emergency": 21, "alert": 21, "severe": 17,
}  # fmt: skip
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(list[tuple[str, str]]).decode

_STREAM_SEVERITY = {"stdout": (9, "INFO"), "stderr": (17, "ERROR")}




def any_value(value: Any, target: AnyValue) -> None:
    """Fill an AnyValue from a plain JSON-like value."""
    if isinstance(value, str):
        target.string_value = value
    elif isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        if -(1 << 63) <= value < (1 << 63):
            target.int_value = value
        else:
            target.string_value = str(value)
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, dict):
        kvlist = target.kvlist_value
        kvlist.SetInParent()
        for key, item in value.items():
            any_value(item, kvlist.values.add(key=str(key)).value)
    elif isinstance(value, (list, tuple)):
        array = target.array_value
        array.SetInParent()
        for item in value:
            any_value(item, array.values.add())
    elif value is not None:
        target.string_value = str(value)


def resource_attributes(kubernetes: Any) -> tuple[tuple[str, str], ...]:
    """The resource attributes of a file's ``kubernetes`` fields, sorted (a grouping key)."""
    if not isinstance(kubernetes, dict):
        return ()
    attributes: list[tuple[str, str]] = []
    for field, name in _RESOURCE_NAMES.items():
        value = kubernetes.get(field)
        if isinstance(value, str) and value:
            attributes.append((name, value))
    container_id = kubernetes.get("container_id")
    if isinstance(container_id, str) and container_id:
        attributes.append(("container.id", container_id.rpartition("://")[2]))
    owner = kubernetes.get("pod_owner")
    if isinstance(owner, str) and "/" in owner:
        kind, _, name = owner.partition("/")
        if kind in _OWNER_KINDS:
            attributes.append((f"k8s.{kind.lower()}.name", name))
    for field, prefix in _LABEL_PREFIXES.items():
        labels = kubernetes.get(field)
        if isinstance(labels, dict):
            attributes.extend((prefix + str(k), str(v)) for k, v in labels.items())
    attributes.sort()
    return tuple(attributes)


def severity_of(level: Any) -> tuple[int, str] | None:
    if isinstance(level, str) and level:
        return _SEVERITIES.get(level.strip().lower(), 0), level
    return None


#: How many file contexts' resources and record prototypes are remembered.
_CACHE_LIMIT = 4096

_RECORD = attrgetter("record")
_BODY = attrgetter("body")
_SERIALIZE = attrgetter("serialize")


class _Prototype:
    """What every record of one file context and stream has in common, ready to be filled and serialized.

    ``scope`` is a ``ScopeLogs`` holding one ``LogRecord`` (``record``) with
    the shared attributes and severity; serializing the scope after setting
    the record's own fields gives the record framed as a ``ScopeLogs``, so
    that records of one resource joined are the serialization of one
    ``ScopeLogs`` holding them all (repeated fields of concatenated messages
    concatenate).
    """

    __slots__ = ("scope", "record", "body", "serialize")

    def __init__(self, record: LogRecord) -> None:
        self.scope = ScopeLogs()
        self.record = self.scope.log_records.add()
        self.record.CopyFrom(record)
        self.body = self.record.body
        self.serialize = self.scope.SerializeToString


class LogsProtocol(HttpProtocol):
    """OTLP/HTTP logs: ``ExportLogsServiceRequest`` bodies, protobuf or JSON.

    A record is two parts: its resource's attributes (JSON, the grouping key)
    and a ``ScopeLogs`` holding its ``LogRecord`` alone, serialized.
    ``build_body`` groups records by resource, parses each group's joined
    records as one ``ScopeLogs`` (in C) and serializes the request. ``interpret`` reads
    ``partial_success``: the records the receiver rejected are counted
    (``rejected_events``) and logged, as the OTLP specification says a
    client must not send them again.
    """

    reads_answer = True

    def __init__(self, encoding: str, severity_fields: list[FieldPath]) -> None:
        self.encoding = encoding
        self.content_type = "application/json" if encoding == "json" else "application/x-protobuf"
        self.severity_fields = severity_fields
        self._scope_version = logagent.__version__
        #: file context -> (resource key, record prototype per stream)
        self._contexts: dict[Hashable, tuple[bytes, dict[str | None, _Prototype]]] = {}
        self._log = structlog.get_logger(__name__)
        #: records the receiver reported as rejected in ``partial_success``
        self.rejected_events = 0

    def encode(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        """A run of one file's records: timestamps converted for the whole run, then per record two fields set and one serialization."""
        if not events:
            return [], 0
        nanos = kubelet_nanos(list(map(TIMESTAMP, events))) if is_plain_run(events) else None
        if nanos is None:
            return self._encode_each(events)
        count = len(events)
        resource, prototypes = self._context(events[0])
        observed = now_nanos()
        streams = list(map(STREAM, events))
        of_stream = {stream: self._prototype(events[streams.index(stream)], prototypes, observed) for stream in set(streams)}
        chosen = list(map(of_stream.__getitem__, streams))
        records: list[bytes] = []
        append = records.append
        try:
            for record, body, serialize, time_unix_nano, message in zip(
                map(_RECORD, chosen), map(_BODY, chosen), map(_SERIALIZE, chosen), nanos, map(MESSAGE, events)
            ):
                record.time_unix_nano = time_unix_nano
                body.string_value = message
                append(serialize())
        except (TypeError, ValueError):  # no message, lone surrogates: repaired record by record
            return self._encode_each(events)
        parts: list[bytes] = [resource] * (2 * count)
        parts[1::2] = records
        return parts, 0

    def _encode_each(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        """Record by record: per-record fields, truncated lines, repairs, timestamps of other forms."""
        parts: list[bytes] = []
        observed = now_nanos()
        for event in events:
            resource, prototypes = self._context(event)
            prototype = self._prototype(event, prototypes, observed)
            record = prototype.record
            record.time_unix_nano = unix_nanos(event.timestamp) or 0
            message = event.message
            if not isinstance(message, str):
                message = encode_text(event).decode("utf-8", "replace")
            try:
                prototype.body.string_value = message
            except ValueError:  # lone surrogates from a line that is not UTF-8
                prototype.body.string_value = message.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            if event.truncated or event.fields:
                scope = ScopeLogs()
                own = scope.log_records.add()
                own.CopyFrom(record)
                self._per_record(event, own)
                parts += (resource, scope.SerializeToString())
            else:
                parts += (resource, prototype.serialize())
        return parts, 0

    def _context(self, event: LogEvent) -> tuple[bytes, dict[str | None, _Prototype]]:
        entry = self._contexts.get(event.ctx)
        if entry is None:
            if len(self._contexts) >= _CACHE_LIMIT:
                self._contexts.clear()
            entry = self._contexts[event.ctx] = (_encode(resource_attributes(event.get("kubernetes"))), {})
        return entry

    def _prototype(self, event: LogEvent, prototypes: dict[str | None, _Prototype], observed: int) -> _Prototype:
        prototype = prototypes.get(event.stream)
        if prototype is None:
            prototype = prototypes[event.stream] = _Prototype(self._shared_fields(event))
        prototype.record.observed_time_unix_nano = observed
        return prototype

    def body_pieces(self, parts: Sequence[bytes], records_per_piece: int) -> Iterator[bytes]:
        yield self.build_body(parts)

    def build_body(self, parts: Sequence[bytes]) -> bytes:
        request = self.build_request(parts)
        if self.encoding == "json":
            return json_format.MessageToJson(request, use_integers_for_enums=True, indent=None).encode()
        return request.SerializeToString()

    def build_request(self, parts: Sequence[bytes]) -> ExportLogsServiceRequest:
        """One ``ResourceLogs`` per resource, its records parsed from their joined serializations at once."""
        resources: dict[bytes, list[bytes]] = {}
        records = parts[1::2]
        start = 0
        for key, run in groupby(parts[0::2]):
            end = start + len(list(run))
            resources.setdefault(key, []).extend(records[start:end])
            start = end
        request = ExportLogsServiceRequest()
        for key, serialized in resources.items():
            resource_logs = request.resource_logs.add()
            resource = resource_logs.resource
            resource.SetInParent()
            for name, value in _decode(key):
                resource.attributes.add(key=name).value.string_value = value
            scope = resource_logs.scope_logs.add()
            scope.MergeFromString(b"".join(serialized))
            scope.scope.name = SCOPE_NAME
            scope.scope.version = self._scope_version
        return request

    def interpret(self, answer: bytes, parts: Sequence[bytes]) -> Outcome | None:
        rejected, message = parse_partial_success(answer, self.content_type)
        if rejected or message:
            self.rejected_events += rejected
            self._log.warning(
                "OTLP receiver rejected part of a request",
                rejected_log_records=rejected,
                error_message=message[:500],
                records=len(parts) // 2,
            )
        return None

    def record(self, parts: Sequence[bytes]) -> bytes:
        """The record as OTLP JSON with its resource attributes (valid JSON), for the dead-letter file."""
        (log_record,) = ScopeLogs.FromString(parts[1]).log_records
        as_dict = json_format.MessageToDict(log_record, use_integers_for_enums=True)
        return _encode({"resource": dict(_decode(parts[0])), "logRecord": as_dict})

    def _shared_fields(self, event: LogEvent) -> LogRecord:
        """What every record of this file context and stream has in common."""
        prototype = LogRecord()
        if event.stream is not None:
            prototype.attributes.add(key="log.iostream").value.string_value = event.stream
        severity = self._severity(event) or _STREAM_SEVERITY.get(event.stream or "")
        if severity is not None:
            prototype.severity_number, prototype.severity_text = severity  # type: ignore[assignment]
        path = event.get("file")
        if isinstance(path, str):
            prototype.attributes.add(key="log.file.path").value.string_value = path
        for key, value in event.ctx.fields.items():
            if key not in _MAPPED_FIELDS:
                any_value(value, prototype.attributes.add(key=key).value)
        return prototype

    def _severity(self, event: LogEvent) -> tuple[int, str] | None:
        for path in self.severity_fields:
            severity = severity_of(lookup(event, path))
            if severity is not None:
                return severity
        return None

    def _per_record(self, event: LogEvent, record: LogRecord) -> None:
        if event.truncated:
            record.attributes.add(key="logagent.truncated").value.bool_value = True
        # Fields a transform added to this record alone (parse_json keeps them in
        # ``LogEvent.fields``); without any, the prototype says everything.
        if not event.fields:
            return
        severity = self._severity(event)
        if severity is not None:
            record.severity_number, record.severity_text = severity  # type: ignore[assignment]
        for key, value in _record_only_fields(event, event.ctx.fields):
            any_value(value, record.attributes.add(key=key).value)


def _record_only_fields(event: LogEvent, ctx_fields: dict[str, Any]) -> list[tuple[str, Any]]:
    """Fields a transform added to this record alone (not the file's, not the mapped ones)."""
    record = event.to_dict()
    return [(key, value) for key, value in record.items() if key not in _MAPPED_FIELDS and key not in ctx_fields]


def parse_partial_success(answer: bytes, content_type: str) -> tuple[int, str]:
    """``(rejected_log_records, error_message)`` of an export answer; ``(0, "")`` when there is none."""
    if not answer:
        return 0, ""
    response = ExportLogsServiceResponse()
    try:
        if content_type.startswith("application/json"):
            json_format.Parse(answer, response, ignore_unknown_fields=True)
        else:
            response.ParseFromString(answer)
    except (DecodeError, json_format.ParseError, ValueError):
        return 0, ""
    partial = response.partial_success
    return int(partial.rejected_log_records), partial.error_message
