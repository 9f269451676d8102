"""The list/watch protocol state machine for one kind, and the reflector that
applies its events to a store.

Split as in kube-rs: the :class:`Watcher` talks to the API and yields
:class:`WatcherEvent`\\ s; :func:`reflect` applies them to a
:class:`~logagent.kube.store.Store`. Protocol (DESIGN.md principle 4):

1. after a random initial delay, get the initial state: a streaming watch-list
   (``sendInitialEvents=true``, ends with a bookmark annotated
   ``k8s.io/initial-events-end``) where the server accepts it, else a list from
   the watch cache (``resourceVersion=0``) decoded page by page;
2. watch from that resourceVersion with bookmarks and a randomised
   ``timeoutSeconds``; when a watch ends (timeout, EOF, dropped connection),
   resume from the last resourceVersion seen, without listing;
3. relist only when the server says the resourceVersion is gone (HTTP 410 or an
   ERROR event with code 410);
4. on errors, exponential backoff with full jitter, reset after a stable
   period; a 429's Retry-After is honoured.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from contextlib import aclosing
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

import aiohttp
import msgspec

from logagent.kube.client import ApiError, KubeClient
from logagent.kube.config import KubernetesConfig
from logagent.kube.decode import KubeDecodeError, Kind, WatchEvent, decode_list, decode_watch_event
from logagent.kube.model import KubeObject
from logagent.kube.pacing import Backoff
from logagent.kube.stats import KindStats
from logagent.kube.store import Store

log = logging.getLogger(__name__)

#: the API paths of the watched kinds (all cluster-wide; pods are narrowed by
#: field selector to one node)
RESOURCE_PATHS: dict[str, str] = {
    "pods": "/api/v1/pods",
    "namespaces": "/api/v1/namespaces",
    "nodes": "/api/v1/nodes",
}

#: a watch that ends this soon without delivering anything counts as a failure
#: (backoff), so a server that closes watches at once is not hammered
_MIN_HEALTHY_WATCH_SECS = 1.0

#: answers to a watch-list request that mean "not supported here": fall back to list
_WATCH_LIST_REJECTED = frozenset({400, 403, 404, 405, 422})


class WatcherEvent(msgspec.Struct, frozen=True, gc=False):
    """``init`` (a new initial state begins), ``init_apply`` (an object of it),
    ``init_done`` (it is complete), ``apply`` (added or modified), ``delete``."""

    type: Literal["init", "init_apply", "init_done", "apply", "delete"]
    obj: KubeObject | None = None


_INIT = WatcherEvent("init")
_INIT_DONE = WatcherEvent("init_done")


class _Gone(Exception):
    """The resourceVersion is too old (410): a relist is needed."""


class Watcher:
    """Yields the events of one kind, forever, until cancelled."""

    def __init__(
        self,
        client: KubeClient,
        kind: Kind,
        cfg: KubernetesConfig,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        stats: KindStats | None = None,
        rng: random.Random | None = None,
        sleep: Callable[[float], object] = asyncio.sleep,
    ) -> None:
        self.client = client
        self.kind = kind
        self.cfg = cfg
        self.label_selector = label_selector or None
        self.field_selector = field_selector or None
        self.stats = stats if stats is not None else KindStats()
        self._rng = rng or random.Random()
        self._sleep = sleep
        self._backoff = Backoff(cfg.backoff_initial_ms / 1000, cfg.backoff_max_ms / 1000, self._rng)
        #: last resourceVersion seen; None until an initial state is complete
        self.resource_version: str | None = None
        self._watch_list_supported = cfg.use_watch_list
        self._path = RESOURCE_PATHS[kind]
        #: response lines / list pages read by the current request
        self._lines = 0

    # --- the state machine --------------------------------------------------

    async def events(self) -> AsyncIterator[WatcherEvent]:
        if self.cfg.initial_delay_ms > 0:
            await self._sleep(self._rng.uniform(0, self.cfg.initial_delay_ms / 1000))
        while True:
            started = time.monotonic()
            self._lines = 0
            try:
                if self.resource_version is None:
                    if self._watch_list_supported:
                        stream = self._watch(initial=True)
                    else:
                        stream = self._list()
                else:
                    stream = self._watch(initial=False)
                async with aclosing(stream):
                    async for event in stream:
                        yield event
                if self._lines == 0 and time.monotonic() - started < _MIN_HEALTHY_WATCH_SECS:
                    raise _EmptyWatch()
                self._reset_backoff_if_stable(started)
            except _UseList:
                continue
            except _Gone:
                self.stats.relists += 1
                log.info("%s: resourceVersion %s expired; relisting", self.kind, self.resource_version)
                self.resource_version = None
            except ApiError as e:
                self._reset_backoff_if_stable(started)
                await self._on_error(e, retry_after=e.retry_after, throttled=e.status == 429)
            except (aiohttp.ClientError, OSError, TimeoutError, KubeDecodeError, ValueError, _EmptyWatch) as e:
                # ValueError: aiohttp's "line too long"; _EmptyWatch: see above
                self._reset_backoff_if_stable(started)
                await self._on_error(e)

    def _reset_backoff_if_stable(self, started: float) -> None:
        """A request that ran long before failing resets the backoff."""
        if time.monotonic() - started >= self.cfg.backoff_reset_secs:
            self._backoff.reset()

    async def _on_error(
        self, error: Exception, retry_after: float | None = None, throttled: bool = False
    ) -> None:
        self.stats.request_errors += 1
        if throttled:
            self.stats.throttled += 1
        delay = self._backoff.next_delay()
        if retry_after is not None:
            delay = max(delay, retry_after)
        log.warning("%s: %s; retrying in %.2fs", self.kind, error or type(error).__name__, delay)
        await self._sleep(delay)

    # --- initial state by paged list ----------------------------------------

    async def _list(self) -> AsyncIterator[WatcherEvent]:
        params: list[tuple[str, str]] = [("resourceVersion", "0")]
        params += self._selectors()
        params.append(("limit", str(self.cfg.list_page_size)))
        started = False
        continue_token: str | None = None
        while True:
            page_params = params if continue_token is None else [
                *(p for p in params if p[0] != "resourceVersion"),
                ("continue", continue_token),
            ]
            self.stats.list_requests += 1
            try:
                response = await self._get("list", page_params)
            except ApiError as e:
                if e.status == 410:
                    if continue_token is not None:
                        # the continue token expired mid-list: start a fresh list
                        raise _RestartList() from None
                    raise _Gone() from None
                raise
            async with response:
                body = await response.read()
            items, rv, continue_token = decode_list(self.kind, body)
            del body
            self._lines += 1
            if not started:
                started = True
                yield _INIT
            for obj in items:
                yield WatcherEvent("init_apply", obj)
            del items
            if continue_token is None:
                self.resource_version = rv
                yield _INIT_DONE
                return

    # --- watch (and streaming watch-list) ------------------------------------

    async def _watch(self, initial: bool) -> AsyncIterator[WatcherEvent]:
        response = await self._open_watch(initial)
        in_initial = initial
        async with response:
            if in_initial:
                yield _INIT
            async for ev in self._watch_events(response.content):
                if ev.type == "BOOKMARK":
                    if self._on_bookmark(ev, in_initial):
                        in_initial = False
                        yield _INIT_DONE
                    continue
                if ev.type == "ERROR":
                    raise _error_event(ev)
                self.stats.events += 1
                if in_initial:
                    yield WatcherEvent("init_apply", ev.obj)
                    continue
                if ev.resource_version:
                    self.resource_version = ev.resource_version
                yield WatcherEvent("delete" if ev.type == "DELETED" else "apply", ev.obj)
        if in_initial:
            # ended before the initial state was complete: the next attempt
            # starts a new initial state
            raise _IncompleteInitial()

    def _watch_params(self, initial: bool) -> tuple[list[tuple[str, str]], int]:
        timeout = self._rng.randint(self.cfg.watch_timeout_min_secs, self.cfg.watch_timeout_max_secs)
        params: list[tuple[str, str]] = [("watch", "1"), ("allowWatchBookmarks", "true")]
        if initial:
            params += [
                ("sendInitialEvents", "true"),
                ("resourceVersionMatch", "NotOlderThan"),
                ("resourceVersion", "0"),
            ]
        else:
            assert self.resource_version is not None
            params.append(("resourceVersion", self.resource_version))
        params += self._selectors()
        params.append(("timeoutSeconds", str(timeout)))
        return params, timeout

    async def _open_watch(self, initial: bool) -> Any:
        """Start a watch (or a streaming watch-list); 410 and "not supported" become signals."""
        params, timeout = self._watch_params(initial)
        self.stats.watch_requests += 1
        if not initial:
            self.stats.watch_restarts += 1
        try:
            return await self._get("watch", params, read_timeout=timeout + self.client.request_timeout)
        except ApiError as e:
            if e.status == 410:
                raise _Gone() from None
            if initial and e.status in _WATCH_LIST_REJECTED:
                log.info("%s: streaming watch-list not accepted (%s); using list", self.kind, e)
                self._watch_list_supported = False
                raise _UseList() from None
            raise

    async def _watch_events(self, content: Any) -> AsyncIterator[WatchEvent]:
        """The decoded events of a watch stream; undecodable lines are counted and skipped."""
        while True:
            line = await content.readline()
            if not line:
                return
            self._lines += 1
            if line.isspace():
                continue
            try:
                ev = decode_watch_event(self.kind, line)
            except KubeDecodeError as e:
                self.stats.decode_errors += 1
                log.warning("%s: skipping an undecodable watch event: %s", self.kind, e)
                continue
            self.stats.last_event_at = time.monotonic()
            yield ev

    def _on_bookmark(self, ev: WatchEvent, in_initial: bool) -> bool:
        """Take a bookmark's resourceVersion; True when it ends a watch-list's initial events."""
        self.stats.bookmarks += 1
        if in_initial and not ev.initial_events_end:
            # a server that ignores sendInitialEvents (older than 1.27) sends
            # plain bookmarks, never the end mark
            log.info("%s: server ignores sendInitialEvents; using list", self.kind)
            self._watch_list_supported = False
            raise _UseList()
        self.resource_version = ev.resource_version
        return in_initial

    async def _get(self, verb: str, params: list[tuple[str, str]], **kwargs: Any) -> Any:
        """A request, counted by verb and status class."""
        try:
            response = await self.client.get(self._path, params, **kwargs)
        except ApiError as e:
            self.stats.count_request(verb, f"{e.status // 100}xx")
            raise
        except BaseException:
            self.stats.count_request(verb, "error")
            raise
        self.stats.count_request(verb, "2xx")
        return response

    def _selectors(self) -> list[tuple[str, str]]:
        params = []
        if self.label_selector:
            params.append(("labelSelector", self.label_selector))
        if self.field_selector:
            params.append(("fieldSelector", self.field_selector))
        return params


def _error_event(ev: WatchEvent) -> Exception:
    """The exception an ERROR event of a watch stream stands for."""
    status = ev.error_status
    if status is None:
        return ApiError(0, "", "")
    if status.code == 410:
        return _Gone()
    return ApiError(status.code, status.reason, status.message)


class _EmptyWatch(Exception):
    def __str__(self) -> str:
        return "the watch ended without any event"


class _IncompleteInitial(_EmptyWatch):
    def __str__(self) -> str:
        return "the watch-list stream ended before its initial events were complete"


class _UseList(Exception):
    """Streaming watch-list is not supported: get the initial state by list."""


class _RestartList(_EmptyWatch):
    def __str__(self) -> str:
        return "the list's continue token expired"


async def reflect(events: AsyncIterator[WatcherEvent], store: Store) -> None:
    """Apply a watcher's events to a store (the only writer of that store)."""
    async for ev in events:
        etype = ev.type
        if etype == "apply":
            store.apply(ev.obj)
        elif etype == "delete":
            store.delete(ev.obj)
        elif etype == "init_apply":
            store.add_replacing(ev.obj)
        elif etype == "init":
            store.begin_replace()
        else:  # init_done
            store.commit_replace()
