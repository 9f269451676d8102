import json
import sys

import msgspec
import pytest

from logagent.kube.decode import (
    KubeDecodeError,
    decode_list,
    decode_object,
    decode_pod,
    decode_snapshot,
    decode_status,
    decode_watch_event,
)
from logagent.kube.model import ContainerMeta, NodeMeta, PodMeta, namespace_meta
from tests.test_kube_support import fixture, pod, to_bytes

FIXTURE_POD = PodMeta(
    uid="uidValue",
    name="nameValue",
    namespace="namespaceValue",
    resource_version="resourceVersionValue",
    labels={"labelsKey": "labelsValue"},
    annotations={"annotationsKey": "annotationsValue"},
    node_name="nodeNameValue",
    pod_ip="podIPValue",
    pod_ips=("ipValue",),
    owner="kindValue/nameValue",
    containers={
        "nameValue": ContainerMeta(
            image="imageValue", container_id="containerIDValue", image_id="imageIDValue"
        )
    },
)
FIXTURE_NS = namespace_meta("nameValue", {"labelsKey": "labelsValue"})
FIXTURE_NODE = NodeMeta(
    name="nameValue", resource_version="resourceVersionValue", labels={"labelsKey": "labelsValue"}
)


def test_fixtures_decode_as_is():
    assert decode_pod(fixture("Pod")) == FIXTURE_POD
    assert decode_object("namespaces", fixture("Namespace")) == FIXTURE_NS
    assert decode_object("nodes", fixture("Node")) == FIXTURE_NODE


@pytest.mark.parametrize(
    "kind,name,expected",
    [("pods", "Pod", FIXTURE_POD), ("namespaces", "Namespace", FIXTURE_NS), ("nodes", "Node", FIXTURE_NODE)],
)
def test_fixtures_in_watch_event_and_list(kind, name, expected):
    body = fixture(name)
    for etype in ("ADDED", "MODIFIED", "DELETED"):
        ev = decode_watch_event(kind, b'{"type":"%s","object":%s}' % (etype.encode(), body))
        assert ev.type == etype
        assert ev.obj == expected
        assert ev.resource_version == "resourceVersionValue"
    page = (
        b'{"kind":"%sList","apiVersion":"v1","metadata":{"resourceVersion":"77","continue":"tok"},'
        b'"items":[%s,%s]}' % (name.encode(), body, body)
    )
    items, rv, cont = decode_list(kind, page)
    assert items == [expected, expected]
    assert (rv, cont) == ("77", "tok")


def test_fixtures_in_kubectl_list_snapshot():
    body = b'{"kind":"List","apiVersion":"v1","metadata":{},"items":[%s,%s,%s,%s]}' % (
        fixture("Pod"),
        fixture("Namespace"),
        fixture("Node"),
        b'{"kind":"Service","metadata":{"name":"s"}}',
    )
    pods, namespaces, nodes = decode_snapshot(body)
    assert pods == [FIXTURE_POD]
    assert namespaces == [FIXTURE_NS]
    assert nodes == [FIXTURE_NODE]


def test_typed_list_snapshot_without_item_kinds():
    body = to_bytes({"kind": "PodList", "items": [{"metadata": {"name": "a", "uid": "u"}}]})
    pods, namespaces, nodes = decode_snapshot(body)
    assert [p.name for p in pods] == ["a"] and namespaces == [] and nodes == []


def test_list_without_continue_and_empty_items():
    items, rv, cont = decode_list("pods", b'{"metadata":{"resourceVersion":"5"},"items":null}')
    assert items == [] and rv == "5" and cont is None
    items, rv, cont = decode_list("pods", b'{"metadata":{"resourceVersion":"5","continue":""},"items":[]}')
    assert cont is None


def test_owner_prefers_controller_reference():
    p = pod("a")
    p["metadata"]["ownerReferences"] = [
        {"kind": "ConfigMap", "name": "cm", "uid": "1"},
        {"kind": "ReplicaSet", "name": "web-5d9", "uid": "2", "controller": True},
    ]
    assert decode_pod(to_bytes(p)).owner == "ReplicaSet/web-5d9"
    p["metadata"]["ownerReferences"] = [{"kind": "ConfigMap", "name": "cm", "uid": "1"}]
    assert decode_pod(to_bytes(p)).owner == "ConfigMap/cm"
    del p["metadata"]["ownerReferences"]
    assert decode_pod(to_bytes(p)).owner is None


