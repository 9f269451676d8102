"""The ``http`` sink: batched, compressed, retried, acknowledged delivery.

One dispatcher (the ``run`` task) reads the inbox, encodes events and groups
them into request batches per lane (see :mod:`logagent.sinks.http.batching` for the
ordering and acknowledgement rules). One worker per lane sends that lane's
requests one at a time, so at most ``request.concurrency`` requests are in
flight and records of one file never overtake each other. Bodies are built and
compressed off the event loop (:mod:`logagent.sinks.http.compression`).

Each request is sent by :class:`~logagent.sinks.http.delivery.Delivery` until
every record is delivered or given up on (retries with backoff and
``Retry-After``, 413 splits, the dead-letter file). A record given up on is
released like a delivered one. Input batches are released only when every
request holding their events is finished; on cancellation nothing
unacknowledged is released.

Protocol-specific sinks reuse all of this with their own
:class:`~logagent.sinks.http.protocol.HttpProtocol` (body and answers).
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Callable

import structlog

from logagent.acks import ACK_WAITS, Batch
from logagent.event import LogEvent
from logagent.observe.latency import DeliveryLatency
from logagent.queue import BatchQueue
from logagent.sinks.base import Sink
from logagent.sinks.http.batching import BatchTracker, KeyRouter, LaneBatcher, RequestBatch, ordering_key
from logagent.sinks.http.compression import BodyBuilder
from logagent.sinks.http.dead_letter import DeadLetterFile, dead_letter_path
from logagent.sinks.http.config import (
    AuthConfig,
    BatchConfig,
    HttpSinkConfig,
    RequestConfig,
    RetryConfig,
    TlsConfig,
)
from logagent.sinks.http.client import Answer, HttpClient
from logagent.sinks.http.delivery import Delivery
from logagent.sinks.http.protocol import HttpProtocol, protocol_for
from logagent.sinks.http.tls import build_ssl_context
from logagent.sinks.shaping import shaper_for

__all__ = [
    "AuthConfig",
    "BatchConfig",
    "HttpSink",
    "HttpSinkConfig",
    "RequestConfig",
    "RetryConfig",
    "TlsConfig",
]


class HttpSink(Sink):
    """Ships to an HTTP endpoint; ``protocol`` supplies the body and answer format.

    ``data_dir`` None (embedded use, some tests) means no dead-letter file:
    rejected records are only counted and logged.
    """

    kind = "http"

    def __init__(
        self,
        component_id: str,
        config: HttpSinkConfig,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        protocol: HttpProtocol | None = None,
    ) -> None:
        super().__init__(component_id)
        config.validate()
        self.config = config
        self.protocol = protocol or protocol_for(config.body_format, shaper_for(None if isinstance(config.encoding, str) else config.encoding))
        if protocol is None and (config.payload_prefix or config.payload_suffix):
            self.protocol.prefix, self.protocol.suffix = config.payload_prefix.encode(), config.payload_suffix.encode()  # type: ignore[attr-defined]
        self._client: HttpClient | None = None
        self._bodies = BodyBuilder(component_id, config.compression, config.compression_level)
        self.dead_letter = (
            DeadLetterFile(dead_letter_path(data_dir, component_id), config.dead_letter.max_bytes)
            if data_dir is not None
            else None
        )
        log = structlog.get_logger().bind(component_id=component_id, component_type=self.kind)
        self._delivery = self._new_delivery(config, log)
        self.events_in = 0
        #: from the records' timestamps to their acknowledgement
        self.delivery_latency = DeliveryLatency()
        lanes = config.request.concurrency
        self._router = KeyRouter(lanes)
        self._batchers = [
            LaneBatcher(
                lane,
                config.batch.max_events,
                config.batch.max_bytes,
                self._delivery.dropped_events,
                self.protocol,
            )
            for lane in range(lanes)
        ]
        self._lanes: list[asyncio.Queue[RequestBatch | None]] = [asyncio.Queue(maxsize=1) for _ in range(lanes)]
        #: the dispatcher's wait for its inbox, while it waits
        self._waiting: asyncio.Timeout | None = None
        #: requests handed to the lanes and not finished yet
        self._busy = 0

    # -- counters, for the metrics (kept by the delivery) -------------------

    def _new_delivery(self, config: HttpSinkConfig, log: structlog.typing.FilteringBoundLogger) -> Delivery:
        """The delivery of this sink's requests (the elasticsearch sink spreads them over endpoints)."""
        return Delivery(config, self.protocol, self._bodies, self.dead_letter, log)

    @property
    def events_sent(self) -> int:
        return self._delivery.events_sent

    @property
    def bytes_sent(self) -> int:
        """Body bytes (as sent, compressed) of requests answered with a 2xx."""
        return self._delivery.bytes_sent

    @property
    def requests(self) -> Counter[str]:
        """Requests by status class: ``2xx``, ``4xx``, ``5xx``, ``error`` (no answer)."""
        return self._delivery.requests

    @property
    def retries(self) -> Counter[str]:
        """Retried attempts by reason: ``timeout``, ``connection``, ``http_503``, ``records`` ..."""
        return self._delivery.retries

    @property
    def dropped_events(self) -> Counter[str]:
        """Events given up on, by reason: ``http_400``, ``http_413``, ``retries_exhausted``, ``unencodable`` ..."""
        return self._delivery.dropped_events

    @property
    def dead_lettered_events(self) -> Counter[str]:
        """Of ``dropped_events``, those written to the dead-letter file, by reason."""
        return self._delivery.dead_lettered_events

    @property
    def splits(self) -> int:
        """Requests (or parts of one) split in halves after a 413."""
        return self._delivery.splits

    @property
    def dead_letter_discarded(self) -> int:
        """Records the dead-letter file's size cap removed (the oldest go first)."""
        return self.dead_letter.records_discarded if self.dead_letter is not None else 0

    @property
    def in_flight(self) -> int:
        """Requests waiting for an answer."""
        return self._delivery.in_flight

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        """Ready the connections; raises ``ValueError("tls.<key>: ...")`` for unusable TLS files."""
        ssl_context = build_ssl_context(self.config.tls) if self.config.uri.startswith("https") else None
        self._client = HttpClient(
            timeout_secs=self.config.request.timeout_secs,
            ssl_context=ssl_context,
            max_idle=self.config.request.concurrency,
        )
        self._delivery.client = self._client

    async def probe(self, uri: str, timeout_secs: float) -> Answer:
        """GET ``uri`` with the sink's headers and credentials (healthchecks, version checks); raises on no answer."""
        if self._client is None:
            await self.start()
        assert self._client is not None
        async with asyncio.timeout(timeout_secs):
            return await self._client.request("GET", uri, self._delivery.probe_headers(), b"", keep=1 << 16)

    async def stop(self) -> None:
        self._bodies.close()
        if self._client is not None:
            await self._client.close()
            self._client = self._delivery.client = None

    async def run(self, inbox: BatchQueue) -> None:
        if self._client is None:
            await self.start()
        async with asyncio.TaskGroup() as workers:
            for lane in range(len(self._lanes)):
                workers.create_task(self._lane_worker(lane), name=f"{self.component_id}-lane{lane}")
            await self._dispatch(inbox)
            for queue in self._lanes:
                await queue.put(None)

    # -- dispatcher --------------------------------------------------------

    async def _dispatch(self, inbox: BatchQueue) -> None:
        loop = asyncio.get_running_loop()
        timeout = self.config.batch.timeout_secs
        unsubscribe = ACK_WAITS.subscribe(self._on_ack_wait)
        try:
            while True:
                batch = inbox.get_nowait()
                if batch is None:
                    deadline = self._next_deadline()
                    if deadline is not None and self._stalled():
                        await self._flush(None)
                        continue
                    try:
                        async with asyncio.timeout_at(deadline) as self._waiting:
                            batch = await inbox.get()
                    except TimeoutError:
                        await self._flush(loop.time())
                        continue
                    finally:
                        self._waiting = None
                    if batch is None:
                        break
                self.events_in += len(batch.events)
                ready: list[RequestBatch] = []
                self._place(batch, ready, lambda: loop.time() + timeout)
                for request in ready:
                    await self._send(request)
                await self._flush(loop.time())
        finally:
            unsubscribe()
        await self._flush(None)

    def _stalled(self) -> bool:
        """Whether only sending the pending requests can let a waiting source read on.

        A source waits for acknowledgements; while this sink has requests in
        flight, their answers may be what it waits for (it then reads on and
        the pending requests fill up), so the pending ones wait for those.
        """
        return ACK_WAITS.waiting > 0 and self._busy == 0

    def _on_ack_wait(self) -> None:
        """A source started waiting, or the last request in flight finished: stop waiting for the timer if stalled."""
        waiting = self._waiting
        if waiting is not None and not waiting.expired() and self._next_deadline() is not None and self._stalled():
            waiting.reschedule(asyncio.get_running_loop().time())

    async def _send(self, request: RequestBatch) -> None:
        self._busy += 1
        await self._lanes[request.lane].put(request)

    def _place(self, batch: Batch, ready: list[RequestBatch], deadline: Callable[[], float]) -> None:
        tracker = BatchTracker(batch, self.delivery_latency)
        events = batch.events
        if batch.ctx is not None:  # one file (a source batch): a single run
            self._place_run(events, tracker, ready, deadline)
        else:  # runs of events sharing a file context share the key: route per run
            start, count = 0, len(events)
            while start < count:
                ctx = events[start].ctx
                end = start + 1
                while end < count and events[end].ctx is ctx:
                    end += 1
                self._place_run(events[start:end], tracker, ready, deadline)
                start = end
        tracker.part_done()

    def _place_run(
        self, events: list[LogEvent], tracker: BatchTracker, ready: list[RequestBatch], deadline: Callable[[], float]
    ) -> None:
        if not events:
            return
        key = ordering_key(events[0])
        lane = self._router.assign(key, len(events))
        skipped = self._batchers[lane].add(events, tracker, key, ready, deadline)
        if skipped:
            self._router.finished(key, skipped)

    def _next_deadline(self) -> float | None:
        deadlines = [b.deadline for b in self._batchers if b.deadline is not None]
        return min(deadlines) if deadlines else None

    async def _flush(self, now: float | None) -> None:
        """Send the pending requests whose deadline is ``now`` or earlier; all of them when ``now`` is None."""
        for batcher in self._batchers:
            if batcher.deadline is not None and (now is None or batcher.deadline <= now):
                request = batcher.take()
                if request is not None:
                    await self._send(request)

    # -- lane workers ------------------------------------------------------

    async def _lane_worker(self, lane: int) -> None:
        queue = self._lanes[lane]
        while True:
            request = await queue.get()
            if request is None:
                return
            await self._delivery.deliver(request)
            for key, events in request.keys.items():
                self._router.finished(key, events)
            request.finish()
            self._busy -= 1
            if not self._busy:  # asked after the sources had their turn: the acks may have let them read on
                asyncio.get_running_loop().call_soon(self._on_ack_wait)
