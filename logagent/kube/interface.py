"""The metadata hub contract that sources use (live :class:`~logagent.kube.hub.KubeHub`
or offline :class:`~logagent.kube.snapshot.SnapshotHub`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from logagent.kube.model import NamespaceMeta, NodeMeta, PodMeta
from logagent.kube.lookup import NamespaceLookup
from logagent.kube.stats import KindStats
from logagent.kube.store import PodStore, Store


class MetadataHub(Protocol):
    #: pods by uid (or a static pod's mirror hash)
    pods: PodStore
    #: None when no source needs namespace fields (then nothing is requested);
    #: a watched Store, or the NamespaceLookup of the lookup mode (same read side)
    namespaces: Store[NamespaceMeta] | NamespaceLookup | None

    @property
    def node(self) -> NodeMeta | None: ...

    @property
    def synced(self) -> bool: ...

    @property
    def stats(self) -> dict[str, KindStats]: ...

    def add_pod_listener(self, callback: Callable[[PodMeta], None]) -> None: ...

    def remove_pod_listener(self, callback: Callable[[PodMeta], None]) -> None:
        """Undo ``add_pod_listener`` (a source that stops: a reload removed it)."""
        ...

    def namespace_wait(self, name: str) -> Awaitable[None] | None:
        """A bounded wait for the first lookup of a namespace still in flight, else None."""

    async def start(self) -> None: ...

    async def wait_synced(self, timeout: float | None = None) -> bool: ...

    async def stop(self) -> None: ...

    async def set_kinds(self, *, needs_namespaces: bool, needs_node: bool) -> None:
        """Start or stop the namespace and node watches (a config reload); pods stay watched."""
        ...
