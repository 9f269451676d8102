"""The apiserver emulator, driven by real clients: kubernetes-asyncio over HTTP and kubectl over TLS."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from apiserver_emulator import ApiServerEmulator, make_namespace, make_node, make_pod
from apiserver_emulator.selectors import SelectorError, make_predicate, parse_field_selector, parse_label_selector
from apiserver_emulator.store import POD_FIELDS

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kubernetes-api"
KUBECTL = "/usr/bin/kubectl"
REPO = Path(__file__).resolve().parents[1]
T = 10  # seconds: bound on every async step


@pytest.fixture
async def core(apiserver: ApiServerEmulator):
    async with client.ApiClient(apiserver.kube_configuration()) as api_client:
        yield client.CoreV1Api(api_client)


async def body(response: Any) -> dict[str, Any]:
    data = await response.read()
    response.release()
    return json.loads(data)


async def collect(stream: Any, count: int) -> list[dict[str, Any]]:
    """The next `count` events of a kubernetes-asyncio watch stream."""
    events = []
    async with asyncio.timeout(T):
        async for event in stream:
            events.append(event)
            if len(events) == count:
                break
    return events


async def raw_watch(emu: ApiServerEmulator, path: str, params: dict[str, str], count: int | None = None,
                    token: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(HTTP status, events) of a watch read with plain aiohttp; stops after `count` events or stream end."""
    headers = {"Authorization": f"Bearer {token or emu.token}"}
    events: list[dict[str, Any]] = []
    async with asyncio.timeout(T), aiohttp.ClientSession(headers=headers) as session:
        async with session.get(emu.url + path, params={"watch": "true", **params}) as resp:
            if resp.status != 200:
                return resp.status, [await resp.json()]
            async for line in resp.content:
                events.append(json.loads(line))
                if count is not None and len(events) == count:
                    break
            return resp.status, events


def seed_pods(emu: ApiServerEmulator) -> None:
    emu.create("namespaces", make_namespace("shop", {"team": "a"}))
    emu.create("nodes", make_node("n1"))
    emu.create("pods", make_pod("web-1", "shop", "n1", labels={"app": "web"}))
    emu.create("pods", make_pod("web-2", "shop", "n2", labels={"app": "web"}))
    emu.create("pods", make_pod("db-1", "shop", "n1", labels={"app": "db", "tier": "data"}))
    emu.create("pods", make_pod("api-1", "other", "n1", labels={"app": "api"}))


# -- builders ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,obj", [
    ("Pod", make_pod("web-1", "shop", "n1", containers=[("app", "nginx:1.27"), ("sidecar", "envoy:1.30")],
                     init_containers=[("init", "busybox:1.36")])),
    ("Namespace", make_namespace("shop", {"team": "a"}, last_applied=True)),
    ("Node", make_node("n1")),
])
def test_builders_use_only_real_field_names(kind: str, obj: dict[str, Any]) -> None:
    fixture = json.loads((FIXTURES / f"core.v1.{kind}.json").read_text())

    def unknown(ours: Any, real: Any, path: str) -> list[str]:
        if isinstance(ours, dict) and isinstance(real, dict):
            out = []
            for key, value in ours.items():
                if key not in real:
                    out.append(f"{path}.{key}")
                elif not (isinstance(real[key], dict) and real[key] and all(k.endswith("Key") for k in real[key])):
                    out += unknown(value, real[key], f"{path}.{key}")
            return out
        if isinstance(ours, list) and isinstance(real, list) and ours and real:
            return [u for item in ours for u in unknown(item, real[0], path + "[]")]
        return []

    ours = {k: v for k, v in obj.items() if k != "metadata"}
    assert unknown(ours, fixture, kind) == []
    assert unknown({k: v for k, v in obj["metadata"].items() if k != "managedFields"}, fixture["metadata"],
                   "metadata") == []


