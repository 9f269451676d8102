"""The Kubernetes-facing HTTP API: discovery, GET, LIST (paginated) and WATCH for core/v1."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from aiohttp import web

from .cluster import Cluster, Watcher, bookmark_frame, watch_frame
from .faults import Accounting, Faults, RequestRecord
from .responses import (
    API_GROUPS, JSON, VERSION, BadContinue, api_resource_list, api_versions, decode_continue, encode_continue,
    invalid_list_options, status_body, status_response,
)
from .selectors import SelectorError, make_predicate, parse_field_selector, parse_label_selector
from .settings import Settings
from .store import KINDS, StoredObject, StoreError, object_key

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_STREAM_BATCH = 1000  # objects per write when streaming a large list or initial events


class _Reject(Exception):
    def __init__(self, response: web.Response):
        self.response = response


def _bool(query: Any, name: str) -> bool | None:
    value = query.get(name)
    if value is None:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise _Reject(status_response(400, "BadRequest", f'invalid boolean value for {name}: "{value}"'))


class KubeApi:
    def __init__(self, cluster: Cluster, settings: Settings, faults: Faults, accounting: Accounting):
        self.cluster, self.settings, self.faults, self.accounting = cluster, settings, faults, accounting
        self.open_watchers: set[Watcher] = set()

    # -- discovery ---------------------------------------------------------

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/version", self.version),
            web.get("/healthz", self.healthz), web.get("/livez", self.healthz), web.get("/readyz", self.healthz),
            web.get("/api", self.api),
            web.get("/api/v1", self.api_v1),
            web.get("/apis", self.apis),
            web.route("*", "/api/v1/{tail:.+}", self.resource_request),
        ]

    async def version(self, request: web.Request) -> web.Response:
        return web.json_response(VERSION)

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def api(self, request: web.Request) -> web.Response:
        return web.json_response(api_versions(f"{request.host}"))

    async def api_v1(self, request: web.Request) -> web.Response:
        return web.json_response(api_resource_list())

    async def apis(self, request: web.Request) -> web.Response:
        return web.json_response(API_GROUPS)

    # -- resources -----------------------------------------------------

    async def resource_request(self, request: web.Request) -> web.StreamResponse:
        parts = request.match_info["tail"].strip("/").split("/")
        route = self._route(parts)
        if route is None:
            return status_response(404, "NotFound", "the server could not find the requested resource")
        resource, namespace, name = route
        query = request.query
        if name is not None:
            verb = "get"
        else:
            try:
                verb = "watch" if _bool(query, "watch") else "list"
            except _Reject as rejected:
                return rejected.response
        rec = self.accounting.record(verb, resource, namespace, dict(query))
        rec.name = name or ""
        if request.method != "GET":
            response = status_response(405, "MethodNotAllowed",
                                       f"the emulator serves only GET on {resource} (got {request.method})")
            self.accounting.finish(rec, 405)
            return response
        delay = self.faults.delay_for(verb, resource)
        if delay:
            await asyncio.sleep(delay)
        rule = self.faults.take(verb, resource)
        if rule is not None:
            response = self._fault_response(rule.status, rule.retry_after, rule.message, verb, resource, name)
            self.accounting.finish(rec, rule.status)
            self.accounting.sent(rec, len(response.body))  # type: ignore[arg-type]
            return response
        try:
            if verb == "get":
                response = self._get(resource, namespace, name)
            elif verb == "list":
                response = await self._list(request, resource, namespace, rec)
            else:
                response = await self._watch(request, resource, namespace, rec)
        except _Reject as rejected:
            response = rejected.response
        except StoreError as err:
            response = status_response(err.code, err.reason, err.message, err.details)
        except SelectorError as err:
            response = status_response(400, "BadRequest", str(err))
        self.accounting.finish(rec, response.status)
        if isinstance(response, web.Response) and isinstance(response.body, bytes):
            self.accounting.sent(rec, len(response.body))
        return response

    async def _write(self, rec: RequestRecord, response: web.StreamResponse, data: bytes) -> None:
        self.accounting.sent(rec, len(data))
        await response.write(data)

    @staticmethod
    def _route(parts: list[str]) -> tuple[str, str, str | None] | None:
        """(resource, namespace, name-or-None) for the paths the emulator serves."""
        if len(parts) == 1 and parts[0] in KINDS:
            return parts[0], "", None
        if len(parts) == 2 and parts[0] in ("namespaces", "nodes"):
            return parts[0], "", parts[1]
        if len(parts) == 3 and parts[0] == "namespaces" and parts[2] == "pods":
            return "pods", parts[1], None
        if len(parts) == 4 and parts[0] == "namespaces" and parts[2] == "pods":
            return "pods", parts[1], parts[3]
        return None

    @staticmethod
    def _fault_response(code: int, retry_after: int, message: str, verb: str = "get", resource: str = "",
                        name: str | None = None) -> web.Response:
        if code == 403:
            # the real authorizer's wording, as for a ServiceAccount without the RBAC rule
            what = f'{resource} "{name}"' if name else resource
            return status_response(403, "Forbidden", message or (
                f'{what} is forbidden: User "system:serviceaccount:logging:logagent" cannot {verb} resource '
                f'"{resource}" in API group "" at the cluster scope'),
                {"name": name, "kind": resource} if name else {"kind": resource})
        if code == 404:
            return status_response(404, "NotFound", message or f'{resource} "{name}" not found',
                                   {"name": name, "kind": resource})
        if code == 429:
            return status_response(429, "TooManyRequests", message or "Too many requests, please try again later.",
                                   {"retryAfterSeconds": retry_after}, headers={"Retry-After": str(retry_after)})
        if code == 500:
            return status_response(500, "InternalError", f"Internal error occurred: {message or 'injected fault'}",
                                   {"causes": [{"message": message or "injected fault"}]})
        if code == 503:
            return status_response(503, "ServiceUnavailable", message or "the server is currently unable to handle "
                                   "the request", headers={"Retry-After": str(retry_after)})
        return status_response(code, "InternalError", message or f"injected fault {code}")

    def _get(self, resource: str, namespace: str, name: str) -> web.Response:
        store = self.cluster.store(resource)
        obj = store.objects.get(object_key(namespace, name))
        if obj is None:
            return status_response(404, "NotFound", f'{resource} "{name}" not found', {"name": name, "kind": resource})
        body = b'{"kind":"%s","apiVersion":"v1",%s' % (store.kind.kind.encode(), obj.body[1:])
        return web.Response(body=body, content_type=JSON)

    def _selectors(self, resource: str, query: Any) -> Any:
        kind = KINDS[resource]
        labels = parse_label_selector(query.get("labelSelector", ""))
        fields = parse_field_selector(query.get("fieldSelector", ""), kind.field_labels)
        return make_predicate(labels, fields), bool(labels or fields)

    # -- LIST ------------------------------------------------------------

    async def _list(self, request: web.Request, resource: str, namespace: str,
                    rec: RequestRecord) -> web.StreamResponse:
        query = request.query
        store = self.cluster.store(resource)
        predicate, has_selector = self._selectors(resource, query)
        try:
            limit = max(0, int(query.get("limit") or 0))
        except ValueError:
            raise _Reject(status_response(400, "BadRequest", f"invalid limit: {query.get('limit')!r}")) from None
        rv_param = query.get("resourceVersion", "")
        match = query.get("resourceVersionMatch", "")
        token = query.get("continue", "")
        if match and match not in ("Exact", "NotOlderThan"):
            raise _Reject(invalid_list_options([("resourceVersionMatch", "FieldValueNotSupported",
                f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan"')]))
        if match and not rv_param:
            raise _Reject(invalid_list_options([("resourceVersionMatch", "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")]))
        if match == "Exact" and rv_param == "0":
            raise _Reject(invalid_list_options([("resourceVersionMatch", "FieldValueForbidden",
                'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"')]))

        start_after = ""
        snapshot_rv: int | None = None  # None: the current state
        if token:
            if rv_param and rv_param != "0":
                raise _Reject(status_response(400, "BadRequest",
                                              "specifying resource version is not allowed when using continue"))
            try:
                snapshot_rv, start_after = decode_continue(token)
            except BadContinue as err:
                raise _Reject(status_response(400, "BadRequest", str(err))) from None
            if snapshot_rv < store.compacted_rv:
                raise _Reject(status_response(410, "Expired", (
                    "The provided continue parameter is too old to display a consistent list result. You can start "
                    "a new list without the continue parameter, or use the continue token in this response to "
                    "retrieve the remainder of the results. Continuing with the provided token results in an "
                    "inconsistent list - objects that were created, modified, or deleted between the time the "
                    "first chunk was returned and now may show up in the list.")))
        elif rv_param == "0" and match != "Exact":
            if not self.settings.rv0_honours_limit:
                limit = 0
        elif rv_param:
            try:
                wanted = int(rv_param)
            except ValueError:
                raise _Reject(invalid_list_options([("resourceVersion", "FieldValueInvalid",
                    f'Invalid value: "{rv_param}": strconv.ParseUint: parsing "{rv_param}": invalid syntax')])) from None
            if wanted > self.cluster.rv:
                raise _Reject(status_response(504, "Timeout",
                    f"Too large resource version: {wanted}, current: {self.cluster.rv}",
                    {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                     "retryAfterSeconds": 1}))
            # Legacy rule: RV=N with a limit and no match means Exact (served from etcd).
            if match == "Exact" or (not match and limit > 0):
                if wanted < store.compacted_rv:
                    raise _Reject(status_response(410, "Expired",
                                                  "The resourceVersion for the provided list is too old."))
                snapshot_rv = wanted
        list_rv = snapshot_rv if snapshot_rv is not None else self.cluster.rv
        if snapshot_rv is not None and (not store.history or store.history[-1].rv <= snapshot_rv):
            snapshot_rv = None  # nothing changed since: the current state is that snapshot

        prefix = f"{namespace}/" if namespace else ""
        items: list[StoredObject] = []
        more = False
        for obj in store.iter_snapshot(snapshot_rv, start_after, prefix):
            if predicate is not None and not predicate(obj.labels, obj.fields):
                continue
            if limit and len(items) == limit:
                more = True
                break
            items.append(obj)
        meta = b'"resourceVersion":"%d"' % list_rv
        if more:
            meta += b',"continue":"%s"' % encode_continue(list_rv, items[-1].key).encode()
            if not has_selector:
                remaining = store.count_after(items[-1].key, prefix, snapshot_rv is None)
                if remaining is not None:
                    meta += b',"remainingItemCount":%d' % remaining
        head = b'{"kind":"%sList","apiVersion":"v1","metadata":{%s},"items":[' % (store.kind.kind.encode(), meta)
        if len(items) <= _STREAM_BATCH:
            return web.Response(body=head + b",".join(o.body for o in items) + b"]}", content_type=JSON)
        response = web.StreamResponse(headers={"Content-Type": JSON})
        await response.prepare(request)
        await self._write(rec, response, head)
        for i in range(0, len(items), _STREAM_BATCH):
            sep = b"," if i else b""
            await self._write(rec, response, sep + b",".join(o.body for o in items[i:i + _STREAM_BATCH]))
        await self._write(rec, response, b"]}")
        await response.write_eof()
        return response

    # -- WATCH -------------------------------------------------------------

    def _validate_watch(self, query: Any) -> bool | None:
        """sendInitialEvents as the server will honour it (validation like validateWatchOptions)."""
        if self.settings.watch_list == "ignored":
            return None
        send_initial = _bool(query, "sendInitialEvents")
        match = query.get("resourceVersionMatch", "")
        causes: list[tuple[str, str, str]] = []
        if send_initial is not None:
            if match != "NotOlderThan":
                causes.append(("resourceVersionMatch", "FieldValueForbidden",
                               "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
            if self.settings.watch_list == "forbidden":
                causes.append(("sendInitialEvents", "FieldValueForbidden", "Forbidden: sendInitialEvents is "
                               "forbidden for watch unless the WatchList feature gate is enabled"))
        if match:
            if send_initial is None:
                causes.append(("resourceVersionMatch", "FieldValueForbidden", "Forbidden: resourceVersionMatch is "
                               "forbidden for watch unless sendInitialEvents is provided"))
            if match != "NotOlderThan":
                causes.append(("resourceVersionMatch", "FieldValueNotSupported",
                               f'Unsupported value: "{match}": supported values: "NotOlderThan"'))
        if causes:
            raise _Reject(invalid_list_options(causes))
        return send_initial

    async def _watch(self, request: web.Request, resource: str, namespace: str,
                     rec: RequestRecord) -> web.StreamResponse:
        query = request.query
        store = self.cluster.store(resource)
        predicate, _ = self._selectors(resource, query)
        send_initial = self._validate_watch(query)
        bookmarks = bool(_bool(query, "allowWatchBookmarks"))
        try:
            timeout = float(query.get("timeoutSeconds") or 0)
        except ValueError:
            raise _Reject(status_response(400, "BadRequest", "invalid timeoutSeconds")) from None
        rv_param = query.get("resourceVersion", "")
        watcher = Watcher(resource, f"{namespace}/" if namespace else "", predicate)

        # Decide what comes before live events, and register in the same tick so nothing is missed.
        initial: list[StoredObject] = []
        backlog: list[bytes] = []
        expired_at: int | None = None
        if rv_param in ("", "0") and send_initial is not False or send_initial:
            # "Start at most recent / any" (and a streaming list): synthetic ADDED for the current state.
            initial = [o for o in store.iter_snapshot(None, "", watcher.prefix) if watcher.matches(o)]
        elif rv_param not in ("", "0"):
            try:
                since = int(rv_param)
            except ValueError:
                raise _Reject(invalid_list_options([("resourceVersion", "FieldValueInvalid",
                                                     f'Invalid value: "{rv_param}"')])) from None
            if since < store.compacted_rv:
                expired_at = since
            else:
                backlog = [f for ev in store.events_after(since) if (f := watcher.frame_for(ev)) is not None]
        if expired_at is not None:
            message = f"too old resource version: {expired_at} ({store.compacted_rv + 1})"
            if self.settings.watch_expired_as_http_410:
                raise _Reject(status_response(410, "Expired", message))
            response = web.StreamResponse(headers={"Content-Type": JSON})
            await response.prepare(request)
            await self._write(rec, response, msgspec.json.encode(
                {"type": "ERROR", "object": status_body(410, "Expired", message)}) + b"\n")
            await response.write_eof()
            return response
        start_rv = self.cluster.rv
        watcher.pending.extend(backlog)
        self.cluster.watchers[resource].add(watcher)
        self.open_watchers.add(watcher)
        self.accounting.open_watches[resource] += 1
        try:
            return await self._stream(request, rec, watcher, initial, start_rv, bool(send_initial) and bookmarks,
                                      bookmarks, timeout)
        finally:
            self.cluster.watchers[resource].discard(watcher)
            self.open_watchers.discard(watcher)
            self.accounting.open_watches[resource] -= 1

    async def _stream(self, request: web.Request, rec: RequestRecord, watcher: Watcher, initial: list[StoredObject], start_rv: int,
                      end_bookmark: bool, bookmarks: bool, timeout: float) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        resource = watcher.resource
        response = web.StreamResponse(headers={"Content-Type": JSON})
        response.enable_chunked_encoding()
        await response.prepare(request)
        budget = self.faults.close_watch_after.get(resource)
        sent = 0
        deadline = loop.time() + timeout if timeout > 0 else None

        def over_budget() -> bool:
            return budget is not None and sent >= budget

        for i in range(0, len(initial), _STREAM_BATCH):
            batch = initial[i:i + _STREAM_BATCH]
            if budget is not None:
                batch = batch[:max(0, budget - sent)]
            await self._write(rec, response, b"".join(watch_frame("ADDED", watcher.kind, o.body) for o in batch))
            sent += len(batch)
            self.accounting.watch_events_sent[resource] += len(batch)
            if over_budget() or watcher.closed:
                return await self._end(request, response, watcher)
        if end_bookmark:
            await self._write(rec, response, bookmark_frame(resource, start_rv, initial_events_end=True))
        next_bookmark = loop.time() + self.settings.bookmark_interval if bookmarks else None
        while not watcher.closed and not over_budget():
            if watcher.pending:
                take = len(watcher.pending) if budget is None else min(len(watcher.pending), budget - sent)
                frames = [watcher.pending.popleft() for _ in range(take)]
                await self._write(rec, response, b"".join(frames))
                sent += take
                self.accounting.watch_events_sent[resource] += take
                continue
            now = loop.time()
            if deadline is not None and now >= deadline:
                break
            if next_bookmark is not None and now >= next_bookmark:
                await self._write(rec, response, bookmark_frame(resource, self.cluster.rv))
                next_bookmark = now + self.settings.bookmark_interval
                continue
            wake_at = min(t for t in (deadline, next_bookmark, now + 3600) if t is not None)
            watcher.wake.clear()
            try:
                await asyncio.wait_for(watcher.wake.wait(), timeout=max(0.0, wake_at - now))
            except TimeoutError:
                pass
        return await self._end(request, response, watcher)

    @staticmethod
    async def _end(request: web.Request, response: web.StreamResponse, watcher: Watcher) -> web.StreamResponse:
        if watcher.closed == "abort" and request.transport is not None:
            request.transport.close()  # like a crashed apiserver or a broken LB: no terminating chunk
            return response
        await response.write_eof()
        return response

    def drop_watches(self, resource: str | None = None, abort: bool = False) -> int:
        """End every open watch (of one resource, or all); returns how many were closed."""
        dropped = 0
        for watcher in list(self.open_watchers):
            if resource is None or watcher.resource == resource:
                watcher.close("abort" if abort else "drop")
                dropped += 1
        return dropped
