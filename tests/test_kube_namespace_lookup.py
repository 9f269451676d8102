"""kubernetes.namespace_metadata against the apiserver emulator: lookup, auto, and their failure modes."""

from __future__ import annotations

import asyncio
import logging

import pytest

from apiserver_emulator import make_namespace, make_pod
from logagent.kube.lookup import NamespaceLookup
from logagent.kube.store import Store
from tests.test_kube_watch import NODE, TIMEOUT, eventually, hubs, kube_config  # noqa: F401  (fixture)


def namespace_requests(apiserver) -> dict[str, int]:
    return {verb: n for (verb, resource), n in apiserver.requests.items() if resource == "namespaces"}


def seed(apiserver, namespaces: int = 20) -> None:
    for i in range(namespaces):
        apiserver.create("namespaces", make_namespace(f"ns-{i}", labels={"team": f"t{i}", "tier": "gold"}))


def lookup_config(apiserver, tmp_path, **overrides):
    settings = dict(namespace_metadata="lookup", namespace_lookup_ttl_secs=300.0)
    settings.update(overrides)
    return kube_config(apiserver, tmp_path, **settings)


async def test_lookup_fetches_only_the_namespaces_of_this_nodes_pods(apiserver, tmp_path, hubs) -> None:
    seed(apiserver)
    for i, ns in enumerate(["ns-1", "ns-1", "ns-2", "ns-3"]):
        apiserver.create("pods", make_pod(f"p{i}", ns, node=NODE))
    apiserver.create("pods", make_pod("elsewhere", "ns-9", node="node-2"))
    hub = await hubs(lookup_config(apiserver, tmp_path), needs_namespaces=True)
    # synced means the namespaces of the pods present at start have their labels
    assert isinstance(hub.namespaces, NamespaceLookup)
    for name in ("ns-1", "ns-2", "ns-3"):
        assert hub.namespaces.get(name).labels == {
            "kubernetes.io/metadata.name": name, "team": f"t{name[3:]}", "tier": "gold"}
    assert hub.namespaces.get("ns-9") is None and len(hub.namespaces) == 3
    await asyncio.sleep(0.3)
    assert namespace_requests(apiserver) == {"get": 3}
    gets = apiserver.requests_matching("get", "namespaces")
    assert sorted(r.query.get("resourceVersion") for r in gets) == ["0", "0", "0"]
    assert hub.namespace_mode.mode == "lookup" and hub.namespace_mode.reason == "configured"
    assert hub.namespace_lookup.lookup_stats.results["ok"] == 3


async def test_a_new_pods_namespace_is_fetched_and_a_reader_can_wait_for_it(apiserver, tmp_path, hubs) -> None:
    seed(apiserver, 3)
    apiserver.set_delay("get", "namespaces", 0.3)
    hub = await hubs(lookup_config(apiserver, tmp_path), needs_namespaces=True)
    assert hub.namespace_wait("ns-2") is None  # nothing asked for yet
    apiserver.create("pods", make_pod("new", "ns-2", node=NODE))
    await eventually(lambda: hub.pods.get is not None and len(hub.pods) == 1)
    wait = hub.namespace_wait("ns-2")
    assert wait is not None
    await wait
    assert hub.namespaces.get("ns-2").labels["team"] == "t2"
    assert hub.namespace_wait("ns-2") is None


async def test_a_relabel_is_seen_after_the_ttl_and_unchanged_labels_keep_the_object(
    apiserver, tmp_path, hubs
) -> None:
    seed(apiserver, 2)
    apiserver.create("pods", make_pod("p", "ns-1", node=NODE))
    hub = await hubs(lookup_config(apiserver, tmp_path, namespace_lookup_ttl_secs=0.5), needs_namespaces=True)
    first = hub.namespaces.get("ns-1")
    stats = hub.namespace_lookup.lookup_stats.results
    await eventually(lambda: stats["unchanged"] >= 1)
    assert hub.namespaces.get("ns-1") is first  # same labels: readers keep their object
    apiserver.patch_labels("namespaces", "ns-1", {"tier": "silver"})
    await eventually(lambda: hub.namespaces.get("ns-1").labels["tier"] == "silver")
    assert hub.namespace_lookup.oldest_age() is not None


