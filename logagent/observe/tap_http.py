"""``GET /tap``: a tap session streamed to the client as ndjson.

Query: ``outputs_of`` and ``inputs_of`` (component id globs, comma-separated,
repeatable), ``limit`` (records per interval, default 100), ``interval_ms``
(default 500). The answer is one JSON object per line:

- ``{"type": "notification", "message": ...}``: which patterns matched, a
  reload re-attached the tap, records were missed;
- ``{"type": "event", "component_id", "component_kind", "component_type",
  "direction" ("output" or "input"), "port", "event": <the record>}``;
- ``{"type": "missed", "count": N}``: N sampled records were overwritten
  before this client read them (it reads too slowly).

Every interval the handler sends what the session sampled. While the client
does not read, the send waits on the socket (only this handler waits) and the
session's ring overwrites old records; they are counted and reported.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from aiohttp import web

from logagent.observe.api_access import TapAccess
from logagent.observe.tap import MAX_LIMIT, TapHub, TapSession

_encode = msgspec.json.Encoder().encode

DEFAULT_LIMIT = 100
DEFAULT_INTERVAL_MS = 500


def _patterns(request: web.Request, name: str) -> list[str]:
    return [p.strip() for value in request.query.getall(name, []) for p in value.split(",") if p.strip()]


def _int_param(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise web.HTTPBadRequest(text=f"{name}: expected an integer from {low} to {high}, got {raw!r}\n")
    return int(raw)


def notification(message: str) -> bytes:
    return _encode({"type": "notification", "message": message}) + b"\n"


def tap_handler(hub: TapHub, access: TapAccess) -> Any:
    async def tap(request: web.Request) -> web.StreamResponse:
        refused = access.refusal(request.headers.get("Authorization"))
        if refused is not None:
            headers = {"WWW-Authenticate": "Bearer"} if refused.status == 401 else None
            return web.json_response({"error": refused.reason}, status=refused.status, headers=headers)
        outputs_of, inputs_of = _patterns(request, "outputs_of"), _patterns(request, "inputs_of")
        if not outputs_of and not inputs_of:
            raise web.HTTPBadRequest(text="name components to tap: outputs_of=<glob> and/or inputs_of=<glob>\n")
        limit = _int_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        interval_ms = _int_param(request, "interval_ms", DEFAULT_INTERVAL_MS, 10, 3_600_000)
        try:
            session, notes = hub.open(outputs_of, inputs_of, limit, interval_ms / 1000)
        except ValueError as exc:
            return web.json_response({"error": str(exc)}, status=503)
        try:
            response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson", "Cache-Control": "no-store"})
            await response.prepare(request)
            await response.write(b"".join(notification(note) for note in notes))
            await _stream(hub, session, request, response, outputs_of, inputs_of)
        except (ConnectionError, asyncio.CancelledError):
            pass  # the client went away (or the server stops)
        finally:
            hub.close(session)
        return response

    return tap


async def _stream(hub: TapHub, session: TapSession, request: web.Request, response: web.StreamResponse,
                  outputs_of: list[str], inputs_of: list[str]) -> None:
    while True:
        await asyncio.sleep(session.interval)
        transport = request.transport
        if transport is None or transport.is_closing():
            return
        out = []
        notes = hub.refresh(session, outputs_of, inputs_of)
        if notes:
            out += [notification(note) for note in notes]
        missed = session.take_missed()
        if missed:
            out.append(_encode({"type": "missed", "count": missed}) + b"\n")
        out += session.drain()
        if out:
            await response.write(b"".join(out))  # waits while the client does not read; the ring keeps filling
