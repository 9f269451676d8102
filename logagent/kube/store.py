"""In-memory stores of compact metadata: a read handle plus the reflector's writer side.

Readers call :meth:`Store.get`, ``len()``, :meth:`Store.values` and look at
:attr:`Store.synced`. The reflector (the only writer) calls :meth:`Store.apply`,
:meth:`Store.delete` and, for an initial list or a relist, builds the new
content beside the old with :meth:`Store.begin_replace` / :meth:`Store.add_replacing`
/ :meth:`Store.commit_replace` and swaps it in at once, so readers never see a
half-built store. An object whose resourceVersion is unchanged is kept as it
is: a relist does not duplicate memory and readers keep seeing the same object
(by identity).

Deleted objects can be retained for a while (the "graveyard", used for pods so
that lines written just before a pod's deletion are still enriched); they are
purged by :meth:`Store.sweep`, which the hub calls periodically.

Everything runs on the event loop thread; no locks are needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

import msgspec

from logagent.kube.model import KubeObject, NamespaceMeta, NodeMeta, PodMeta, name_key, pod_key

T = TypeVar("T", bound=KubeObject)
Listener = Callable[[T], None]

log = logging.getLogger(__name__)


class Store(Generic[T]):
    """Objects of one kind by key (pods by uid, namespaces and nodes by name)."""

    def __init__(
        self,
        key: Callable[[T], str],
        *,
        retain_deleted_secs: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._key = key
        self._items: dict[str, T] = {}
        self._retain = retain_deleted_secs
        self._clock = clock
        #: (purge deadline, key, the retained object), in deadline order
        self._graveyard: deque[tuple[float, str, T]] = deque()
        #: the content being built by a relist: every current key (value None
        #: until the relist sends that object again) plus the new ones
        self._building: dict[str, T | None] | None = None
        self._listeners: list[Callable[[T], None]] = []
        self._synced = False
        self._synced_event = asyncio.Event()

    # --- read side ---------------------------------------------------------

    def get(self, key: str) -> T | None:
        return self._items.get(key)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def values(self) -> Iterator[T]:
        """The current objects (deleted ones still retained included)."""
        return iter(list(self._items.values()))

    @property
    def synced(self) -> bool:
        """True once the initial state has been loaded (stays True across relists)."""
        return self._synced

    async def wait_synced(self) -> None:
        await self._synced_event.wait()

    @property
    def retain_deleted_secs(self) -> float:
        return self._retain

    @property
    def graveyard_size(self) -> int:
        return len(self._graveyard)

    def add_listener(self, callback: Callable[[T], None]) -> None:
        """Call ``callback(obj)`` for every new or changed object (not for deletions)."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Callable[[T], None]) -> None:
        """Stop calling ``callback`` (one registration of it; nothing if it is not registered)."""
        with contextlib.suppress(ValueError):
            self._listeners.remove(callback)

    @property
    def listener_count(self) -> int:
        return len(self._listeners)

    # --- writer side (the reflector) -----------------------------------------

    def apply(self, obj: T) -> T:
        """Insert or replace; returns the object now stored (the old one if unchanged)."""
        key = self._key(obj)
        old = self._items.get(key)
        if old is not None and _unchanged(old, obj):
            return old
        self._set(key, obj, old)
        self._notify(obj)
        return obj

    def delete(self, obj: T) -> None:
        """Remove an object, or keep it for ``retain_deleted_secs`` marked as deleted."""
        key = self._key(obj)
        old = self._items.get(key)
        if self._retain <= 0:
            if old is not None:
                self._unset(key, old)
            return
        if old is not None and getattr(old, "deleted_at", None) is not None:
            return  # already in the graveyard
        self._bury(self._items, key, obj, old)

    def begin_replace(self) -> None:
        """Start building a new content (initial list or relist) beside the current one."""
        # Pre-sized with the current keys: a relist of N objects does not go
        # through the dict's growth steps, each of which briefly holds the old
        # and the new hash table (measured: benchmarks/README.md, relist peak).
        self._building = dict.fromkeys(self._items)

    def add_replacing(self, obj: T) -> None:
        building = self._building
        if building is None:
            raise RuntimeError("add_replacing() outside begin_replace()/commit_replace()")
        key = self._key(obj)
        old = self._items.get(key)
        if old is not None and _unchanged(old, obj):
            # keep the stored object under its own key string: keying it by the
            # new object's equal string would keep a second copy of every key
            building[self._key(old)] = old
        else:
            building[key] = obj

    def commit_replace(self) -> None:
        """Swap the built content in; objects missing from it count as deleted."""
        building = self._building
        if building is None:
            raise RuntimeError("commit_replace() without begin_replace()")
        self._building = None
        for key in [key for key, obj in building.items() if obj is None]:
            del building[key]  # not in the new state
        new: dict[str, T] = building  # type: ignore[assignment]  # no None left
        old_items = self._items
        changed = [obj for key, obj in new.items() if old_items.get(key) is not obj]
        if self._retain > 0:
            for key, old in old_items.items():
                if key in new:
                    continue
                if getattr(old, "deleted_at", None) is not None:
                    new[key] = old  # stays in the graveyard until its deadline
                else:
                    self._bury(new, key, old, None)
        self._items = new
        self._reindex()
        self.mark_synced()
        for obj in changed:
            self._notify(obj)

    def mark_synced(self) -> None:
        if not self._synced:
            self._synced = True
            self._synced_event.set()

    def sweep(self, now: float | None = None) -> int:
        """Purge retained deleted objects whose time is up; returns how many."""
        if now is None:
            now = self._clock()
        purged = 0
        graveyard = self._graveyard
        while graveyard and graveyard[0][0] <= now:
            _, key, obj = graveyard.popleft()
            if self._items.get(key) is obj:
                self._unset(key, obj)
                purged += 1
        return purged

    # --- internals -----------------------------------------------------------

    def _bury(self, items: dict[str, T], key: str, obj: T, old: T | None) -> None:
        dead = msgspec.structs.replace(obj, deleted_at=time.time())
        if items is self._items:
            self._set(key, dead, old)
        else:
            items[key] = dead
        self._graveyard.append((self._clock() + self._retain, key, dead))

    def _set(self, key: str, obj: T, old: T | None) -> None:
        self._items[key] = obj

    def _unset(self, key: str, obj: T) -> None:
        del self._items[key]

    def _reindex(self) -> None:
        pass

    def _notify(self, obj: T) -> None:
        for callback in self._listeners:
            try:
                callback(obj)
            except Exception:  # a listener bug must not stop the watch
                log.exception("store listener %r failed", callback)


