"""The live hub against the apiserver emulator (apiserver_emulator)."""

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from logagent.kube.config import KubernetesConfig
from logagent.kube.hub import KubeHub
from apiserver_emulator import make_namespace, make_node, make_pod

NODE = "node-1"
TIMEOUT = 10.0


async def eventually(predicate, timeout=TIMEOUT, what="condition"):
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def kube_config(apiserver, tmp_path, **overrides):
    path = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    settings = dict(
        node_name=NODE,
        kubeconfig=str(path),
        initial_delay_ms=0,
        backoff_initial_ms=20,
        backoff_max_ms=100,
    )
    settings.update(overrides)
    return KubernetesConfig(**settings)


@pytest.fixture
async def hubs():
    started = []

    async def start(cfg, **kwargs):
        hub = KubeHub(cfg, **kwargs)
        started.append(hub)
        await hub.start()
        assert await hub.wait_synced(TIMEOUT)
        return hub

    yield start
    for hub in started:
        await asyncio.wait_for(hub.stop(), TIMEOUT)


def uid_of(obj):
    return obj["metadata"]["uid"]


async def test_one_node_filtered_pod_watch(apiserver, tmp_path, hubs):
    mine = apiserver.create("pods", make_pod("web-1", node=NODE))
    apiserver.create("pods", make_pod("web-2", node="node-2"))
    excluded = apiserver.create("pods", make_pod("noisy-1", node=NODE, labels={"logagent.dev/exclude": "true"}))
    hub = await hubs(kube_config(apiserver, tmp_path))
    assert hub.synced
    assert [p.name for p in hub.pods.values()] == ["web-1"]
    pod = hub.pods.get(uid_of(mine))
    assert pod.node_name == NODE and pod.owner == "ReplicaSet/web" and "app" in pod.containers
    assert hub.pods.get(uid_of(excluded)) is None
    assert apiserver.requests[("watch", "pods")] == 1
    assert apiserver.requests.get(("list", "pods"), 0) == 0
    (watch,) = apiserver.requests_matching("watch", "pods")
    assert watch.query["fieldSelector"] == f"spec.nodeName={NODE}"
    assert watch.query["labelSelector"] == "logagent.dev/exclude!=true"
    assert watch.query["sendInitialEvents"] == "true"
    assert watch.query["allowWatchBookmarks"] == "true"
    assert 240 <= int(watch.query["timeoutSeconds"]) <= 480
    assert hub.namespaces is None and hub.node is None


async def test_namespace_and_node_watches_absent_when_not_needed(apiserver, tmp_path, hubs):
    apiserver.create("namespaces", make_namespace("default"))
    apiserver.create("nodes", make_node(NODE))
    hub = await hubs(kube_config(apiserver, tmp_path))
    created = apiserver.create("pods", make_pod("web-1", node=NODE))
    await eventually(lambda: hub.pods.get(uid_of(created)) is not None)
    for verb in ("list", "watch", "get"):
        assert apiserver.requests.get((verb, "namespaces"), 0) == 0
        assert apiserver.requests.get((verb, "nodes"), 0) == 0


async def test_namespace_and_node_watches_when_needed(apiserver, tmp_path, hubs):
    apiserver.create("namespaces", make_namespace("default", labels={"team": "a"}))
    apiserver.create("namespaces", make_namespace("other"))
    apiserver.create("nodes", make_node(NODE, labels={"pool": "blue"}))
    apiserver.create("nodes", make_node("node-2"))
    hub = await hubs(kube_config(apiserver, tmp_path), needs_namespaces=True, needs_node=True)
    assert hub.namespaces.get("default").labels["team"] == "a"
    assert len(hub.namespaces) == 2
    assert hub.node.name == NODE and hub.node.labels["pool"] == "blue"
    assert apiserver.requests[("watch", "namespaces")] == 1
    assert apiserver.requests[("watch", "nodes")] == 1
    (node_watch,) = apiserver.requests_matching("watch", "nodes")
    assert node_watch.query["fieldSelector"] == f"metadata.name={NODE}"
    apiserver.patch_labels("namespaces", "other", {"team": "b"})
    await eventually(lambda: hub.namespaces.get("other").labels.get("team") == "b")


