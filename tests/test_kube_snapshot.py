import asyncio

import pytest

from logagent.kube.snapshot import SnapshotError, SnapshotHub
from tests.test_kube_support import fixture, pod, to_bytes


def write_snapshot(path, items):
    path.write_bytes(to_bytes({"kind": "List", "apiVersion": "v1", "metadata": {}, "items": items}))


NS = {"kind": "Namespace", "metadata": {"name": "default", "resourceVersion": "3", "labels": {"env": "prod"}}}
NODES = [
    {"kind": "Node", "metadata": {"name": "node-a", "resourceVersion": "4", "labels": {"zone": "z1"}}},
    {"kind": "Node", "metadata": {"name": "node-b", "resourceVersion": "5", "labels": {"zone": "z2"}}},
]


async def test_snapshot_hub_filters_pods_by_node(tmp_path):
    path = tmp_path / "snap.json"
    write_snapshot(path, [pod("a", node="node-a"), pod("b", node="node-b"), NS, *NODES])
    hub = SnapshotHub(path, node_name="node-a", needs_namespaces=True, needs_node=True)
    seen = []
    hub.add_pod_listener(lambda p: seen.append(p.name))
    assert not hub.synced
    await hub.start()
    assert await hub.wait_synced(timeout=5)
    assert hub.synced
    assert hub.pods.get("uid-a").name == "a"
    assert hub.pods.get("uid-b") is None
    assert hub.namespaces.get("default").labels == {"env": "prod"}
    assert hub.node.labels == {"zone": "z1"}
    assert seen == ["a"]
    await hub.stop()


async def test_snapshot_hub_without_namespaces_or_node(tmp_path):
    path = tmp_path / "snap.json"
    write_snapshot(path, [pod("a", node="node-a"), pod("b", node="node-b"), NS, *NODES])
    hub = SnapshotHub(path)
    await hub.start()
    assert hub.namespaces is None and hub.node is None
    assert len(hub.pods) == 2


async def test_snapshot_hub_accepts_fixtures(tmp_path):
    path = tmp_path / "snap.json"
    path.write_bytes(
        b'{"kind":"List","apiVersion":"v1","items":[%s,%s,%s]}'
        % (fixture("Pod"), fixture("Namespace"), fixture("Node"))
    )
    hub = SnapshotHub(path, node_name="nodeNameValue", needs_namespaces=True, needs_node=False)
    await hub.start()
    assert hub.pods.get("uidValue").node_name == "nodeNameValue"
    assert hub.namespaces.get("nameValue") is not None


async def test_wait_synced_times_out_before_start(tmp_path):
    hub = SnapshotHub(tmp_path / "x.json")
    assert await hub.wait_synced(timeout=0.01) is False


@pytest.mark.parametrize("content", [None, b"{not json", b'{"items":[{"kind":"Pod","metadata":{"uid":7}}]}'])
async def test_bad_snapshot_is_a_clear_error(tmp_path, content):
    path = tmp_path / "snap.json"
    if content is not None:
        path.write_bytes(content)
    hub = SnapshotHub(path)
    with pytest.raises(SnapshotError, match="snap.json"):
        await asyncio.wait_for(hub.start(), 5)
