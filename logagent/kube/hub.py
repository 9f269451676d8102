"""The live metadata hub: one watcher per kind per process, shared by every source.

- pods: always; only this node's (``fieldSelector=spec.nodeName=<node>``);
- namespaces: only if some source needs namespace fields, then either a
  cluster-wide list/watch or lookups of just the namespaces of this node's pods
  (``kubernetes.namespace_metadata``: watch, lookup, or auto: chosen at start
  by counting namespaces, see :mod:`logagent.kube.namespace_mode`); otherwise
  no namespace request is ever made;
- the node itself: only if some source needs node fields
  (``fieldSelector=metadata.name=<node>``).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable

import msgspec

from logagent.kube.client import KubeClient
from logagent.kube.config import KubernetesConfig
from logagent.kube.decode import Kind
from logagent.kube.lookup import NamespaceLookup
from logagent.kube.model import NamespaceMeta, NodeMeta, PodMeta
from logagent.kube.namespace_mode import ModeChoice, choose_mode
from logagent.kube.stats import KindStats
from logagent.kube.store import PodStore, Store, namespace_store, node_store
from logagent.kube.watcher import Watcher, reflect

log = logging.getLogger(__name__)

#: pods labelled ``logagent.dev/exclude=true`` are not watched at all
DEFAULT_POD_LABEL_SELECTOR = "logagent.dev/exclude!=true"

#: wait after a reflector crashed (a bug) before restarting it
_REFLECTOR_RESTART_SECS = 5.0


def _join_selectors(*parts: str | None) -> str | None:
    joined = ",".join(p for p in parts if p)
    return joined or None


class KubeHub:
    def __init__(
        self,
        config: KubernetesConfig,
        *,
        needs_namespaces: bool = False,
        needs_node: bool = False,
        pod_label_selector: str | None = DEFAULT_POD_LABEL_SELECTOR,
        pod_field_selector: str | None = None,
        client: KubeClient | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if needs_node and not config.node_name:
            raise ValueError("kubernetes.node_name is required for node fields")
        self.config = config
        self.node_name = config.node_name
        self._client = client
        self._owns_client = client is None
        self._rng = rng or random.Random()
        self.pods = PodStore(retain_deleted_secs=config.delay_deletion_ms / 1000)
        #: a namespace Store (watch, and auto until the choice), a
        #: NamespaceLookup (lookup), or None when no source needs namespaces
        self.namespaces: Store[NamespaceMeta] | NamespaceLookup | None = None
        self.namespace_lookup: NamespaceLookup | None = None
        #: the namespace mode in use, once chosen (None before, or when not needed)
        self.namespace_mode: ModeChoice | None = None
        self._namespaces_chosen = asyncio.Event()
        self._stats: dict[str, KindStats] = {"pods": KindStats()}
        if needs_namespaces:
            self._stats["namespaces"] = KindStats()
            if config.namespace_metadata == "lookup":
                self._use_lookup()
            else:
                self.namespaces = namespace_store()
        self._nodes: Store[NodeMeta] | None = node_store() if needs_node else None
        node_field = f"spec.nodeName={config.node_name}" if config.node_name else None
        self._pod_selectors = (pod_label_selector, _join_selectors(node_field, pod_field_selector))
        if self._nodes is not None:
            self._stats["nodes"] = KindStats()
        self._tasks: list[asyncio.Task[None]] = []
        #: the reflector task of each watched kind
        self._kind_tasks: dict[str, asyncio.Task[None]] = {}
        self._running = False
        self.watchers: dict[str, Watcher] = {}

    # --- the hub contract ------------------------------------------------------

    @property
    def node(self) -> NodeMeta | None:
        if self._nodes is None or self.node_name is None:
            return None
        return self._nodes.get(self.node_name)

    @property
    def synced(self) -> bool:
        if self.namespaces is not None and not self._namespaces_chosen.is_set():
            return False
        return all(store.synced for store in self._stores().values())

    @property
    def stats(self) -> dict[str, KindStats]:
        return self._stats

    def add_pod_listener(self, callback: Callable[[PodMeta], None]) -> None:
        self.pods.add_listener(callback)

    def remove_pod_listener(self, callback: Callable[[PodMeta], None]) -> None:
        self.pods.remove_listener(callback)

    async def start(self) -> None:
        """Connect and start the watches; raises ``KubeConfigError`` on bad configuration."""
        if self._tasks:
            return
        if self._client is None:
            self._client = await KubeClient.from_config(self.config)
        if self.node_name is None:
            log.warning("kubernetes.node_name is not set: watching the pods of every node")
        self._running = True
        for kind, store in self._stores().items():
            self._start_kind(kind, store)
        if self.pods.retain_deleted_secs > 0:
            self._tasks.append(asyncio.create_task(self._sweep(), name="kube-graveyard"))

    async def wait_synced(self, timeout: float | None = None) -> bool:
        """Wait until every store has its initial state; False on timeout."""
        waits = [
            self._wait_namespaces() if kind == "namespaces" else store.wait_synced()
            for kind, store in self._stores().items()
        ]
        try:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)
        except TimeoutError:
            return False
        return True

    def namespace_wait(self, name: str) -> Awaitable[None] | None:
        """While the first lookup of namespace ``name`` is in flight: a wait for it,
        bounded by ``namespace_lookup_wait_secs``; else None (nothing to wait for)."""
        lookup = self.namespace_lookup
        pending = lookup.pending(name) if lookup is not None else None
        if pending is None:
            return None
        return self._bounded_wait(pending)

    async def set_kinds(self, *, needs_namespaces: bool, needs_node: bool) -> None:
        """Start or stop the namespace and node watches (a config reload).

        The pod watch and the stores of kinds still needed are left alone; a
        kind no longer needed has its watch closed and its store dropped. Call
        ``wait_synced`` afterwards for a kind just started.
        """
        if needs_node and not self.node_name:
            raise ValueError("kubernetes.node_name is required for node fields")
        if needs_namespaces and self.namespaces is None:
            self.namespaces = namespace_store()
            self._stats["namespaces"] = KindStats()
            self._start_kind("namespaces", self.namespaces)
        if needs_node and self._nodes is None:
            self._nodes = node_store()
            self._stats["nodes"] = KindStats()
            self._start_kind("nodes", self._nodes)
        if not needs_namespaces and self.namespaces is not None:
            self.namespaces = None
            await self._stop_kind("namespaces")
        if not needs_node and self._nodes is not None:
            self._nodes = None
            await self._stop_kind("nodes")

    async def stop(self) -> None:
        self._running = False
        self._kind_tasks.clear()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None and self._owns_client:
            await self._client.close()
            self._client = None

    # --- internals ---------------------------------------------------------------

    def _stores(self) -> dict[str, Store | NamespaceLookup]:
        stores: dict[str, Store | NamespaceLookup] = {"pods": self.pods}
        if self.namespaces is not None:
            stores["namespaces"] = self.namespaces
        if self._nodes is not None:
            stores["nodes"] = self._nodes
        return stores

    def _use_lookup(self) -> None:
        self.namespace_lookup = NamespaceLookup(
            self.config, self.pods, stats=self._stats["namespaces"], rng=random.Random(self._rng.random())
        )
        self.namespaces = self.namespace_lookup

    async def _run_namespaces(self) -> None:
        """Choose the namespace mode (auto: after the start delay), then watch or look up."""
        assert self._client is not None
        cfg = self.config
        if cfg.namespace_metadata == "auto" and cfg.initial_delay_ms > 0:
            await asyncio.sleep(self._rng.uniform(0, cfg.initial_delay_ms / 1000))
        choice = await choose_mode(self._client, cfg, self._stats["namespaces"])
        if choice.mode == "lookup" and self.namespace_lookup is None:
            self._use_lookup()
        self.namespace_mode = choice
        self._namespaces_chosen.set()
        log.info("namespace metadata: %s", choice.describe(cfg))
        if self.namespace_lookup is not None:
            await self.namespace_lookup.run(self._client)
            return
        assert isinstance(self.namespaces, Store)
        watcher = self.watchers["namespaces"] = self._watcher("namespaces", delayed=cfg.namespace_metadata == "watch")
        await self._run(watcher, self.namespaces)

    async def _wait_namespaces(self) -> None:
        await self._namespaces_chosen.wait()
        assert self.namespaces is not None
        await self.namespaces.wait_synced()

    async def _bounded_wait(self, pending: asyncio.Future[None]) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(pending), self.config.namespace_lookup_wait_secs)
        except TimeoutError:
            pass


    def _start_kind(self, kind: Kind, store: Store) -> None:
        if not self._running:
            return  # start() starts every kind then
        if kind == "namespaces":
            coro = self._run_namespaces()
        else:
            watcher = self.watchers[kind] = self._watcher(kind)
            coro = self._run(watcher, store)
        task = asyncio.create_task(coro, name=f"kube-{kind}")
        self._kind_tasks[kind] = task
        self._tasks.append(task)

    async def _stop_kind(self, kind: str) -> None:
        if kind == "namespaces":
            if self.namespace_lookup is not None:
                self.namespace_lookup.close()
            self.namespace_lookup = None
            self.namespace_mode = None
            self._namespaces_chosen.clear()
        self._stats.pop(kind, None)
        self.watchers.pop(kind, None)
        task = self._kind_tasks.pop(kind, None)
        if task is not None:
            self._tasks.remove(task)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


    def _watcher(self, kind: Kind, delayed: bool = True) -> Watcher:
        assert self._client is not None
        if kind == "pods":
            label_selector, field_selector = self._pod_selectors
        elif kind == "nodes":
            label_selector, field_selector = None, f"metadata.name={self.node_name}"
        else:
            label_selector, field_selector = None, None
        cfg = self.config if delayed else msgspec.structs.replace(self.config, initial_delay_ms=0)
        return Watcher(
            self._client,
            kind,
            cfg,
            label_selector=label_selector,
            field_selector=field_selector,
            stats=self._stats[kind],
            rng=random.Random(self._rng.random()),
        )

    async def _run(self, watcher: Watcher, store: Store) -> None:
        while True:
            try:
                await reflect(watcher.events(), store)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s reflector failed; restarting", watcher.kind)
                await asyncio.sleep(_REFLECTOR_RESTART_SECS)

    async def _sweep(self) -> None:
        interval = min(5.0, max(0.05, self.pods.retain_deleted_secs / 4))
        while True:
            await asyncio.sleep(interval)
            self.pods.sweep()