async def test_dropped_watch_resumes_from_resource_version_without_list(apiserver, tmp_path, hubs):
    apiserver.create("pods", make_pod("web-1", node=NODE))
    hub = await hubs(kube_config(apiserver, tmp_path))
    first = hub.pods.get(uid_of(apiserver.get("pods", "web-1", "default")))
    for abort in (False, True):
        await eventually(lambda: apiserver.open_watches.get("pods", 0) == 1)
        # no await between the drop and the change: the change happens while
        # no watch is open, so only a resume from the last RV can deliver it
        assert apiserver.drop_watches("pods", abort=abort) == 1
        created = apiserver.create("pods", make_pod(f"late-{int(abort)}", node=NODE))
        await eventually(lambda: hub.pods.get(uid_of(created)) is not None)
    watches = apiserver.requests_matching("watch", "pods")
    assert len(watches) == 3
    for resumed in watches[1:]:
        assert "sendInitialEvents" not in resumed.query
        assert int(resumed.query["resourceVersion"]) > 0
    assert apiserver.requests.get(("list", "pods"), 0) == 0
    assert hub.stats["pods"].relists == 0
    assert hub.pods.get(first.uid) is first  # untouched by the resumes


async def test_410_causes_exactly_one_relist_keeping_unchanged_objects(apiserver, tmp_path, hubs):
    apiserver.create("pods", make_pod("web-1", node=NODE))
    apiserver.create("pods", make_pod("web-2", node=NODE))
    hub = await hubs(kube_config(apiserver, tmp_path))
    web1 = hub.pods.get(uid_of(apiserver.get("pods", "web-1", "default")))
    web2 = hub.pods.get(uid_of(apiserver.get("pods", "web-2", "default")))
    await eventually(lambda: apiserver.open_watches.get("pods", 0) == 1)
    apiserver.drop_watches("pods")
    apiserver.patch_labels("pods", "web-2", {"version": "2"}, namespace="default")
    apiserver.create("pods", make_pod("other-1", node="node-2"))
    apiserver.compact()  # our last RV is now too old
    await eventually(lambda: hub.stats["pods"].relists == 1)
    await eventually(lambda: hub.pods.get(web2.uid).labels.get("version") == "2")
    await eventually(lambda: apiserver.open_watches.get("pods", 0) == 1)
    assert hub.pods.get(web1.uid) is web1  # same RV: the relist kept the object
    initial_lists = [w for w in apiserver.requests_matching("watch", "pods") if "sendInitialEvents" in w.query]
    assert len(initial_lists) == 2  # the first sync and the one relist
    assert hub.stats["pods"].relists == 1


async def test_410_relist_with_http_410_and_plain_list(apiserver, tmp_path, hubs):
    apiserver.settings.update({"watch_list": "forbidden", "watch_expired_as_http_410": True})
    apiserver.create("pods", make_pod("web-1", node=NODE))
    hub = await hubs(kube_config(apiserver, tmp_path))
    assert apiserver.requests[("list", "pods")] == 1
    (lst,) = apiserver.requests_matching("list", "pods")
    assert lst.query["resourceVersion"] == "0"
    await eventually(lambda: apiserver.open_watches.get("pods", 0) == 1)
    apiserver.drop_watches("pods")
    apiserver.create("pods", make_pod("other-1", node="node-2"))
    apiserver.compact()
    await eventually(lambda: hub.stats["pods"].relists == 1)
    await eventually(lambda: apiserver.open_watches.get("pods", 0) == 1)
    assert apiserver.requests[("list", "pods")] == 2


async def test_watch_list_ignored_by_old_server_falls_back_to_list(apiserver, tmp_path, hubs):
    apiserver.settings.update({"watch_list": "ignored"})
    created = apiserver.create("pods", make_pod("web-1", node=NODE))
    hub = await hubs(kube_config(apiserver, tmp_path))
    assert hub.pods.get(uid_of(created)) is not None
    assert apiserver.requests[("list", "pods")] == 1


async def test_paged_list_builds_the_store_page_by_page(apiserver, tmp_path, hubs):
    apiserver.settings.update({"rv0_honours_limit": True})
    for i in range(5):
        apiserver.create("pods", make_pod(f"web-{i}", node=NODE))
    hub = await hubs(kube_config(apiserver, tmp_path, use_watch_list=False, list_page_size=2))
    assert len(hub.pods) == 5
    pages = apiserver.requests_matching("list", "pods")
    assert len(pages) == 3
    assert pages[0].query["limit"] == "2" and "continue" not in pages[0].query
    assert all("continue" in p.query for p in pages[1:])


