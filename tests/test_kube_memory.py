"""Memory-motivated behaviours of the metadata side (see benchmarks/README.md):

NamespaceMeta keeps the name label implicitly and shares its other labels
between namespaces; a relist keeps unchanged objects with their own key strings.
"""

from __future__ import annotations

import msgspec
import pytest

from logagent.kube.decode import decode_object
from logagent.kube.model import NAMESPACE_NAME_LABEL, NamespaceMeta
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
    middle = NamespaceMeta(name="n", resource_version="1", labels={"a": "1", NAMESPACE_NAME_LABEL: "n", "z": "2"})
    assert list(middle.labels) == ["a", NAMESPACE_NAME_LABEL, "z"]


def test_namespaces_with_the_same_other_labels_share_one_dict() -> None:
    first, second = decoded("ns-a", {"team": "a"}), decoded("ns-b", {"team": "a"})
    assert first._other_labels is second._other_labels
    assert first.labels[NAMESPACE_NAME_LABEL] == "ns-a" and second.labels[NAMESPACE_NAME_LABEL] == "ns-b"
    assert decoded("ns-c", {"team": "c"})._other_labels == {"team": "c"}


def test_a_name_label_that_differs_from_the_name_is_kept_as_it_is() -> None:
    odd = NamespaceMeta(name="real", resource_version="1", labels={NAMESPACE_NAME_LABEL: "other"})
    assert odd.labels == {NAMESPACE_NAME_LABEL: "other"}
    assert NamespaceMeta(name="x", resource_version="1", labels={}).labels == {}


def test_immutable_and_compared_by_value() -> None:
    ns = NamespaceMeta(name="x", resource_version="3", labels={"a": "1"})
    assert ns == NamespaceMeta(name="x", resource_version="3", labels={"a": "1"})
    assert ns != NamespaceMeta(name="x", resource_version="4", labels={"a": "1"})
    with pytest.raises(AttributeError):
        ns.name = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(ns)
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