def test_pod_builder_reports_running_containers_like_a_kubelet() -> None:
    pod = make_pod("web-7d4f-abcde", "shop", "n1", containers=[("app", "nginx:1.27")])
    status = pod["status"]["containerStatuses"][0]
    assert status["containerID"].startswith("containerd://") and len(status["containerID"]) == 13 + 64
    assert status["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    assert pod["status"]["podIPs"] == [{"ip": pod["status"]["podIP"]}]
    assert pod == make_pod("web-7d4f-abcde", "shop", "n1", containers=[("app", "nginx:1.27")])


# -- selectors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("selector,labels,expected", [
    ("app=web", {"app": "web"}, True),
    ("app==web", {"app": "db"}, False),
    ("app!=web", {}, True),
    ("app!=web", {"app": "web"}, False),
    ("app in (web, db)", {"app": "db"}, True),
    ("app in (web,db)", {}, False),
    ("app notin (web,db)", {}, True),
    ("app notin (web,db)", {"app": "web"}, False),
    ("tier", {"tier": ""}, True),
    ("!tier", {"tier": "x"}, False),
    ("app=web,tier in (a,b),!canary", {"app": "web", "tier": "b"}, True),
    ("app=web,tier in (a,b),!canary", {"app": "web", "tier": "b", "canary": "1"}, False),
    ("example.com/team=a", {"example.com/team": "a"}, True),
])
def test_label_selector_semantics(selector: str, labels: dict[str, str], expected: bool) -> None:
    predicate = make_predicate(parse_label_selector(selector), ())
    assert predicate is not None and predicate(labels, {}) is expected


@pytest.mark.parametrize("selector", ["app=", "app in ()", "a b", "app=>x", "=web"])
def test_label_selector_rejects_garbage_or_accepts_empty_value(selector: str) -> None:
    if selector == "app=":  # an empty value is legal and matches the empty string
        assert parse_label_selector(selector)[0].matches({"app": ""})
        return
    with pytest.raises(SelectorError):
        parse_label_selector(selector)


def test_field_selector_matches_missing_fields_as_empty() -> None:
    reqs = parse_field_selector("spec.nodeName=,status.phase!=Failed", POD_FIELDS)
    predicate = make_predicate((), reqs)
    assert predicate({}, {"status.phase": "Pending"})
    assert not predicate({}, {"spec.nodeName": "n1", "status.phase": "Pending"})
    with pytest.raises(SelectorError, match="field label not supported: spec.bogus"):
        parse_field_selector("spec.bogus=1", POD_FIELDS)


# -- LIST ---------------------------------------------------------------------------------------


