"""An offline metadata hub filled once from a ``kubectl get -o json`` file.

``kubectl get pods,namespaces,nodes -A -o json > snapshot.json`` produces the
input. Used for tests, demos and air-gapped replays; it offers the same
interface as the live :class:`logagent.kube.hub.KubeHub` and never talks to an
apiserver.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from logagent.kube.decode import KubeDecodeError, decode_snapshot
from logagent.kube.model import NamespaceMeta, NodeMeta, PodMeta
from logagent.kube.stats import KindStats
from logagent.kube.store import PodStore, Store, fill, namespace_store


class SnapshotError(Exception):
    """The snapshot file cannot be read or decoded."""


class SnapshotHub:
    def __init__(
        self,
        path: str | Path,
        node_name: str | None = None,
        needs_namespaces: bool = False,
        needs_node: bool = False,
    ) -> None:
        self.path = Path(path)
        self.node_name = node_name
        self.needs_node = needs_node
        self.pods = PodStore(retain_deleted_secs=0)
        self.namespaces: Store[NamespaceMeta] | None = (
            namespace_store() if needs_namespaces else None
        )
        self._node: NodeMeta | None = None
        self._stats = {"pods": KindStats()}
        if needs_namespaces:
            self._stats["namespaces"] = KindStats()
        if needs_node:
            self._stats["nodes"] = KindStats()
        self._started = False

    @property
    def node(self) -> NodeMeta | None:
        return self._node

    @property
    def synced(self) -> bool:
        return self.pods.synced

    @property
    def stats(self) -> dict[str, KindStats]:
        return self._stats

    def add_pod_listener(self, callback: Callable[[PodMeta], None]) -> None:
        self.pods.add_listener(callback)

    def remove_pod_listener(self, callback: Callable[[PodMeta], None]) -> None:
        self.pods.remove_listener(callback)

    def namespace_wait(self, name: str) -> Awaitable[None] | None:
        return None  # everything is loaded at start

    async def start(self) -> None:
        """Read and decode the file; raises :class:`SnapshotError` naming the path."""
        if self._started:
            return
        pods, namespaces, nodes = await self._read()
        self.load(pods, namespaces, nodes)
        self._started = True

    async def set_kinds(self, *, needs_namespaces: bool, needs_node: bool) -> None:
        """Fill or drop the namespace and node stores (a config reload); the pods stay."""
        add_namespaces = needs_namespaces and self.namespaces is None
        add_node = needs_node and not self.needs_node
        if not needs_namespaces:
            self.namespaces = None
            self._stats.pop("namespaces", None)
        if not needs_node:
            self.needs_node, self._node = False, None
            self._stats.pop("nodes", None)
        if not (add_namespaces or add_node) or not self._started:
            return
        _, namespaces, nodes = await self._read()
        if add_namespaces:
            self.namespaces = namespace_store()
            self._stats["namespaces"] = KindStats()
            fill(self.namespaces, namespaces)
            self._stats["namespaces"].events += len(namespaces)
        if add_node and self.node_name is not None:
            self.needs_node = True
            self._stats["nodes"] = KindStats()
            self._node = next((n for n in nodes if n.name == self.node_name), None)

    async def _read(self) -> tuple[list[PodMeta], list[NamespaceMeta], list[NodeMeta]]:
        try:
            body = await asyncio.to_thread(self.path.read_bytes)
        except OSError as e:
            raise SnapshotError(f"cannot read kubernetes snapshot {self.path}: {e}") from None
        try:
            return decode_snapshot(body)
        except KubeDecodeError as e:
            raise SnapshotError(f"kubernetes snapshot {self.path}: {e}") from None

    def load(
        self, pods: list[PodMeta], namespaces: list[NamespaceMeta], nodes: list[NodeMeta]
    ) -> None:
        """Fill the stores from already decoded objects."""
        if self.node_name is not None:
            pods = [p for p in pods if p.node_name == self.node_name]
        self._stats["pods"].events += len(pods)
        if self.namespaces is not None:
            fill(self.namespaces, namespaces)
            self._stats["namespaces"].events += len(namespaces)
        if self.needs_node and self.node_name is not None:
            self._node = next((n for n in nodes if n.name == self.node_name), None)
            self._stats["nodes"].events += 1 if self._node is not None else 0
        fill(self.pods, pods)  # last: listeners may look at namespaces / node

    async def wait_synced(self, timeout: float | None = None) -> bool:
        if self.synced:
            return True
        try:
            await asyncio.wait_for(self.pods.wait_synced(), timeout)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        pass
