"""Several ``endpoints`` of the elasticsearch sink: requests spread over them, an unhealthy one out of rotation."""

from __future__ import annotations

import socket

from logagent.sinks.elasticsearch.sink import ElasticsearchSink
from logagent.sinks.elasticsearch.endpoints import FAILURES_TO_TRIP, EndpointPool
from logagent.sinks.http.config import BatchConfig, RequestConfig
from logagent.sinks.elasticsearch.config import ElasticsearchSinkConfig
from receivers.backends import bulk_pairs
from tests.test_sink_backends import FAST, Acks, context, events_of, make, servers  # noqa: F401 - the fixture
from tests.test_sink_http import run_sink


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config_for(endpoints: list[str], **options) -> ElasticsearchSinkConfig:
    return make(ElasticsearchSinkConfig, inputs=["in"], endpoints=endpoints,
                **{**FAST, "batch": BatchConfig(max_events=2, timeout_secs=0.05), **options})


def documents(receiver) -> list[str]:
    return [d["message"] for e in receiver.accepted for _, d in bulk_pairs(e.body)]


async def test_requests_are_spread_over_every_endpoint(servers):
    first, second = await servers("elasticsearch"), await servers("elasticsearch")
    config = config_for([first.url.rsplit("/", 1)[0], second.url.rsplit("/", 1)[0]], request=RequestConfig(concurrency=1))
    sink = ElasticsearchSink("es", config)
    messages = [f"m{i}" for i in range(12)]
    acks = Acks()
    await run_sink(None, [acks.batch(events_of(context("shop", f"web-{i}"), messages[2 * i : 2 * i + 2])) for i in range(6)],
                   sink=sink)
    assert len(first.accepted) >= 2 and len(second.accepted) >= 2  # six requests, taken in turn
    assert sorted(documents(first) + documents(second)) == sorted(messages)
    assert all(e.path == "/_bulk" for e in first.accepted + second.accepted)
    assert acks.done == acks.made and sink.events_sent == 12


async def test_an_endpoint_that_is_down_leaves_the_rotation_and_nothing_is_lost(servers):
    live = await servers("elasticsearch")
    down = f"http://127.0.0.1:{closed_port()}"
    config = config_for([down, live.url.rsplit("/", 1)[0]], distribution={"retry_initial_backoff_secs": 60},
                        request=RequestConfig(concurrency=2))
    sink = ElasticsearchSink("es", config)
    messages = [f"m{i}" for i in range(10)]
    acks = Acks()
    await run_sink(None, [acks.batch(events_of(context("shop", f"web-{i}"), messages[2 * i : 2 * i + 2])) for i in range(5)],
                   sink=sink)
    assert sorted(documents(live)) == sorted(messages)  # every record, each once, to the live node
    assert acks.done == acks.made and sink.events_sent == 10
    dead, alive = sink.endpoints.endpoints
    assert not dead.in_rotation and alive.in_rotation and sink.endpoints.in_rotation == 1
    assert sink.retries["connection"] == 1  # the one request that met the dead node went to the live one next


def test_pool_takes_an_endpoint_out_and_probes_it_after_a_doubling_backoff():
    now = [0.0]
    pool = EndpointPool(["a", "b"], initial_backoff_secs=1.0, max_backoff_secs=3.0, clock=lambda: now[0])
    a, b = pool.endpoints
    # taken in turn while both are idle and in rotation
    assert {pool.choose().name for _ in range(2)} == {"a", "b"}
    for endpoint in (a, b):
        pool.done(endpoint, True)
    # 5xx answers: out after FAILURES_TO_TRIP in a row
    for _ in range(FAILURES_TO_TRIP - 1):
        pool.done(_take(pool, a), False)
        assert a.in_rotation
    pool.done(_take(pool, a), False)
    assert not a.in_rotation
    assert [pool.choose().name for _ in range(3)] == ["b", "b", "b"]
    for _ in range(3):
        pool.done(b, True)
    # due again after 1 s: one probe at a time; it fails, so 2 s next time
    now[0] = 1.5
    probe = pool.choose()
    assert probe is a and pool.choose() is b
    pool.done(b, True)
    pool.done(probe, False)
    assert not a.in_rotation and a.out_until == 3.5
    now[0] = 3.6
    probe = pool.choose()
    assert probe is a
    pool.done(probe, True)
    assert a.in_rotation and a.failures == 0 and a.backoff == 1.0
    # unreachable: out at the first failure; every endpoint out: the one due first still gets requests
    pool.done(_take(pool, a), False, reachable=False)
    pool.done(_take(pool, b), False, reachable=False)
    assert pool.in_rotation == 0
    assert pool.choose() is a


def _take(pool: EndpointPool, endpoint):
    endpoint.in_flight += 1
    return endpoint