async def test_list_paginates_in_key_order(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    apiserver.seed_namespaces(25, name_format="team-{i:03d}")
    pages, token = [], None
    while True:
        kwargs = {"_continue": token} if token else {}
        page = await body(await core.list_namespace(limit=10, _preload_content=False, **kwargs))
        pages.append(page)
        token = page["metadata"].get("continue")
        if not token:
            break
    names = [item["metadata"]["name"] for page in pages for item in page["items"]]
    assert names == [f"team-{i:03d}" for i in range(25)]
    assert [p["metadata"].get("remainingItemCount") for p in pages] == [15, 5, None]
    assert {p["metadata"]["resourceVersion"] for p in pages} == {str(apiserver.resource_version)}
    assert pages[0]["kind"] == "NamespaceList"
    assert all("kind" not in item and "apiVersion" not in item for page in pages for item in page["items"])
    # The typed client can decode what the emulator sends.
    typed = await core.list_namespace(limit=3)
    assert [ns.metadata.name for ns in typed.items] == ["team-000", "team-001", "team-002"]
    assert typed.items[0].metadata.labels["kubernetes.io/metadata.name"] == "team-000"


async def test_continue_reads_the_snapshot_of_the_first_page(apiserver: ApiServerEmulator,
                                                           core: client.CoreV1Api) -> None:
    apiserver.seed_namespaces(6)
    first = await body(await core.list_namespace(limit=3, _preload_content=False))
    apiserver.delete("namespaces", "ns-000004")
    apiserver.create("namespaces", make_namespace("ns-000003a"))
    apiserver.patch_labels("namespaces", "ns-000005", {"team": "changed"})
    rest = await body(await core.list_namespace(limit=10, _continue=first["metadata"]["continue"],
                                                _preload_content=False))
    assert [i["metadata"]["name"] for i in rest["items"]] == ["ns-000003", "ns-000004", "ns-000005"]
    assert rest["items"][2]["metadata"]["labels"]["team"] == "payments"
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    fresh = await body(await core.list_namespace(_preload_content=False))
    assert [i["metadata"]["name"] for i in fresh["items"]][3:] == ["ns-000003", "ns-000003a", "ns-000005"]


async def test_expired_continue_is_410(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    apiserver.seed_namespaces(4)
    first = await body(await core.list_namespace(limit=2, _preload_content=False))
    apiserver.create("namespaces", make_namespace("late"))
    apiserver.compact()
    with pytest.raises(ApiException) as err:
        await core.list_namespace(limit=2, _continue=first["metadata"]["continue"])
    assert err.value.status == 410
    assert json.loads(err.value.body)["reason"] == "Expired"
    assert apiserver.statuses[("list", "namespaces", 410)] == 1


async def test_rv0_list_comes_whole_from_the_cache(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    apiserver.seed_namespaces(5)
    page = await body(await core.list_namespace(limit=2, resource_version="0", _preload_content=False))
    assert len(page["items"]) == 5 and "continue" not in page["metadata"]
    apiserver.settings.rv0_honours_limit = True
    page = await body(await core.list_namespace(limit=2, resource_version="0", _preload_content=False))
    assert len(page["items"]) == 2 and page["metadata"]["continue"]


async def test_exact_list_reads_an_older_state(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    before = str(apiserver.resource_version)
    apiserver.patch_labels("pods", "web-1", {"app": "web-v2"}, namespace="shop")
    old = await body(await core.list_namespaced_pod("shop", resource_version=before,
                                                    resource_version_match="Exact", _preload_content=False))
    assert old["metadata"]["resourceVersion"] == before
    assert {i["metadata"]["name"]: i["metadata"]["labels"]["app"] for i in old["items"]}["web-1"] == "web"
    now = await body(await core.list_namespaced_pod("shop", resource_version=before,
                                                    resource_version_match="NotOlderThan", _preload_content=False))
    assert {i["metadata"]["name"]: i["metadata"]["labels"]["app"] for i in now["items"]}["web-1"] == "web-v2"
    with pytest.raises(ApiException) as err:
        await core.list_namespaced_pod("shop", resource_version="999999", resource_version_match="NotOlderThan")
    assert err.value.status == 504


async def test_list_with_selectors(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    on_n1 = await body(await core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n1",
                                                              _preload_content=False))
    assert sorted(i["metadata"]["name"] for i in on_n1["items"]) == ["api-1", "db-1", "web-1"]
    mixed = await body(await core.list_namespaced_pod("shop", label_selector="app in (web,db),!tier",
                                                      field_selector="metadata.namespace==shop",
                                                      _preload_content=False))
    assert sorted(i["metadata"]["name"] for i in mixed["items"]) == ["web-1", "web-2"]
    paged = await body(await core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n1", limit=2,
                                                              _preload_content=False))
    assert len(paged["items"]) == 2 and "remainingItemCount" not in paged["metadata"]
    with pytest.raises(ApiException) as err:
        await core.list_pod_for_all_namespaces(field_selector="spec.bogus=1")
    assert err.value.status == 400 and "field label not supported" in json.loads(err.value.body)["message"]
    with pytest.raises(ApiException) as err:
        await core.list_pod_for_all_namespaces(label_selector="app in web")
    assert err.value.status == 400


async def test_get_single_objects(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    pod = await core.read_namespaced_pod("web-1", "shop")
    assert pod.kind == "Pod" and pod.spec.node_name == "n1"
    assert pod.status.container_statuses[0].container_id.startswith("containerd://")
    assert (await core.read_namespace("shop")).metadata.labels["team"] == "a"
    assert (await core.read_node("n1")).status.node_info.kubelet_version == "v1.31.0"
    with pytest.raises(ApiException) as err:
        await core.read_namespaced_pod("web-1", "other")
    status = json.loads(err.value.body)
    assert (err.value.status, status["kind"], status["reason"]) == (404, "Status", "NotFound")
    assert apiserver.requests[("get", "pods")] == 2


async def test_discovery_and_unknown_paths(apiserver: ApiServerEmulator) -> None:
    headers = {"Authorization": f"Bearer {apiserver.token}"}
    async with asyncio.timeout(T), aiohttp.ClientSession(headers=headers) as session:
        async with session.get(apiserver.url + "/api/v1") as resp:
            names = {r["name"] for r in (await resp.json())["resources"]}
        async with session.get(apiserver.url + "/api/v1/configmaps") as missing:
            assert missing.status == 404 and (await missing.json())["reason"] == "NotFound"
        async with session.get(apiserver.url + "/version") as version:
            assert (await version.json())["major"] == "1"
    assert names == {"pods", "namespaces", "nodes"}


async def test_auth_is_required(apiserver: ApiServerEmulator) -> None:
    config = apiserver.kube_configuration()
    config.api_key = {"BearerToken": "wrong"}
    async with client.ApiClient(config) as api_client:
        with pytest.raises(ApiException) as err:
            await client.CoreV1Api(api_client).list_namespace()
    assert err.value.status == 401 and json.loads(err.value.body)["reason"] == "Unauthorized"
    async with asyncio.timeout(T), aiohttp.ClientSession() as session:
        async with session.get(apiserver.url + "/api/v1/pods") as resp:
            assert resp.status == 401
    assert apiserver.requests[("list", "namespaces")] == 0


# -- WATCH --------------------------------------------------------------------------------------


async def test_watch_replays_history_after_a_resource_version(apiserver: ApiServerEmulator,
                                                              core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    listed = await body(await core.list_namespaced_pod("shop", _preload_content=False))
    apiserver.create("pods", make_pod("web-3", "shop", "n1"))
    apiserver.patch_labels("pods", "web-1", {"release": "blue"}, namespace="shop")
    apiserver.delete("pods", "db-1", namespace="shop")
    apiserver.create("pods", make_pod("elsewhere-1", "other", "n1"))  # another namespace: not seen
    w = watch.Watch()
    events = await collect(w.stream(core.list_namespaced_pod, "shop",
                                    resource_version=listed["metadata"]["resourceVersion"], timeout_seconds=5), 3)
    await w.close()
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "web-3"), ("MODIFIED", "web-1"), ("DELETED", "db-1")]
    rvs = [int(e["raw_object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[-1] == apiserver.resource_version - 1
    assert events[0]["raw_object"]["kind"] == "Pod" and events[0]["raw_object"]["apiVersion"] == "v1"


async def test_watch_from_a_compacted_rv_gets_an_expired_error_event(apiserver: ApiServerEmulator,
                                                                      core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    old = str(apiserver.resource_version - 2)
    apiserver.compact()
    status, events = await raw_watch(apiserver, "/api/v1/pods", {"resourceVersion": old})
    assert status == 200 and len(events) == 1
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410 and events[0]["object"]["reason"] == "Expired"
    # kubernetes-asyncio turns it into an ApiException (no automatic retry when timeout_seconds is set).
    with pytest.raises(ApiException) as err:
        await collect(watch.Watch().stream(core.list_pod_for_all_namespaces, resource_version=old,
                                           timeout_seconds=5), 1)
    assert err.value.status == 410
    apiserver.settings.watch_expired_as_http_410 = True
    status, events = await raw_watch(apiserver, "/api/v1/pods", {"resourceVersion": old})
    assert status == 410 and events[0]["reason"] == "Expired"


async def test_history_is_bounded(apiserver: ApiServerEmulator) -> None:
    emu = ApiServerEmulator(history_size=5)
    start = emu.resource_version
    emu.seed_namespaces(10)
    async with emu:
        status, events = await raw_watch(emu, "/api/v1/namespaces", {"resourceVersion": str(start)})
        assert events[0]["type"] == "ERROR"
        status, events = await raw_watch(emu, "/api/v1/namespaces",
                                         {"resourceVersion": str(start + 5), "timeoutSeconds": "1"})
        assert [e["object"]["metadata"]["name"] for e in events] == [f"ns-00000{i}" for i in range(5, 10)]


async def test_bookmarks_carry_the_current_resource_version(apiserver: ApiServerEmulator) -> None:
    seed_pods(apiserver)
    status, events = await raw_watch(apiserver, "/api/v1/pods",
                                     {"resourceVersion": str(apiserver.resource_version),
                                      "allowWatchBookmarks": "true"}, count=1)
    assert status == 200 and events[0]["type"] == "BOOKMARK"
    obj = events[0]["object"]
    assert obj["kind"] == "Pod" and obj["metadata"]["resourceVersion"] == str(apiserver.resource_version)
    assert "name" not in obj["metadata"]


async def test_timeout_seconds_ends_the_watch_cleanly(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    w = watch.Watch()
    events = []
    async with asyncio.timeout(T):
        async for event in w.stream(core.list_node, resource_version=str(apiserver.resource_version),
                                    timeout_seconds=1):
            events.append(event)
    await w.close()
    assert events == []
    assert apiserver.requests[("watch", "nodes")] == 1
    async with asyncio.timeout(T):
        while apiserver.open_watches["nodes"]:
            await asyncio.sleep(0.01)


async def test_watch_selector_turns_leaving_into_deleted_and_entering_into_added(
        apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    w = watch.Watch()
    stream = w.stream(core.list_pod_for_all_namespaces, label_selector="app=web",
                      field_selector="spec.nodeName=n1", resource_version=str(apiserver.resource_version),
                      timeout_seconds=5)
    first = asyncio.ensure_future(collect(stream, 3))
    async with asyncio.timeout(T):
        while not apiserver.open_watches["pods"]:
            await asyncio.sleep(0.01)
    apiserver.patch_labels("pods", "web-2", {"app": "other"}, namespace="shop")  # was never visible (n2)
    apiserver.patch_labels("pods", "web-1", {"app": "canary"}, namespace="shop")
    left_rv = apiserver.resource_version
    apiserver.patch_labels("pods", "web-1", {"app": "web"}, namespace="shop")
    apiserver.patch_labels("pods", "web-1", {"release": "2"}, namespace="shop")
    events = await first
    await w.close()
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("DELETED", "web-1"), ("ADDED", "web-1"), ("MODIFIED", "web-1")]
    leaving = events[0]["raw_object"]["metadata"]
    assert leaving["labels"]["app"] == "web" and leaving["resourceVersion"] == str(left_rv)


async def test_watch_without_rv_starts_with_synthetic_added_events(apiserver: ApiServerEmulator) -> None:
    seed_pods(apiserver)
    status, events = await raw_watch(apiserver, "/api/v1/namespaces/shop/pods", {"resourceVersion": "0"}, count=3)
    assert {(e["type"], e["object"]["metadata"]["name"]) for e in events} == {
        ("ADDED", "web-1"), ("ADDED", "web-2"), ("ADDED", "db-1")}


async def test_streaming_watch_list(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    rv_at_start = apiserver.resource_version
    w = watch.Watch()
    stream = w.stream(core.list_pod_for_all_namespaces, field_selector="spec.nodeName=n1",
                      send_initial_events=True, resource_version_match="NotOlderThan",
                      allow_watch_bookmarks=True, timeout_seconds=5)
    initial = await collect(stream, 4)
    apiserver.patch_labels("pods", "db-1", {"x": "1"}, namespace="shop")
    live = await collect(stream, 1)
    await w.close()
    assert sorted(e["object"].metadata.name for e in initial[:3]) == ["api-1", "db-1", "web-1"]
    assert all(e["type"] == "ADDED" for e in initial[:3])
    end = initial[3]
    assert end["type"] == "BOOKMARK"
    assert end["raw_object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert end["raw_object"]["metadata"]["resourceVersion"] == str(rv_at_start)
    assert (live[0]["type"], live[0]["object"].metadata.name) == ("MODIFIED", "db-1")
    query = apiserver.requests_matching("watch", "pods")[-1].query
    assert query["sendInitialEvents"].lower() == "true" and query["resourceVersionMatch"] == "NotOlderThan"


async def test_old_servers_reject_or_ignore_send_initial_events(apiserver: ApiServerEmulator) -> None:
    seed_pods(apiserver)
    params = {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "allowWatchBookmarks": "true",
              "timeoutSeconds": "1"}
    apiserver.settings.watch_list = "forbidden"
    status, events = await raw_watch(apiserver, "/api/v1/pods", params)
    assert status == 422 and events[0]["reason"] == "Invalid"
    assert "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled" in \
        events[0]["message"]
    assert events[0]["details"]["causes"][0]["field"] == "sendInitialEvents"
    apiserver.settings.watch_list = "ignored"
    status, events = await raw_watch(apiserver, "/api/v1/pods", params)
    assert status == 200 and [e["type"] for e in events][:4] == ["ADDED"] * 4
    assert {e["type"] for e in events[4:]} <= {"BOOKMARK"}  # periodic ones only, no initial-events-end
    assert not any(e["object"]["metadata"].get("annotations") for e in events[4:])
    apiserver.settings.watch_list = "enabled"
    status, events = await raw_watch(apiserver, "/api/v1/pods", {**params, "resourceVersionMatch": "Exact"})
    assert status == 422


async def test_dropping_watches_and_closing_after_k_events(apiserver: ApiServerEmulator,
                                                          core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    watching = asyncio.ensure_future(raw_watch(apiserver, "/api/v1/nodes",
                                               {"resourceVersion": str(apiserver.resource_version)}))
    async with asyncio.timeout(T):
        while not apiserver.open_watches["nodes"]:
            await asyncio.sleep(0.01)
    assert apiserver.drop_watches("nodes") == 1
    status, events = await watching
    assert status == 200 and events == []
    apiserver.close_watches_after("pods", 2)
    status, events = await raw_watch(apiserver, "/api/v1/pods", {"resourceVersion": "0"})
    assert len(events) == 2
    assert apiserver.open_watches["nodes"] == 0


async def test_aborted_watch_breaks_the_connection(apiserver: ApiServerEmulator) -> None:
    watching = asyncio.ensure_future(raw_watch(apiserver, "/api/v1/nodes", {"resourceVersion": "1"}))
    async with asyncio.timeout(T):
        while not apiserver.open_watches["nodes"]:
            await asyncio.sleep(0.01)
    apiserver.drop_watches(abort=True)
    with pytest.raises(aiohttp.ClientPayloadError):
        await watching


# -- faults and counters ------------------------------------------------------------------------


async def test_injected_429_and_500(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    seed_pods(apiserver)
    apiserver.inject_fault("list", "pods", 429, count=2, retry_after=3)
    apiserver.inject_fault("watch", "*", 500)
    for _ in range(2):
        with pytest.raises(ApiException) as err:
            await core.list_pod_for_all_namespaces()
        assert err.value.status == 429 and err.value.headers["Retry-After"] == "3"
    assert len((await core.list_pod_for_all_namespaces()).items) == 4
    status, events = await raw_watch(apiserver, "/api/v1/namespaces", {})
    assert status == 500 and events[0]["reason"] == "InternalError"
    assert apiserver.statuses[("list", "pods", 429)] == 2
    assert apiserver.statuses[("list", "pods", 200)] == 1
    assert apiserver.statuses[("watch", "namespaces", 500)] == 1
    assert apiserver.requests[("list", "pods")] == 3


async def test_control_api_drives_a_server_over_http(apiserver: ApiServerEmulator) -> None:
    base = apiserver.url + "/_emulator"
    async with asyncio.timeout(T), aiohttp.ClientSession() as session:
        async with session.post(base + "/seed", json={"namespaces": 3, "nodes": ["n1"], "pods": 4,
                                                       "node": "n1", "namespace_count": 2}) as resp:
            assert (await resp.json())["created"] == {"namespaces": 3, "nodes": 1, "pods": 4}
        async with session.patch(base + "/objects/namespaces/ns-000001", json={"metadata": {"labels": {
                "team": None, "new": "x"}}}) as resp:
            labels = (await resp.json())["metadata"]["labels"]
            assert "team" not in labels and labels["new"] == "x"
        async with session.post(base + "/objects/pods", json=make_pod("x-1", "ns-000000", "n1")) as resp:
            assert resp.status == 200
        async with session.delete(base + "/objects/pods/x-1", params={"namespace": "ns-000000"}) as resp:
            assert resp.status == 200
        async with session.delete(base + "/objects/pods/x-1", params={"namespace": "ns-000000"}) as resp:
            assert resp.status == 404
        async with session.post(base + "/faults", json={"verb": "get", "resource": "nodes", "status": 429}):
            pass
        async with session.get(apiserver.url + "/api/v1/nodes/n1",
                               headers={"Authorization": f"Bearer {apiserver.token}"}) as resp:
            assert resp.status == 429
        async with session.post(base + "/settings", json={"bogus": 1}) as resp:
            assert resp.status == 400
        async with session.get(base + "/stats") as resp:
            stats = await resp.json()
    assert stats["objects"] == {"pods": 4, "namespaces": 3, "nodes": 1}
    assert stats["requests"] == {"get/nodes": 1} and stats["statuses"] == {"get/nodes/429": 1}
    assert stats["resourceVersion"] == apiserver.resource_version


def test_seeded_namespaces_are_realistic_and_distinct() -> None:
    emu = ApiServerEmulator()
    assert emu.seed_namespaces(2, name_format="big-{i}") == 2
    assert all(1800 < len(o.body) < 4000 for o in emu.cluster.store("namespaces").objects.values())
    assert emu.seed_namespaces(3, labels={"team": "a"}) == 3
    assert emu.seed_namespaces(3, labels={"team": "a"}) == 0  # existing names are skipped
    ns = emu.get("namespaces", "ns-000002")
    meta = ns["metadata"]
    assert meta["labels"] == {"kubernetes.io/metadata.name": "ns-000002", "team": "a"}
    applied = json.loads(meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"])
    assert applied["metadata"]["name"] == "ns-000002"
    assert meta["managedFields"][0]["manager"] == "kubectl-client-side-apply"
    assert meta["resourceVersion"] == str(emu.resource_version)
    assert len({emu.get("namespaces", f"ns-00000{i}")["metadata"]["uid"] for i in range(3)}) == 3


async def test_standalone_module_prints_its_url(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "apiserver_emulator", "--port", "0", "--token", "sub-token",
        "--seed-namespaces", "3", "--kubeconfig", str(kubeconfig), cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(T):
            url = (await proc.stdout.readline()).decode().strip()
            async with aiohttp.ClientSession(headers={"Authorization": "Bearer sub-token"}) as session:
                async with session.get(url + "/api/v1/namespaces") as resp:
                    assert len((await resp.json())["items"]) == 3
        assert f"server: {url}" in kubeconfig.read_text()
    finally:
        proc.terminate()
        async with asyncio.timeout(T):
            await proc.wait()


# -- a real client: kubectl over TLS ------------------------------------------------------------

needs_kubectl = pytest.mark.skipif(not shutil.which(KUBECTL), reason="kubectl is not installed")


async def kubectl(kubeconfig: Path, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        KUBECTL, "--kubeconfig", str(kubeconfig), *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    async with asyncio.timeout(30):
        out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


@needs_kubectl
async def test_kubectl_lists_and_selects_over_tls(apiserver_tls: ApiServerEmulator, tmp_path: Path) -> None:
    seed_pods(apiserver_tls)
    kubeconfig = apiserver_tls.write_kubeconfig(tmp_path / "kubeconfig")
    assert "certificate-authority-data" in kubeconfig.read_text()
    listed = json.loads(await kubectl(kubeconfig, "get", "pods", "-A", "-o", "json"))
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["api-1", "db-1", "web-1", "web-2"]
    on_n1 = await kubectl(kubeconfig, "get", "pods", "-A", "--field-selector", "spec.nodeName=n1",
                          "-o", "name")
    assert sorted(on_n1.split()) == ["pod/api-1", "pod/db-1", "pod/web-1"]
    table = await kubectl(kubeconfig, "get", "pods", "-n", "shop", "-l", "app=web")
    assert "web-1" in table and "web-2" in table and "db-1" not in table
    node = json.loads(await kubectl(kubeconfig, "get", "node", "n1", "-o", "json"))
    assert node["kind"] == "Node" and node["metadata"]["name"] == "n1"
    assert any(r.query.get("limit") == "500" for r in apiserver_tls.requests_matching("list", "pods"))


@needs_kubectl
async def test_kubectl_watches_namespaces(apiserver_tls: ApiServerEmulator, tmp_path: Path) -> None:
    apiserver_tls.create("namespaces", make_namespace("first"))
    kubeconfig = apiserver_tls.write_kubeconfig(tmp_path / "kubeconfig")
    proc = await asyncio.create_subprocess_exec(
        KUBECTL, "--kubeconfig", str(kubeconfig), "get", "ns", "--watch", "-o", "name",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with asyncio.timeout(30):
            assert (await proc.stdout.readline()).decode().strip() == "namespace/first"
            while not apiserver_tls.open_watches["namespaces"]:
                await asyncio.sleep(0.05)
            apiserver_tls.create("namespaces", make_namespace("second"))
            assert (await proc.stdout.readline()).decode().strip() == "namespace/second"
    finally:
        proc.terminate()
        async with asyncio.timeout(T):
            await proc.wait()


async def test_a_client_hanging_up_closes_its_watch(apiserver: ApiServerEmulator) -> None:
    watching = asyncio.ensure_future(raw_watch(apiserver, "/api/v1/pods", {"resourceVersion": "1"}))
    async with asyncio.timeout(T):
        while not apiserver.open_watches["pods"]:
            await asyncio.sleep(0.01)
    watching.cancel()
    async with asyncio.timeout(T):
        while apiserver.open_watches["pods"]:
            await asyncio.sleep(0.01)
    assert not apiserver.api.open_watchers and not apiserver.cluster.watchers["pods"]


async def test_delayed_responses_are_held_back(apiserver: ApiServerEmulator, core: client.CoreV1Api) -> None:
    apiserver.set_delay("list", "pods", 60)
    pending = asyncio.ensure_future(core.list_pod_for_all_namespaces())
    async with asyncio.timeout(T):
        while not apiserver.requests[("list", "pods")]:
            await asyncio.sleep(0.01)
    assert not pending.done()
    pending.cancel()
    apiserver.set_delay("list", "pods", 0)
    async with asyncio.timeout(T):
        assert (await core.list_pod_for_all_namespaces()).items == []