def _unchanged(old: KubeObject, new: KubeObject) -> bool:
    if isinstance(old, NamespaceMeta):
        return old == new  # no resourceVersion kept: the compact form itself is compared
    assert not isinstance(new, NamespaceMeta)
    return (
        old.resource_version == new.resource_version
        and bool(old.resource_version)
        and getattr(old, "deleted_at", None) is None
    )


class PodStore(Store[PodMeta]):
    """Pods by uid, also found by a static pod's mirror hash (its log directory name)."""

    def __init__(
        self, *, retain_deleted_secs: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(pod_key, retain_deleted_secs=retain_deleted_secs, clock=clock)
        self._by_mirror: dict[str, str] = {}

    def get(self, key: str) -> PodMeta | None:
        """By uid, or by mirror hash for a static pod."""
        pod = self._items.get(key)
        if pod is None:
            uid = self._by_mirror.get(key)
            if uid is not None:
                pod = self._items.get(uid)
        return pod

    def _set(self, key: str, obj: PodMeta, old: PodMeta | None) -> None:
        self._items[key] = obj
        if old is not None and old.mirror_hash and old.mirror_hash != obj.mirror_hash:
            self._by_mirror.pop(old.mirror_hash, None)
        if obj.mirror_hash:
            self._by_mirror[obj.mirror_hash] = key

    def _unset(self, key: str, obj: PodMeta) -> None:
        del self._items[key]
        if obj.mirror_hash and self._by_mirror.get(obj.mirror_hash) == key:
            del self._by_mirror[obj.mirror_hash]

    def _reindex(self) -> None:
        self._by_mirror = {p.mirror_hash: uid for uid, p in self._items.items() if p.mirror_hash}


def namespace_store() -> Store[NamespaceMeta]:
    return Store(name_key)


def node_store() -> Store[NodeMeta]:
    return Store(name_key)


def fill(store: Store[T], objs: Iterable[T]) -> None:
    """Load a complete initial state at once (used by the snapshot hub)."""
    store.begin_replace()
    for obj in objs:
        store.add_replacing(obj)
    store.commit_replace()