def test_containers_merge_spec_and_status():
    p = pod("a", containers=("app", "sidecar"))
    p["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    p["status"]["containerStatuses"] = [
        {"name": "app", "image": "registry/app:1", "imageID": "sha256:aa", "containerID": "containerd://c1"}
    ]
    p["status"]["initContainerStatuses"] = [{"name": "init", "imageID": "sha256:bb", "containerID": "containerd://c0"}]
    meta = decode_pod(to_bytes(p))
    assert meta.containers == {
        "app": ContainerMeta("registry/app:1", "containerd://c1", "sha256:aa"),
        "sidecar": ContainerMeta("registry/sidecar:1", None, None),
        "init": ContainerMeta("busybox", "containerd://c0", "sha256:bb"),
    }


def test_mirror_hash_and_ips():
    p = pod("static", annotations={"kubernetes.io/config.mirror": "abc123"})
    p["status"].update(podIP="10.0.0.1", podIPs=[{"ip": "10.0.0.1"}, {"ip": "fd00::1"}])
    meta = decode_pod(to_bytes(p))
    assert meta.mirror_hash == "abc123"
    assert meta.pod_ip == "10.0.0.1" and meta.pod_ips == ("10.0.0.1", "fd00::1")
    assert decode_pod(to_bytes(pod("plain"))).mirror_hash is None


def test_labels_are_interned():
    a = decode_pod(to_bytes(pod("a", labels={"app.kubernetes.io/name": "web-" + "x" * 3})))
    b = decode_pod(to_bytes(pod("b", labels={"app.kubernetes.io/name": "web-" + "x" * 3})))
    (ka, va), (kb, vb) = next(iter(a.labels.items())), next(iter(b.labels.items()))
    assert ka is kb and va is vb
    assert va is sys.intern("web-xxx")
    assert a.namespace is b.namespace


def test_frozen():
    meta = decode_pod(to_bytes(pod("a")))
    with pytest.raises(AttributeError):
        meta.name = "b"  # type: ignore[misc]


def test_null_and_missing_fields_are_tolerated():
    body = b'{"metadata":{"name":"a","uid":"u","labels":null,"annotations":null},"spec":null,"status":null}'
    meta = decode_pod(body)
    assert meta.labels == {} and meta.containers == {} and meta.node_name is None


def test_bookmark_and_initial_events_end():
    ev = decode_watch_event("pods", b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}}')
    assert (ev.type, ev.obj, ev.resource_version, ev.initial_events_end) == ("BOOKMARK", None, "12", False)
    ev = decode_watch_event(
        "pods",
        b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"13",'
        b'"annotations":{"k8s.io/initial-events-end":"true"}}}}',
    )
    assert ev.initial_events_end and ev.resource_version == "13"


def test_error_event():
    ev = decode_watch_event(
        "namespaces",
        b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"too old resource version: 1 (5)","reason":"Expired","code":410}}',
    )
    assert ev.type == "ERROR" and ev.obj is None
    assert ev.error_status is not None and ev.error_status.code == 410
    assert ev.error_status.reason == "Expired"


@pytest.mark.parametrize(
    "line",
    [b"", b"not json", b'{"type":"ADDED","object":{"metadata":{"name":5}}}', b'{"type":"WHAT","object":{}}', b"{}"],
)
def test_bad_watch_lines_raise_decode_error(line):
    with pytest.raises(KubeDecodeError):
        decode_watch_event("pods", line)


def test_bad_inputs_raise_decode_error():
    with pytest.raises(KubeDecodeError, match="pods list page"):
        decode_list("pods", b'{"items":{}}')
    with pytest.raises(KubeDecodeError, match="snapshot"):
        decode_snapshot(b"[1,2")
    with pytest.raises(ValueError, match="unknown kind"):
        decode_list("services", b"{}")  # type: ignore[arg-type]


def test_decode_status():
    assert decode_status(b'{"kind":"Status","code":429,"reason":"TooManyRequests"}').code == 429
    assert decode_status(b"<html>") is None


def test_large_real_world_pod_keeps_only_needed_fields():
    p = pod("a", labels={"a": "1"})
    p["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(p)
    p["spec"]["volumes"] = [{"name": f"v{i}", "emptyDir": {}} for i in range(50)]
    meta = decode_pod(to_bytes(p))
    assert set(msgspec.structs.asdict(meta)) == set(PodMeta.__struct_fields__)
    assert "kubectl.kubernetes.io/last-applied-configuration" in meta.annotations
