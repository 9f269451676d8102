"""Batching sinks send what they hold at once while a source waits for acknowledgements (``ACK_WAITS``).

The batch timer is an hour here: a request can only arrive because the sink
learnt that no more records can come until it delivers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from logagent.acks import ACK_WAITS
from logagent.queue import BatchQueue
from logagent.sinks.elasticsearch.sink import ElasticsearchSink, ElasticsearchSinkConfig
from logagent.sinks.http.sink import HttpSink, HttpSinkConfig
from logagent.sinks.http.config import BatchConfig
from logagent.sinks.loki.sink import LokiSink, LokiSinkConfig
from logagent.sinks.opentelemetry.sink import OpentelemetrySink, OpentelemetrySinkConfig
from receivers.backends import BackendReceiver
from receivers.ndjson import Receiver
from tests.test_sink_backends import FAST, Acks, context, events_of, make

HOUR = {**FAST, "batch": BatchConfig(max_events=1000, timeout_secs=3600)}


def sink_for(kind: str, url: str, tmp_path: Path) -> HttpSink:
    base = url.rsplit("/", 1)[0]
    if kind == "http":
        return HttpSink("ship", make(HttpSinkConfig, inputs=["in"], uri=url, **HOUR), data_dir=tmp_path)
    if kind == "elasticsearch":
        config = make(ElasticsearchSinkConfig, inputs=["in"], endpoints=[base], **HOUR)
        return ElasticsearchSink("es", config, data_dir=tmp_path)
    if kind == "loki":
        config = make(LokiSinkConfig, inputs=["in"], endpoint=base, labels={"app": "x"}, **HOUR)
        return LokiSink("loki", config, data_dir=tmp_path)
    config = make(OpentelemetrySinkConfig, inputs=["in"], uri=base + "/v1/logs", **HOUR)
    return OpentelemetrySink("otel", config, data_dir=tmp_path)


async def until(predicate, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


@pytest.mark.parametrize("kind", ["http", "elasticsearch", "loki", "opentelemetry"])
@pytest.mark.parametrize("order", ["wait_after_placing", "wait_before_placing"])
async def test_pending_request_goes_out_when_a_source_waits_for_acks(tmp_path: Path, kind: str, order: str) -> None:
    receiver = Receiver() if kind == "http" else BackendReceiver(kind=kind)
    await receiver.start()
    sink = sink_for(kind, receiver.url, tmp_path)
    acks = Acks()
    inbox = BatchQueue()
    await sink.start()
    task = asyncio.create_task(sink.run(inbox))
    try:
        if order == "wait_before_placing":
            ACK_WAITS.begin()
        await inbox.put(acks.batch(events_of(context("shop", "web"), ["a", "b", "c"])))
        if order == "wait_after_placing":
            await until(lambda: sink.events_in == 3)  # held in a pending request, the timer an hour away
            ACK_WAITS.begin()
        await until(lambda: acks.done == 1)
        assert sink.events_sent == 3 and len(receiver.accepted) == 1
    finally:
        ACK_WAITS.end()
        inbox.close()
        async with asyncio.timeout(30):
            await task
        await sink.stop()
        await receiver.stop()
    assert ACK_WAITS.waiting == 0


async def test_pending_request_waits_for_the_one_in_flight_then_goes_while_the_source_still_waits(
    tmp_path: Path,
) -> None:
    """Answers in flight may let the source read on (fuller requests); if they do not, the pending one goes."""
    receiver = Receiver()
    await receiver.start()
    sink = sink_for("http", receiver.url, tmp_path)
    acks = Acks()
    inbox = BatchQueue()
    await sink.start()
    task = asyncio.create_task(sink.run(inbox))
    ctx = context("shop", "web")
    try:
        receiver.hold()
        ACK_WAITS.begin()
        await inbox.put(acks.batch(events_of(ctx, ["a", "b"])))
        await until(lambda: receiver.in_handler == 1)  # sent at once: nothing was in flight
        await inbox.put(acks.batch(events_of(ctx, ["c"])))
        await until(lambda: sink.events_in == 3)
        assert len(receiver.received) == 1 and acks.done == 0
        receiver.release()  # the source still waits once the first answer is in: the second request goes
        await until(lambda: acks.done == 2)
        assert [r["message"] for e in receiver.accepted for r in e.records()] == ["a", "b", "c"]
    finally:
        receiver.release()
        ACK_WAITS.end()
        inbox.close()
        async with asyncio.timeout(30):
            await task
        await sink.stop()
        await receiver.stop()