async def test_label_change_is_visible_as_a_new_object(apiserver, tmp_path, hubs):
    created = apiserver.create("pods", make_pod("web-1", node=NODE, labels={"tier": "a"}))
    hub = await hubs(kube_config(apiserver, tmp_path))
    seen = []
    hub.add_pod_listener(lambda p: seen.append(p.labels.get("tier")))
    before = hub.pods.get(uid_of(created))
    apiserver.patch_labels("pods", "web-1", {"tier": "b"}, namespace="default")
    await eventually(lambda: hub.pods.get(before.uid).labels.get("tier") == "b")
    assert before.labels["tier"] == "a"  # the old snapshot is unchanged
    assert seen == ["b"]


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_errors_are_retried_with_backoff(apiserver, tmp_path, hubs, status):
    created = apiserver.create("pods", make_pod("web-1", node=NODE))
    apiserver.inject_fault("watch", "pods", status, count=2, retry_after=0)
    hub = await hubs(kube_config(apiserver, tmp_path))
    assert hub.pods.get(uid_of(created)) is not None
    assert apiserver.requests[("watch", "pods")] == 3
    assert hub.stats["pods"].request_errors == 2
    assert hub.stats["pods"].throttled == (2 if status == 429 else 0)


async def test_retry_after_is_honoured(apiserver, tmp_path):
    from logagent.kube.client import KubeClient
    from logagent.kube.store import PodStore
    from logagent.kube.watcher import Watcher, reflect

    apiserver.inject_fault("watch", "pods", 429, count=1, retry_after=7)
    cfg = kube_config(apiserver, tmp_path)
    client = await KubeClient.from_config(cfg)
    slept = []

    async def fake_sleep(seconds):
        slept.append(seconds)

    watcher = Watcher(client, "pods", cfg, field_selector=f"spec.nodeName={NODE}", sleep=fake_sleep)
    store = PodStore()
    task = asyncio.create_task(reflect(watcher.events(), store))
    try:
        await asyncio.wait_for(store.wait_synced(), TIMEOUT)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await client.close()
    assert slept and slept[0] >= 7


async def test_deleted_pod_is_retained_for_delay_deletion(apiserver, tmp_path, hubs):
    created = apiserver.create("pods", make_pod("web-1", node=NODE))
    hub = await hubs(kube_config(apiserver, tmp_path, delay_deletion_ms=300))
    apiserver.delete("pods", "web-1", "default")
    await eventually(lambda: hub.pods.get(uid_of(created)).deleted_at is not None)
    assert hub.pods.get(uid_of(created)).name == "web-1"
    await eventually(lambda: hub.pods.get(uid_of(created)) is None)


async def test_bad_kubeconfig_is_a_clear_error(tmp_path):
    from logagent.kube.client import KubeConfigError

    hub = KubeHub(KubernetesConfig(node_name=NODE, kubeconfig=str(tmp_path / "missing")))
    with pytest.raises(KubeConfigError, match="missing"):
        await hub.start()
    (tmp_path / "broken").write_text("clusters: [")
    hub = KubeHub(KubernetesConfig(node_name=NODE, kubeconfig=str(tmp_path / "broken")))
    with pytest.raises(KubeConfigError, match="broken"):
        await hub.start()


_LIGHT_IMPORT_SCRIPT = textwrap.dedent(
    """
    import asyncio, resource, sys
    from logagent.kube.config import KubernetesConfig
    from logagent.kube.hub import KubeHub

    async def main():
        hub = KubeHub(KubernetesConfig(node_name="node-1", kubeconfig=sys.argv[1], initial_delay_ms=0))
        await hub.start()
        assert await hub.wait_synced(10)
        print("pods", len(hub.pods))
        await hub.stop()

    asyncio.run(main())
    heavy = [m for m in sys.modules if m.startswith(("kubernetes_asyncio.client.models.",
                                                     "kubernetes_asyncio.client.api."))]
    print("heavy", len(heavy))
    print("rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
    """
)


async def test_heavy_kubernetes_modules_are_never_imported(apiserver, tmp_path):
    apiserver.create("pods", make_pod("web-1", node=NODE))
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _LIGHT_IMPORT_SCRIPT, str(kubeconfig),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    lines = dict(line.split() for line in out.decode().splitlines())
    assert lines["pods"] == "1"
    assert lines["heavy"] == "0"
