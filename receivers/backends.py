"""Receivers that speak the backends' own protocols, for tests and benchmarks.

:class:`BackendReceiver` is :class:`receivers.ndjson.Receiver` (plans, standing
rules, recorded requests) with answers of the backend's kind and a record
count that reads its bodies:

- ``elasticsearch``: a ``_bulk`` body is read pairwise (action line,
  document); the answer has one item per action, whose status ``item_status``
  decides (default 201), like Elasticsearch's own;
- ``loki``: 204 to a push; records are the entries of every stream;
- ``opentelemetry``: the body parsed with the opentelemetry-proto classes
  (or their JSON mapping); the answer an ``ExportLogsServiceResponse``, with
  ``partial_success`` when ``reject_otlp`` is set.

Run standalone for benchmarks: ``python -m receivers.backends --kind loki --port 8080``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec
from aiohttp import web
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from receivers.ndjson import Received, Receiver

#: (status, error or None) for one bulk document
ItemStatus = Callable[[dict[str, Any]], tuple[int, dict[str, Any] | None]]


def bulk_pairs(body: bytes) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    lines = [line for line in body.split(b"\n") if line]
    assert len(lines) % 2 == 0, "a _bulk body has an action line and a document per record"
    return [(json.loads(lines[i]), json.loads(lines[i + 1])) for i in range(0, len(lines), 2)]


class _LokiStream(msgspec.Struct):
    stream: dict[str, str]
    values: list[msgspec.Raw]


class _LokiPush(msgspec.Struct):
    streams: list[_LokiStream]


_decode_push = msgspec.json.Decoder(_LokiPush).decode


class _OtlpScope(msgspec.Struct, rename="camel"):
    log_records: list[msgspec.Raw] = []


class _OtlpResource(msgspec.Struct, rename="camel"):
    scope_logs: list[_OtlpScope] = []


class _OtlpRequest(msgspec.Struct, rename="camel"):
    resource_logs: list[_OtlpResource] = []


_decode_otlp_json = msgspec.json.Decoder(_OtlpRequest).decode


def otlp_json_records(body: bytes) -> int:
    """The log records of an OTLP JSON body, counted in C (``json_format.Parse`` is ~100 times slower).

    Only the lowerCamelCase names, which is what OTLP/JSON senders write; a
    body without any record by them is counted through the protobuf classes.
    """
    try:
        request = _decode_otlp_json(body)
    except msgspec.DecodeError:
        return -1
    return sum(len(s.log_records) for r in request.resource_logs for s in r.scope_logs)
_decode_actions = msgspec.json.Decoder(list[dict[str, dict[str, Any]]]).decode


def otlp_request(entry: Received) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    if entry.headers.get("Content-Type", "").startswith("application/json"):
        json_format.Parse(entry.body, request)
    else:
        request.ParseFromString(entry.body)
    return request


@dataclass
class BackendReceiver(Receiver):
    kind: str = "elasticsearch"
    item_status: ItemStatus | None = None
    #: (rejected_log_records, error_message) for every OTLP answer
    reject_otlp: tuple[int, str] | None = None
    #: what ``GET /`` reports as Elasticsearch's version
    es_version: str = "8.11.1"

    def probe_answer(self, request: web.Request) -> web.Response:
        """Elasticsearch's ``GET /`` (its version) and ``/_cluster/health``, Loki's ``/ready``."""
        if self.health_status != 200:
            return web.Response(status=self.health_status, text="unavailable")
        if self.kind == "elasticsearch" and request.path == "/":
            return web.json_response({"name": "receiver", "version": {"number": self.es_version}})
        if self.kind == "elasticsearch" and request.path == "/_cluster/health":
            return web.json_response({"status": "green"})
        if self.kind == "loki" and request.path == "/ready":
            return web.Response(text="ready")
        return web.Response(status=404, text="not found")

    async def _answer(self, request: web.Request, entry: Received, body: bytes) -> web.StreamResponse:
        if self.plan or self._standing_rule(body) is not None or self._gate is not None:
            return await super()._answer(request, entry, body)
        answer = self.answer(entry, body)
        entry.status = answer.status
        if 200 <= answer.status <= 299:
            self._accept(entry, body)
        return answer

    def answer(self, entry: Received, body: bytes) -> web.Response:
        if self.kind == "loki":
            return web.Response(status=204)
        if self.kind == "opentelemetry":
            response = ExportLogsServiceResponse()
            if self.reject_otlp is not None:
                response.partial_success.rejected_log_records = self.reject_otlp[0]
                response.partial_success.error_message = self.reject_otlp[1]
            if entry.headers.get("Content-Type", "").startswith("application/json"):
                return web.Response(body=json_format.MessageToJson(response).encode(), content_type="application/json")
            return web.Response(body=response.SerializeToString(), content_type="application/x-protobuf")
        if self.item_status is None:
            return self._all_created(body)
        items = []
        errors = False
        for action, document in bulk_pairs(body):
            (name, meta), = action.items()
            status, error = self.item_status(document)
            item: dict[str, Any] = {"_index": meta["_index"], "status": status}
            if error is not None:
                item["error"] = error
                errors = True
            else:
                item["result"] = "created"
            items.append({name: item})
        return web.json_response({"took": 1, "errors": errors, "items": items})

    @staticmethod
    def _all_created(body: bytes) -> web.Response:
        """Every item created, answered fast (action lines decoded in one call) so a benchmark's receiver keeps up."""
        lines = [line for line in body.split(b"\n") if line]
        assert lines and len(lines) % 2 == 0, "a _bulk body has an action line and a document per record"
        actions = _decode_actions(b"[" + b",".join(lines[0::2]) + b"]")
        items = [{name: {"_index": meta["_index"], "status": 201, "result": "created"}} for action in actions
                 for name, meta in action.items()]
        answer = msgspec.json.encode({"took": 1, "errors": False, "items": items})
        return web.Response(body=answer, content_type="application/json")

    def count(self, body: bytes, entry: Received) -> int:
        if self.kind == "loki":
            return sum(len(stream.values) for stream in _decode_push(body).streams)
        if self.kind == "opentelemetry":
            if entry.headers.get("Content-Type", "").startswith("application/json"):
                fast = otlp_json_records(body)
                if fast > 0:
                    return fast
            request = otlp_request(entry)
            return sum(len(s.log_records) for r in request.resource_logs for s in r.scope_logs)
        return body.count(b"\n") // 2

    def _accept(self, entry: Received, body: bytes) -> None:
        self.accepted.append(entry)
        self.accepted_bytes += entry.raw_size
        saved, entry.body = entry.body, body
        self.accepted_records += self.count(body, entry)
        entry.body = saved


async def _serve(args: argparse.Namespace) -> None:
    receiver = BackendReceiver(keep_bodies=False, port=args.port, kind=args.kind)
    await receiver.start()
    print(f"listening on {receiver.url}", flush=True)
    while True:
        await asyncio.sleep(args.interval)
        print(f"records={receiver.accepted_records} at={time.monotonic():.1f}", flush=True)
        receiver.received.clear()
        receiver.accepted.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description="A backend receiver (elasticsearch, loki, opentelemetry) for benchmarks.")
    parser.add_argument("--kind", choices=["elasticsearch", "loki", "opentelemetry"], required=True)
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
