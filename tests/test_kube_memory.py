"""Memory-motivated behaviours of the metadata side (see benchmarks/README.md):

NamespaceMeta keeps the name label implicitly, shares its key schema and
repeated label values between namespaces and keeps no resourceVersion; a
relist keeps unchanged objects with their own key strings.
"""

from __future__ import annotations

import sys

import msgspec
import pytest

from logagent.kube.decode import decode_object
from logagent.kube.model import NAMESPACE_NAME_LABEL, NamespaceMeta, namespace_meta
from logagent.kube.store import fill, namespace_store
from apiserver_emulator.objects import make_namespace


def decoded(name: str, labels: dict[str, str], rv: str = "1") -> NamespaceMeta:
    obj = make_namespace(name, labels=labels, last_applied=True)
    obj["metadata"]["resourceVersion"] = rv
    ns = decode_object("namespaces", msgspec.json.encode(obj))
    assert isinstance(ns, NamespaceMeta)
    return ns


def test_labels_come_back_whole_and_in_the_api_order() -> None:
    ns = decoded("shop", {"team": "a", "zone": "z"})
    assert ns.labels == {NAMESPACE_NAME_LABEL: "shop", "team": "a", "zone": "z"}
    assert list(ns.labels) == [NAMESPACE_NAME_LABEL, "team", "zone"]
    middle = namespace_meta("n", {"a": "1", NAMESPACE_NAME_LABEL: "n", "z": "2"})
    assert list(middle.labels) == ["a", NAMESPACE_NAME_LABEL, "z"]
    many = {f"k{i:02d}": str(i) for i in range(40)}
    assert namespace_meta("big", many).labels == many  # past the flat layouts


def test_namespaces_share_their_key_schema_and_repeated_values() -> None:
    first, second = decoded("ns-a", {"team": "a", "cost": "cc-1"}), decoded("ns-b", {"team": "a", "cost": "cc-2"})
    assert first.schema is second.schema
    assert first.labels["team"] is second.labels["team"]  # one copy of a value that repeats
    assert first.labels[NAMESPACE_NAME_LABEL] == "ns-a" and second.labels[NAMESPACE_NAME_LABEL] == "ns-b"
    assert decoded("ns-c", {"team": "c"}).labels == {NAMESPACE_NAME_LABEL: "ns-c", "team": "c"}


def test_a_namespace_is_small_and_holds_no_resource_version() -> None:
    ns = decoded("ns-000001", {"team": "t", "env": "prod", "cost-center": "cc-1", "managed-by": "argocd"})
    # 16 B header + name + schema + 4 values; no dict, tuple, GC header or resourceVersion
    assert sys.getsizeof(ns) == 16 + 8 * 6
    assert not hasattr(ns, "resource_version")


def test_a_name_label_that_differs_from_the_name_is_kept_as_it_is() -> None:
    odd = namespace_meta("real", {NAMESPACE_NAME_LABEL: "other"})
    assert odd.labels == {NAMESPACE_NAME_LABEL: "other"}
    assert namespace_meta("x", {}).labels == {}


def test_immutable_and_compared_by_name_and_labels() -> None:
    ns = namespace_meta("x", {"a": "1"})
    assert ns == namespace_meta("x", {"a": "1"}) and hash(ns) == hash(namespace_meta("x", {"a": "1"}))
    assert ns != namespace_meta("x", {"a": "2"})
    assert ns != namespace_meta("x", {"a": "1", "b": "2"})
    assert ns != namespace_meta("y", {"a": "1"})
    with pytest.raises(AttributeError):
        ns.name = "y"  # type: ignore[misc]
    assert "labels={'a': '1'}" in repr(ns)


def test_a_relist_keeps_unchanged_objects_under_their_own_key_strings() -> None:
    store = namespace_store()
    fill(store, [decoded(f"ns-{i}", {"team": "a"}) for i in range(3)])
    before = {ns.name: ns for ns in store.values()}
    fill(store, [decoded("ns-0", {"team": "a"}), decoded("ns-1", {"team": "b"}, rv="2"), decoded("ns-3", {"team": "a"})])
    assert store.get("ns-0") is before["ns-0"]
    assert store.get("ns-1") is not before["ns-1"] and store.get("ns-1").labels["team"] == "b"  # type: ignore[union-attr]
    assert store.get("ns-2") is None and store.get("ns-3") is not None
    keys = {id(k) for k in store._items}  # noqa: SLF001
    assert id(before["ns-0"].name) in keys  # not an equal copy from the relist's decoded object