async def test_a_deleted_namespace_loses_its_labels_and_an_unused_one_is_forgotten(apiserver, tmp_path, hubs) -> None:
    seed(apiserver, 3)
    apiserver.create("pods", make_pod("a", "ns-1", node=NODE))
    apiserver.create("pods", make_pod("b", "ns-2", node=NODE))
    cfg = lookup_config(apiserver, tmp_path, namespace_lookup_ttl_secs=0.3, delay_deletion_ms=300)
    hub = await hubs(cfg, needs_namespaces=True)
    assert hub.namespaces.get("ns-1") is not None
    apiserver.delete("namespaces", "ns-1")
    await eventually(lambda: hub.namespaces.get("ns-1") is None)
    assert hub.namespace_lookup.lookup_stats.results["not_found"] >= 1
    apiserver.delete("pods", "b", namespace="ns-2")
    await eventually(lambda: "ns-2" not in hub.namespace_lookup._entries)  # noqa: SLF001
    seen = len(apiserver.requests_matching("get", "namespaces"))
    await eventually(lambda: len(apiserver.requests_matching("get", "namespaces")) >= seen + 2)
    later = apiserver.requests_matching("get", "namespaces")[seen:]
    # only ns-1 (still used by pod a, though gone: 404) is still asked for
    assert {r.name for r in later} == {"ns-1"} and {r.status for r in later} == {404}


async def test_forbidden_says_once_which_rbac_rule_is_missing(apiserver, tmp_path, hubs, caplog) -> None:
    seed(apiserver, 3)
    for i in range(3):
        apiserver.create("pods", make_pod(f"p{i}", f"ns-{i}", node=NODE))
    apiserver.inject_fault("get", "namespaces", 403, count=12)
    caplog.set_level(logging.INFO, logger="logagent.kube")
    hub = await hubs(lookup_config(apiserver, tmp_path), needs_namespaces=True)
    # every namespace eventually gets its labels once the rule is granted (the fault runs out)
    await eventually(lambda: all(hub.namespaces.get(f"ns-{i}") is not None for i in range(3)), timeout=20)
    forbidden = [r for r in caplog.records if "forbidden" in r.getMessage()]
    assert len(forbidden) == 1
    assert "`get` on `namespaces`" in forbidden[0].getMessage()
    assert hub.namespace_lookup.lookup_stats.results["forbidden"] == 12


async def test_a_500_storm_is_retried_with_backoff_and_a_failed_refresh_keeps_the_labels(
    apiserver, tmp_path, hubs
) -> None:
    seed(apiserver, 2)
    apiserver.create("pods", make_pod("p", "ns-1", node=NODE))
    hub = await hubs(lookup_config(apiserver, tmp_path, namespace_lookup_ttl_secs=0.3), needs_namespaces=True)
    labels = hub.namespaces.get("ns-1").labels
    apiserver.inject_fault("get", "namespaces", 500, count=6)
    results = hub.namespace_lookup.lookup_stats.results
    await eventually(lambda: results["error"] >= 6, timeout=20)
    assert hub.namespaces.get("ns-1").labels == labels  # kept through the failed refreshes
    await eventually(lambda: results["unchanged"] >= 1, timeout=20)
    statuses = {code: n for (verb, res, code), n in apiserver.statuses.items() if res == "namespaces"}
    assert statuses[500] == 6


async def test_a_429_storm_pauses_every_lookup_for_its_retry_after(apiserver, tmp_path, hubs) -> None:
    seed(apiserver, 6)
    apiserver.inject_fault("get", "namespaces", 429, count=3, retry_after=1)
    for i in range(6):
        apiserver.create("pods", make_pod(f"p{i}", f"ns-{i}", node=NODE))
    hub = await hubs(lookup_config(apiserver, tmp_path), needs_namespaces=True)
    await eventually(lambda: all(hub.namespaces.get(f"ns-{i}") is not None for i in range(6)), timeout=20)
    assert hub.namespace_lookup.lookup_stats.results["throttled"] == 3
    assert hub.stats["namespaces"].throttled == 3
    # the lookups that found the server throttling did not hammer it: at most
    # one request per namespace beyond the three 429s
    assert len(apiserver.requests_matching("get", "namespaces")) <= 6 + 3


@pytest.mark.parametrize(("watch_max", "expected"), [(25, "watch"), (5, "lookup")])
async def test_auto_counts_namespaces_once_and_picks_a_mode(apiserver, tmp_path, hubs, watch_max, expected) -> None:
    seed(apiserver, 20)
    apiserver.create("pods", make_pod("p", "ns-4", node=NODE))
    cfg = kube_config(apiserver, tmp_path, namespace_watch_max=watch_max)  # default mode: auto
    hub = await hubs(cfg, needs_namespaces=True)
    assert hub.namespace_mode.mode == expected and hub.namespace_mode.count == 20
    assert hub.namespaces.get("ns-4").labels["team"] == "t4"
    lists = apiserver.requests_matching("list", "namespaces")
    assert [r.query for r in lists] == [{"limit": "1"}]
    requests = namespace_requests(apiserver)
    if expected == "watch":
        assert isinstance(hub.namespaces, Store) and len(hub.namespaces) == 20
        assert requests.get("watch") == 1 and "get" not in requests
    else:
        assert isinstance(hub.namespaces, NamespaceLookup) and len(hub.namespaces) == 1
        assert requests == {"list": 1, "get": 1}


