"""Namespace labels by lookup: GET only the namespaces this node's pods use.

The ``lookup`` side of ``kubernetes.namespace_metadata`` (README, "Namespace
fields at scale"). No namespace is ever listed or watched: when a pod of a
namespace not yet known arrives in the pod store, that namespace is fetched
with ``GET /api/v1/namespaces/<name>?resourceVersion=0`` (served from the
apiserver's watch cache). Each namespace still used by a live pod of the node
is fetched again after ``namespace_lookup_ttl_secs`` (jittered down by up to
20 %, so that nodes started together drift apart); one that no live pod uses
any more is forgotten ``delay_deletion_ms`` later (late lines of a deleted pod
still find it meanwhile).

Requests are paced: at most ``namespace_lookup_concurrency`` in flight, a
token bucket of ``namespace_lookup_rate`` per second, and after a failure the
namespace is tried again after the shared backoff (full jitter; a 429's
Retry-After pauses every lookup). A failed refresh keeps the last labels; 404
means the namespace is gone (no labels, looked up again after the TTL); 403
logs once which RBAC rule is missing.

Read side, like a :class:`~logagent.kube.store.Store`: :meth:`get`, ``len()``,
``in``, :meth:`values`, :attr:`synced`, :meth:`wait_synced`; plus
:meth:`pending`, the first lookup of a namespace still in flight.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Iterator

import aiohttp

from logagent.kube.client import ApiError, KubeClient
from logagent.kube.config import KubernetesConfig
from logagent.kube.decode import KubeDecodeError, decode_object
from logagent.kube.model import NamespaceMeta, PodMeta
from logagent.kube.pacing import Backoff, TokenBucket
from logagent.kube.stats import KindStats
from logagent.kube.store import PodStore

log = logging.getLogger(__name__)

#: how often entries are checked for refresh, retry and forgetting
_TICK_SECS = 0.5
#: a refresh is due after the TTL times a random factor in this range
_TTL_JITTER = (0.8, 1.0)

RBAC_HINT = (
    'grant the agent\'s ServiceAccount `get` on `namespaces` (apiGroups: [""]) in a ClusterRole '
    "(daemonset/components/namespace-lookup); or set insert_namespace_fields: false"
)

#: lookup results, as counted in ``LookupStats.results``
RESULTS = ("ok", "unchanged", "not_found", "forbidden", "throttled", "error")


class LookupStats:
    """Counters of the namespace lookups (read by the metrics exporter)."""

    __slots__ = ("results",)

    def __init__(self) -> None:
        #: lookups by result: ok (new labels), unchanged, not_found, forbidden, throttled, error
        self.results: dict[str, int] = dict.fromkeys(RESULTS, 0)


class _Entry:
    __slots__ = ("meta", "fetched_at", "due", "unused_since", "first", "queued")

    def __init__(self, now: float, first: asyncio.Future[None]) -> None:
        #: the last labels fetched; None before the first success or after a 404
        self.meta: NamespaceMeta | None = None
        #: clock time of the last successful fetch (None before the first)
        self.fetched_at: float | None = None
        #: clock time the next fetch is due (refresh or retry)
        self.due = now
        #: clock time since which no live pod uses it (None while one does)
        self.unused_since: float | None = None
        #: resolved when the first lookup has an answer (or gave up)
        self.first: asyncio.Future[None] | None = first
        #: waiting in the work queue or being fetched
        self.queued = False


class NamespaceLookup:
    """Namespaces of this node's pods, fetched one by one and kept fresh."""

    def __init__(
        self,
        cfg: KubernetesConfig,
        pods: PodStore,
        *,
        stats: KindStats | None = None,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cfg = cfg
        self.pods = pods
        self.stats = stats if stats is not None else KindStats()
        self.lookup_stats = LookupStats()
        self._rng = rng or random.Random()
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._backoff = Backoff(cfg.backoff_initial_ms / 1000, cfg.backoff_max_ms / 1000, self._rng)
        self._bucket = TokenBucket(cfg.namespace_lookup_rate, cfg.namespace_lookup_rate, clock=clock)
        self._paused_until = 0.0
        self._forbidden_logged = False
        self._synced = False
        self._client: KubeClient | None = None
        pods.add_listener(self._on_pod)
        for pod in pods.values():  # chosen after the pods arrived (auto)
            self._on_pod(pod)

    # --- read side -------------------------------------------------------------

    def get(self, name: str) -> NamespaceMeta | None:
        entry = self._entries.get(name)
        return entry.meta if entry is not None else None

    def __len__(self) -> int:
        return sum(1 for e in self._entries.values() if e.meta is not None)

    def __contains__(self, name: str) -> bool:
        return self.get(name) is not None

    def values(self) -> Iterator[NamespaceMeta]:
        return iter([e.meta for e in self._entries.values() if e.meta is not None])

    def pending(self, name: str) -> asyncio.Future[None] | None:
        """The first lookup of ``name`` while it is still in flight, else None."""
        entry = self._entries.get(name)
        if entry is None or entry.first is None or entry.first.done():
            return None
        return entry.first

    def oldest_age(self) -> float | None:
        """Seconds since the least recently fetched namespace was fetched (None if none is cached)."""
        times = [e.fetched_at for e in self._entries.values() if e.fetched_at is not None and e.meta is not None]
        return self._clock() - min(times) if times else None

    @property
    def synced(self) -> bool:
        """True once the pods are synced and the first lookups they asked for have answers (stays True)."""
        if not self._synced and self.pods.synced and not self._firsts():
            self._synced = True
        return self._synced

    async def wait_synced(self) -> None:
        await self.pods.wait_synced()
        while not self.synced:
            await asyncio.gather(*(asyncio.shield(f) for f in self._firsts()))

    # --- running ---------------------------------------------------------------

    def close(self) -> None:
        """Stop following the pod store (the hub dropped this lookup: a reload)."""
        self.pods.remove_listener(self._on_pod)

    async def run(self, client: KubeClient) -> None:
        """Fetch and refresh until cancelled."""
        self._client = client
        workers = [
            asyncio.create_task(self._worker(), name=f"kube-namespace-lookup-{i}")
            for i in range(self.cfg.namespace_lookup_concurrency)
        ]
        try:
            while True:
                self._maintain()
                await asyncio.sleep(_TICK_SECS)
        finally:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    def _on_pod(self, pod: PodMeta) -> None:
        name = pod.namespace
        if not name or name in self._entries or pod.deleted_at is not None:
            return
        self._entries[name] = _Entry(self._clock(), asyncio.get_running_loop().create_future())
        self._enqueue(name)

    def _enqueue(self, name: str) -> None:
        entry = self._entries[name]
        if not entry.queued:
            entry.queued = True
            self._queue.put_nowait(name)

    def _maintain(self) -> None:
        """Queue what is due; forget what no live pod has used for delay_deletion_ms."""
        now = self._clock()
        used = {p.namespace for p in self.pods.values() if p.deleted_at is None}
        forget_after = self.cfg.delay_deletion_ms / 1000
        for name, entry in list(self._entries.items()):
            if name in used:
                entry.unused_since = None
            elif entry.unused_since is None:
                entry.unused_since = now
            if entry.unused_since is not None and now - entry.unused_since >= forget_after:
                if not entry.queued:
                    self._settle(entry)
                    del self._entries[name]
                continue
            if entry.due <= now:
                self._enqueue(name)

    # --- fetching ----------------------------------------------------------------

    async def _worker(self) -> None:
        while True:
            name = await self._queue.get()
            try:
                entry = self._entries.get(name)
                if entry is not None:
                    await self._pace()
                    await self._fetch(name, entry)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug must not stop the lookups
                log.exception("namespace lookup of %s failed unexpectedly", name)
            finally:
                entry = self._entries.get(name)
                if entry is not None:
                    entry.queued = False

    async def _pace(self) -> None:
        pause = self._paused_until - self._clock()
        if pause > 0:
            await asyncio.sleep(pause)
        await self._bucket.acquire()

    async def _fetch(self, name: str, entry: _Entry) -> None:
        try:
            meta = await self._get(name)
        except ApiError as e:
            self._on_api_error(name, entry, e)
        except (aiohttp.ClientError, OSError, TimeoutError, KubeDecodeError, ValueError) as e:
            self._on_failure(name, entry, "error", e)
        else:
            self._on_answer(entry, meta)

    async def _get(self, name: str) -> NamespaceMeta:
        assert self._client is not None
        try:
            response = await self._client.get(f"/api/v1/namespaces/{name}", [("resourceVersion", "0")])
        except ApiError as e:
            self.stats.count_request("get", f"{e.status // 100}xx")
            raise
        except BaseException:
            self.stats.count_request("get", "error")
            raise
        self.stats.count_request("get", "2xx")
        async with response:
            body = await response.read()
        meta = decode_object("namespaces", body)
        assert isinstance(meta, NamespaceMeta)
        return meta

    def _on_answer(self, entry: _Entry, meta: NamespaceMeta) -> None:
        now = self._clock()
        self._backoff.reset()
        if entry.meta is not None and entry.meta == meta:
            self.lookup_stats.results["unchanged"] += 1  # readers keep the same object
        else:
            self.lookup_stats.results["ok"] += 1
            self.stats.events += 1
            entry.meta = meta
        entry.fetched_at = now
        self.stats.last_event_at = now
        entry.due = now + self.cfg.namespace_lookup_ttl_secs * self._rng.uniform(*_TTL_JITTER)
        self._settle(entry)

    def _on_api_error(self, name: str, entry: _Entry, error: ApiError) -> None:
        if error.status == 404:
            self.lookup_stats.results["not_found"] += 1
            if entry.meta is not None:
                log.info("namespace %s is gone (404); its pods' records lose their namespace labels", name)
            entry.meta = None
            entry.due = self._clock() + self.cfg.namespace_lookup_ttl_secs * self._rng.uniform(*_TTL_JITTER)
            self._settle(entry)
            return
        if error.status == 403:
            if not self._forbidden_logged:
                self._forbidden_logged = True
                log.error("namespace lookup forbidden (%s): %s", error, RBAC_HINT)
            self._on_failure(name, entry, "forbidden", error, quiet=True)
            return
        if error.status == 429:
            self.stats.throttled += 1
            self._on_failure(name, entry, "throttled", error, retry_after=error.retry_after)
            return
        self._on_failure(name, entry, "error", error)

    def _on_failure(
        self,
        name: str,
        entry: _Entry,
        result: str,
        error: Exception,
        *,
        retry_after: float | None = None,
        quiet: bool = False,
    ) -> None:
        """Keep the last labels; try again after the backoff (and any Retry-After)."""
        self.lookup_stats.results[result] += 1
        self.stats.request_errors += 1
        delay = self._backoff.next_delay()
        now = self._clock()
        if retry_after is not None:
            delay = max(delay, retry_after)
            self._paused_until = max(self._paused_until, now + retry_after)
        entry.due = now + delay
        if not quiet:
            # one line per failure streak, not per namespace and retry
            level = logging.WARNING if self._backoff.attempt == 1 else logging.DEBUG
            log.log(level, "namespace lookup of %s: %s; retrying in %.2fs", name, error or type(error).__name__, delay)
        self._settle(entry)

    @staticmethod
    def _settle(entry: _Entry) -> None:
        """The first lookup has an answer (good or bad): stop holding back its pods' lines."""
        first = entry.first
        if first is not None:
            entry.first = None
            if not first.done():
                first.set_result(None)

    def _firsts(self) -> list[asyncio.Future[None]]:
        return [e.first for e in self._entries.values() if e.first is not None and not e.first.done()]
