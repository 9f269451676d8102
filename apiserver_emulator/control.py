"""The /_emulator/ JSON control API, so a subprocess emulator can be driven (benchmarks).

  GET    /_emulator/stats                               counters (see Accounting.to_json)
  POST   /_emulator/objects/{resource}                  body: object -> create or replace
  PATCH  /_emulator/objects/{resource}/{name}?namespace=  body: JSON merge patch
  DELETE /_emulator/objects/{resource}/{name}?namespace=
  POST   /_emulator/seed      {"namespaces": N, "name_format"?, "labels"?, "annotations"?, "start"?,
                               "label_sets"?: "shared" | "unique"}
                              {"pods": N, "node": "n1", "namespace_count"?: K, "name_format"?}
                              {"nodes": ["n1", ...]}
  POST   /_emulator/faults    {"verb", "resource", "status", "count"?, "retry_after"?, "message"?}
                              {"delay": {"verb", "resource", "seconds"}} | {"close_watch_after": {"resource", "events"}}
                              {"clear": true}
  POST   /_emulator/drop_watches  {"resource"?: "pods", "abort"?: false}
  POST   /_emulator/compact   -> {"resourceVersion": N}
  POST   /_emulator/settings  {"bookmark_interval"?, "watch_list"?, "watch_expired_as_http_410"?, ...}
  POST   /_emulator/reset_stats
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec
from aiohttp import web

from .objects import make_node, make_pod
from .responses import status_response
from .store import StoreError

if TYPE_CHECKING:
    from .server import ApiServerEmulator

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _guarded(fn: Handler) -> Handler:
    async def wrapper(request: web.Request) -> web.StreamResponse:
        try:
            return await fn(request)
        except StoreError as err:
            return status_response(err.code, err.reason, err.message, err.details)
        except (ValueError, KeyError, TypeError, msgspec.DecodeError) as err:
            return status_response(400, "BadRequest", f"{type(err).__name__}: {err}")
    return wrapper


async def _body(request: web.Request) -> Any:
    raw = await request.read()
    return msgspec.json.decode(raw) if raw else {}


def control_routes(emu: ApiServerEmulator) -> list[web.RouteDef]:
    cluster = emu.cluster

    async def stats(request: web.Request) -> web.Response:
        data = emu.accounting.to_json()
        data["resourceVersion"] = cluster.rv
        data["objects"] = {name: len(store.objects) for name, store in cluster.stores.items()}
        return web.json_response(data)

    async def create(request: web.Request) -> web.Response:
        return web.json_response(cluster.apply(request.match_info["resource"], await _body(request)))

    async def patch(request: web.Request) -> web.Response:
        info = request.match_info
        return web.json_response(cluster.patch(info["resource"], info["name"], await _body(request),
                                               request.query.get("namespace", "")))

    async def delete(request: web.Request) -> web.Response:
        info = request.match_info
        return web.json_response(cluster.delete(info["resource"], info["name"], request.query.get("namespace", "")))

    async def seed(request: web.Request) -> web.Response:
        spec = await _body(request)
        created: dict[str, int] = {}
        if "namespaces" in spec:
            created["namespaces"] = cluster.seed_namespaces(
                int(spec["namespaces"]), spec.get("name_format", "ns-{i:06d}"), spec.get("labels"),
                spec.get("annotations"), bool(spec.get("last_applied", True)), int(spec.get("start", 0)),
                spec.get("label_sets", "shared"))
        if "nodes" in spec:
            created["nodes"] = cluster.seed("nodes", (make_node(n) for n in spec["nodes"]))
        if "pods" in spec:
            count, node = int(spec["pods"]), spec.get("node", "node-1")
            spread = max(1, int(spec.get("namespace_count", 1)))
            fmt = spec.get("name_format", "pod-{i:05d}")
            ns_fmt = spec.get("namespace_format", "ns-{i:06d}")
            created["pods"] = cluster.seed("pods", (
                make_pod(fmt.format(i=i), ns_fmt.format(i=i % spread), node) for i in range(count)))
        return web.json_response({"created": created, "resourceVersion": cluster.rv})

    async def faults(request: web.Request) -> web.Response:
        spec = await _body(request)
        if spec.get("clear"):
            emu.faults.clear()
        elif "delay" in spec:
            d = spec["delay"]
            emu.faults.delays[(d.get("verb", "*"), d.get("resource", "*"))] = float(d["seconds"])
        elif "close_watch_after" in spec:
            c = spec["close_watch_after"]
            emu.faults.close_watch_after[c["resource"]] = int(c["events"])
        else:
            emu.faults.inject(spec.get("verb", "*"), spec.get("resource", "*"), int(spec["status"]),
                              int(spec.get("count", 1)), int(spec.get("retry_after", 1)), spec.get("message", ""))
        return web.json_response({"ok": True})

    async def drop(request: web.Request) -> web.Response:
        spec = await _body(request)
        return web.json_response({"dropped": emu.drop_watches(spec.get("resource"), bool(spec.get("abort")))})

    async def compact(request: web.Request) -> web.Response:
        return web.json_response({"resourceVersion": cluster.compact()})

    async def settings(request: web.Request) -> web.Response:
        emu.settings.update(await _body(request))
        return web.json_response({"ok": True})

    async def reset_stats(request: web.Request) -> web.Response:
        emu.accounting.reset()
        return web.json_response({"ok": True})

    return [
        web.get("/_emulator/stats", _guarded(stats)),
        web.post("/_emulator/objects/{resource}", _guarded(create)),
        web.patch("/_emulator/objects/{resource}/{name}", _guarded(patch)),
        web.delete("/_emulator/objects/{resource}/{name}", _guarded(delete)),
        web.post("/_emulator/seed", _guarded(seed)),
        web.post("/_emulator/faults", _guarded(faults)),
        web.post("/_emulator/drop_watches", _guarded(drop)),
        web.post("/_emulator/compact", _guarded(compact)),
        web.post("/_emulator/settings", _guarded(settings)),
        web.post("/_emulator/reset_stats", _guarded(reset_stats)),
    ]
