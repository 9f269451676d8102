import asyncio

import msgspec
import pytest

from logagent.kube.decode import decode_pod
from logagent.kube.model import namespace_meta
from logagent.kube.store import PodStore, fill, namespace_store
from tests.test_kube_support import pod, to_bytes


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def meta(name, **kw):
    return decode_pod(to_bytes(pod(name, **kw)))


def test_apply_get_and_unchanged_resource_version_keeps_object():
    store = PodStore()
    a1 = meta("a", rv="1")
    assert store.apply(a1) is a1
    assert store.get("uid-a") is a1 and len(store) == 1
    assert store.apply(meta("a", rv="1")) is a1  # same rv: the stored object stays
    a2 = meta("a", rv="2", labels={"x": "y"})
    store.apply(a2)
    assert store.get("uid-a") is a2


def test_relist_keeps_identical_objects_by_identity():
    store = PodStore()
    fill(store, [meta("a", rv="1"), meta("b", rv="1")])
    a, b = store.get("uid-a"), store.get("uid-b")
    store.begin_replace()
    store.add_replacing(meta("a", rv="1"))  # unchanged copy
    store.add_replacing(meta("b", rv="5"))  # changed
    store.add_replacing(meta("c", rv="1"))  # new
    assert store.get("uid-c") is None  # not visible before the swap
    store.commit_replace()
    assert store.get("uid-a") is a
    assert store.get("uid-b") is not b and store.get("uid-b").resource_version == "5"
    assert store.get("uid-c") is not None


def test_mirror_hash_lookup_follows_updates_and_relists():
    store = PodStore(retain_deleted_secs=0)
    static = meta("etcd", rv="1", annotations={"kubernetes.io/config.mirror": "h1"})
    store.apply(static)
    assert store.get("h1") is static
    store.apply(meta("etcd", rv="2", annotations={"kubernetes.io/config.mirror": "h2"}))
    assert store.get("h1") is None and store.get("h2").resource_version == "2"
    fill(store, [meta("etcd", rv="3", annotations={"kubernetes.io/config.mirror": "h3"})])
    assert store.get("h3") is not None and store.get("h2") is None
    store.delete(store.get("uid-etcd"))
    assert store.get("h3") is None and len(store) == 0


def test_graveyard_keeps_deleted_pod_until_swept():
    clock = FakeClock()
    store = PodStore(retain_deleted_secs=60, clock=clock)
    store.apply(meta("a", rv="1", annotations={"kubernetes.io/config.mirror": "m"}))
    store.delete(meta("a", rv="2"))
    dead = store.get("uid-a")
    assert dead is not None and dead.deleted_at is not None and dead.resource_version == "2"
    clock.now += 59
    assert store.sweep() == 0 and store.get("uid-a") is dead
    clock.now += 2
    assert store.get("uid-a") is dead  # lookups never purge; only the sweep does
    assert store.sweep() == 1
    assert store.get("uid-a") is None and store.graveyard_size == 0


def test_relist_buries_vanished_pods_and_keeps_buried_ones():
    clock = FakeClock()
    store = PodStore(retain_deleted_secs=60, clock=clock)
    fill(store, [meta("a"), meta("b"), meta("c")])
    store.delete(store.get("uid-c"))
    fill(store, [meta("a")])
    assert store.get("uid-a").deleted_at is None
    assert store.get("uid-b").deleted_at is not None  # vanished during the relist
    assert store.get("uid-c").deleted_at is not None
    clock.now += 61
    assert store.sweep() == 2 and len(store) == 1


def test_readded_pod_is_not_purged_by_old_graveyard_entry():
    clock = FakeClock()
    store = PodStore(retain_deleted_secs=10, clock=clock)
    store.apply(meta("a", rv="1"))
    store.delete(meta("a", rv="2"))
    store.apply(meta("a", rv="3"))
    clock.now += 11
    assert store.sweep() == 0
    assert store.get("uid-a").deleted_at is None


def test_namespace_store_deletes_at_once():
    store = namespace_store()
    ns = namespace_meta("prod", {"team": "a"})
    store.apply(ns)
    assert store.get("prod") is ns
    store.delete(ns)
    assert store.get("prod") is None


def test_listeners_see_new_and_changed_objects_only():
    store = PodStore()
    seen = []
    store.add_listener(lambda p: seen.append((p.name, p.resource_version)))
    store.add_listener(lambda p: 1 / 0)  # a broken listener must not break the store
    fill(store, [meta("a", rv="1")])
    store.apply(meta("a", rv="1"))
    store.apply(meta("a", rv="2"))
    store.delete(meta("a", rv="3"))
    fill(store, [meta("b", rv="1")])
    assert seen == [("a", "1"), ("a", "2"), ("b", "1")]


async def test_synced_flag_and_wait():
    store = PodStore()
    assert not store.synced
    waiter = asyncio.create_task(store.wait_synced())
    await asyncio.sleep(0)
    assert not waiter.done()
    fill(store, [])
    await asyncio.wait_for(waiter, 5)
    assert store.synced


def test_objects_are_immutable_snapshots():
    store = PodStore()
    a = meta("a", labels={"x": "1"})
    store.apply(a)
    with pytest.raises(AttributeError):
        store.get("uid-a").labels = {}  # type: ignore[misc]
    updated = msgspec.structs.replace(a, resource_version="9", labels={"x": "2"})
    store.apply(updated)
    assert a.labels == {"x": "1"}  # a reader's old reference is untouched


def test_replace_protocol_misuse_is_an_error():
    store = PodStore()
    with pytest.raises(RuntimeError):
        store.add_replacing(meta("a"))
    with pytest.raises(RuntimeError):
        store.commit_replace()