async def test_auto_picks_lookup_when_the_count_cannot_be_read(apiserver, tmp_path, hubs, caplog) -> None:
    seed(apiserver, 3)
    apiserver.create("pods", make_pod("p", "ns-1", node=NODE))
    apiserver.inject_fault("list", "namespaces", 403)
    caplog.set_level(logging.INFO, logger="logagent.kube")
    hub = await hubs(kube_config(apiserver, tmp_path), needs_namespaces=True)
    assert hub.namespace_mode.mode == "lookup" and hub.namespace_mode.reason == "count_unknown"
    assert hub.namespaces.get("ns-1") is not None
    assert any("namespace metadata: lookup (auto: the namespace count cannot be read)" in r.getMessage()
               for r in caplog.records)


async def test_no_namespace_request_without_a_source_that_needs_them(apiserver, tmp_path, hubs) -> None:
    seed(apiserver, 3)
    apiserver.create("pods", make_pod("p", "ns-1", node=NODE))
    hub = await hubs(kube_config(apiserver, tmp_path))
    assert hub.namespaces is None and hub.namespace_wait("ns-1") is None
    await asyncio.sleep(0.2)
    assert namespace_requests(apiserver) == {}


def test_the_emulator_counts_what_it_sends() -> None:
    from apiserver_emulator.faults import Accounting

    acc = Accounting()
    rec = acc.record("get", "namespaces", "", {})
    acc.sent(rec, 10)
    acc.sent(rec, 5)
    assert rec.bytes == 15 and acc.bytes_sent[("get", "namespaces")] == 15
    assert acc.to_json()["bytes_sent"] == {"get/namespaces": 15}


async def test_metrics_show_the_mode_and_the_lookups(apiserver, tmp_path, hubs) -> None:
    from types import SimpleNamespace

    from prometheus_client import CollectorRegistry, generate_latest

    from logagent.observe.metrics import TopologyCollector

    seed(apiserver, 3)
    apiserver.create("pods", make_pod("p", "ns-1", node=NODE))
    apiserver.inject_fault("get", "namespaces", 500)
    hub = await hubs(kube_config(apiserver, tmp_path, namespace_watch_max=2), needs_namespaces=True)
    await eventually(lambda: hub.namespaces.get("ns-1") is not None)
    registry = CollectorRegistry()
    collector = TopologyCollector(SimpleNamespace(hub=hub, sources={}, transforms={}, sinks={}))
    registry.register(collector)
    text = generate_latest(registry).decode()
    assert 'logagent_kube_namespace_mode{mode="lookup",reason="counted"} 1.0' in text
    assert 'logagent_kube_namespace_lookups_total{result="ok"} 1.0' in text
    assert 'logagent_kube_namespace_lookups_total{result="error"} 1.0' in text
    assert "logagent_kube_namespace_lookup_cached 1.0" in text
    assert "logagent_kube_namespace_lookup_oldest_age_seconds" in text
    assert 'logagent_kube_requests_total{resource="namespaces",status="2xx",verb="get"} 1.0' in text


def test_the_count_of_a_limited_list() -> None:
    from logagent.kube.decode import KubeDecodeError, decode_list_count

    page = b'{"metadata":{"resourceVersion":"9","continue":"t","remainingItemCount":99999},"items":[{}]}'
    assert decode_list_count(page) == 100_000
    assert decode_list_count(b'{"metadata":{},"items":[{},{}]}') == 2  # complete: the items are all
    assert decode_list_count(b'{"metadata":{"continue":"t"},"items":[{}]}') is None  # no count given
    with pytest.raises(KubeDecodeError):
        decode_list_count(b"[")


async def test_the_token_bucket_spaces_requests_at_its_rate() -> None:
    from logagent.kube.pacing import TokenBucket

    now = [0.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    bucket = TokenBucket(2.0, 2.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        await bucket.acquire()
    assert slept == [0.5, 0.5, 0.5]  # a burst of 2, then one every 1/rate seconds
