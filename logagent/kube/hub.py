"""The live metadata hub: one watcher per kind per process, shared by every source.

- pods: always; only this node's (``fieldSelector=spec.nodeName=<node>``);
- namespaces: only if some source needs namespace fields (cluster-wide list);
  otherwise no namespace request is ever made;
- the node itself: only if some source needs node fields
  (``fieldSelector=metadata.name=<node>``).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable

from logagent.kube.client import KubeClient
from logagent.kube.config import KubernetesConfig
from logagent.kube.decode import Kind
from logagent.kube.model import NamespaceMeta, NodeMeta, PodMeta
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
        self.namespaces: Store[NamespaceMeta] | None = (
            namespace_store() if needs_namespaces else None
        )
        self._nodes: Store[NodeMeta] | None = node_store() if needs_node else None
        node_field = f"spec.nodeName={config.node_name}" if config.node_name else None
        self._pod_selectors = (pod_label_selector, _join_selectors(node_field, pod_field_selector))
        self._stats: dict[str, KindStats] = {"pods": KindStats()}
        if self.namespaces is not None:
            self._stats["namespaces"] = KindStats()
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
        return all(store.synced for store in self._stores().values())

    @property
    def stats(self) -> dict[str, KindStats]:
        return self._stats

    def add_pod_listener(self, callback: Callable[[PodMeta], None]) -> None:
        self.pods.add_listener(callback)

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
        waits = [store.wait_synced() for store in self._stores().values()]
        try:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)
        except TimeoutError:
            return False
        return True

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

    def _stores(self) -> dict[str, Store]:
        stores: dict[str, Store] = {"pods": self.pods}
        if self.namespaces is not None:
            stores["namespaces"] = self.namespaces
        if self._nodes is not None:
            stores["nodes"] = self._nodes
        return stores

    def _start_kind(self, kind: Kind, store: Store) -> None:
        if not self._running:
            return  # start() starts every kind then
        watcher = self._watcher(kind)
        self.watchers[kind] = watcher
        task = asyncio.create_task(self._run(watcher, store), name=f"kube-{kind}")
        self._kind_tasks[kind] = task
        self._tasks.append(task)

    async def _stop_kind(self, kind: str) -> None:
        self._stats.pop(kind, None)
        self.watchers.pop(kind, None)
        task = self._kind_tasks.pop(kind, None)
        if task is not None:
            self._tasks.remove(task)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _watcher(self, kind: Kind) -> Watcher:
        assert self._client is not None
        if kind == "pods":
            label_selector, field_selector = self._pod_selectors
        elif kind == "nodes":
            label_selector, field_selector = None, f"metadata.name={self.node_name}"
        else:
            label_selector, field_selector = None, None
        return Watcher(
            self._client,
            kind,
            self.config,
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
