"""The watcher state machine against a scripted fake client (no network)."""

import asyncio
import random

import pytest

from logagent.kube.client import ApiError
from logagent.kube.config import KubernetesConfig
from logagent.kube.store import PodStore
from logagent.kube.pacing import Backoff
from logagent.kube.watcher import Watcher, reflect
from tests.test_kube_support import event, pod, to_bytes


class FakeContent:
    def __init__(self, lines):
        self._lines = list(lines)

    async def readline(self):
        if not self._lines:
            return b""
        item = self._lines.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


class FakeResponse:
    def __init__(self, lines=(), body=b""):
        self.content = FakeContent(lines)
        self._body = body

    async def read(self):
        return self._body

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False


class FakeClient:
    """Answers each GET with the next scripted item (a response or an exception)."""

    request_timeout = 1.0

    def __init__(self, script):
        self.script = list(script)
        self.requests = []
        self.exhausted = asyncio.Event()

    async def get(self, path, params, read_timeout=None):
        self.requests.append(dict(params))
        if not self.script:
            self.exhausted.set()
            await asyncio.Event().wait()  # hang like an idle watch
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


def end_bookmark(rv):
    return to_bytes(
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": rv,
                                                     "annotations": {"k8s.io/initial-events-end": "true"}}}}
    ) + b"\n"


CFG = KubernetesConfig(node_name="n", initial_delay_ms=0, backoff_initial_ms=100, backoff_max_ms=1000)


async def run(script, cfg=CFG):
    client = FakeClient(script)
    slept = []

    async def fake_sleep(seconds):
        slept.append(seconds)

    watcher = Watcher(client, "pods", cfg, sleep=fake_sleep, rng=random.Random(1))
    store = PodStore()
    task = asyncio.create_task(reflect(watcher.events(), store))
    try:
        await asyncio.wait_for(client.exhausted.wait(), 5)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return watcher, store, client, slept


async def test_undecodable_watch_line_is_skipped_and_counted():
    script = [
        FakeResponse([event("ADDED", pod("a", rv="5")) + b"\n", b"{garbage\n", b"\n", end_bookmark("6"),
                      event("ADDED", pod("b", rv="7")) + b"\n"]),
    ]
    watcher, store, client, _ = await run(script)
    assert {p.name for p in store.values()} == {"a", "b"}
    assert watcher.stats.decode_errors == 1
    assert watcher.resource_version == "7"
    # the stream ended normally: resumed from the last RV
    assert client.requests[-1]["resourceVersion"] == "7"


async def test_error_event_other_than_410_backs_off_and_resumes():
    status = {"kind": "Status", "code": 500, "reason": "InternalError", "message": "boom"}
    script = [
        FakeResponse([event("ADDED", pod("a", rv="5")) + b"\n", end_bookmark("6"),
                      to_bytes({"type": "ERROR", "object": status}) + b"\n"]),
    ]
    watcher, store, client, slept = await run(script)
    assert watcher.stats.request_errors == 1 and len(slept) == 1
    assert client.requests[-1]["resourceVersion"] == "6"
    assert watcher.stats.relists == 0


async def test_gone_on_watch_relists_once_then_watches():
    gone = ApiError(410, "Expired", "too old")
    script = [
        FakeResponse([end_bookmark("6")]),
        gone,
        FakeResponse([event("ADDED", pod("a", rv="9")) + b"\n", end_bookmark("9")]),
    ]
    watcher, store, client, slept = await run(script)
    assert watcher.stats.relists == 1 and slept == []
    assert [r.get("sendInitialEvents") for r in client.requests] == ["true", None, "true", None]
    assert client.requests[-1]["resourceVersion"] == "9"
    assert store.get("uid-a") is not None


async def test_rejected_watch_list_falls_back_to_paged_list():
    page1 = to_bytes({"metadata": {"resourceVersion": "10", "continue": "c1"}, "items": [pod("a")]})
    page2 = to_bytes({"metadata": {"resourceVersion": "10"}, "items": [pod("b")]})
    script = [ApiError(422, "Invalid", "sendInitialEvents is forbidden"), FakeResponse(body=page1),
              FakeResponse(body=page2)]
    watcher, store, client, slept = await run(script)
    assert slept == []
    assert {p.name for p in store.values()} == {"a", "b"}
    assert client.requests[1]["resourceVersion"] == "0" and "continue" not in client.requests[1]
    assert client.requests[2]["continue"] == "c1" and "resourceVersion" not in client.requests[2]
    assert client.requests[3]["resourceVersion"] == "10" and client.requests[3]["watch"] == "1"


async def test_broken_initial_stream_starts_a_new_initial_state():
    script = [
        FakeResponse([event("ADDED", pod("a", rv="5")) + b"\n", ConnectionResetError("reset")]),
        FakeResponse([event("ADDED", pod("b", rv="6")) + b"\n", end_bookmark("6")]),
    ]
    watcher, store, client, slept = await run(script)
    assert {p.name for p in store.values()} == {"b"}  # the broken attempt was discarded
    assert len(slept) == 1 and watcher.stats.request_errors == 1


async def test_initial_delay_is_random_and_bounded():
    cfg = KubernetesConfig(node_name="n", initial_delay_ms=2000)
    watcher, store, client, slept = await run([FakeResponse([end_bookmark("1")])], cfg)
    assert 0 <= slept[0] <= 2.0


def test_backoff_full_jitter_grows_to_the_cap_and_resets():
    backoff = Backoff(0.5, 30.0, random.Random(7))
    delays = [backoff.next_delay() for _ in range(20)]
    caps = [min(30.0, 0.5 * 2**i) for i in range(20)]
    assert all(0 <= d <= c for d, c in zip(delays, caps))
    assert max(delays[10:]) > 1.0  # grew well beyond the initial value
    backoff.reset()
    assert backoff.next_delay() <= 0.5


async def test_watch_timeout_is_randomised_and_quick_empty_watches_back_off():
    script = [FakeResponse([end_bookmark("1")])] + [FakeResponse([]) for _ in range(10)]
    watcher, store, client, slept = await run(script)
    timeouts = [int(r["timeoutSeconds"]) for r in client.requests]
    assert all(240 <= t <= 480 for t in timeouts)
    assert len(set(timeouts)) > 1
    # each watch that ended at once without a line counted as a failure
    assert len(slept) == 10 and watcher.stats.request_errors == 10
    assert watcher.stats.relists == 0


def test_config_rejects_inverted_ranges():
    with pytest.raises(ValueError):
        KubernetesConfig(watch_timeout_min_secs=10, watch_timeout_max_secs=5)
    with pytest.raises(ValueError):
        KubernetesConfig(backoff_initial_ms=100, backoff_max_ms=10)
