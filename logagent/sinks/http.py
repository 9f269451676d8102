"""The ``http`` sink: batched, compressed, retried, acknowledged delivery.

One dispatcher (the ``run`` task) reads the inbox, encodes events and groups
them into request batches per lane (see :mod:`logagent.sinks.batching` for the
ordering and acknowledgement rules). One worker per lane sends that lane's
requests one at a time, so at most ``request.concurrency`` requests are in
flight and records of one file never overtake each other. Bodies are built and
compressed off the event loop (:mod:`logagent.sinks.compression`).

A request is retried with exponential backoff and full jitter on connection
errors, timeouts, 408, 429 and 5xx (``Retry-After`` is honoured), without limit
unless ``retry.max_attempts`` is set. A 413 splits the request in halves, down
to single records. A record rejected for good (any other answer, a single
record still too large, retries exhausted) is written to the dead-letter file
(:mod:`logagent.sinks.dead_letter`), counted and logged (rate-limited), and
then released like a delivered one. Input batches are released only when
every request holding their events is finished; on cancellation nothing
unacknowledged is released.

Protocol-specific sinks reuse all of this with their own
:class:`~logagent.sinks.http_protocol.HttpProtocol` (body and answers).
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter, deque
from collections.abc import Callable

import aiohttp
import structlog

from logagent.acks import Batch
from logagent.event import LogEvent
from logagent.observe.ratelimit import RateLimiter
from logagent.queue import BatchQueue
from logagent.sinks.auth import Credentials, CredentialsUnavailable, Redactor
from logagent.sinks.base import Sink
from logagent.sinks.batching import BatchTracker, KeyRouter, LaneBatcher, RequestBatch, ordering_key
from logagent.sinks.compression import BodyBuilder, StreamedBody
from logagent.sinks.http_payload import BodyPayload
from logagent.sinks.dead_letter import DeadLetterFile, dead_letter_path
from logagent.sinks.http_config import (
    AuthConfig,
    BatchConfig,
    HttpSinkConfig,
    RequestConfig,
    RetryConfig,
    TlsConfig,
    redact_uri,
)
from logagent.sinks.http_protocol import HttpProtocol, Outcome, protocol_for
from logagent.sinks.retry import Backoff, is_retryable_status, parse_retry_after
from logagent.sinks.tls import build_ssl_context

__all__ = [
    "AuthConfig",
    "BatchConfig",
    "HttpSink",
    "HttpSinkConfig",
    "RequestConfig",
    "RetryConfig",
    "TlsConfig",
]

#: Each kind of failure is logged when first seen, then at most this often.
RETRY_LOG_INTERVAL_SECS = 60.0
DROP_LOG_INTERVAL_SECS = 300.0
#: How much of a rejected request's answer is logged.
_ANSWER_SNIPPET_BYTES = 200


class _Retry(Exception):
    def __init__(self, reason: str, delay: float | None = None, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay
        self.detail = detail


class _Rejected(Exception):
    """An answer that resending the same body cannot change."""

    def __init__(self, reason: str, status: int | None, snippet: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.snippet = snippet


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
        self.protocol = protocol or protocol_for(config.encoding)
        self._redactor = Redactor()
        self._redactor.add_uri_credentials(config.uri)
        self._credentials = Credentials(config.auth, self._redactor)
        self._backoff = Backoff(config.retry.initial_backoff_secs, config.retry.max_backoff_secs)
        self._log = structlog.get_logger().bind(component_id=component_id, component_type=self.kind)
        self._uri_for_logs = redact_uri(config.uri)
        self._session: aiohttp.ClientSession | None = None
        self._log_limiter = RateLimiter()
        self._bodies = BodyBuilder(component_id, config.compression, config.compression_level)
        self.dead_letter = (
            DeadLetterFile(dead_letter_path(data_dir, component_id), config.dead_letter.max_bytes)
            if data_dir is not None
            else None
        )
        # Counters for metrics.
        self.events_sent = 0
        self.bytes_sent = 0
        self.requests: Counter[str] = Counter()  # by status class: 2xx, 4xx, 5xx, error...
        self.events_in = 0
        self.retries: Counter[str] = Counter()  # by reason: timeout, connection, http_503 ...
        #: events given up on, by reason (http_400, http_413, retries_exhausted, unencodable ...)
        self.dropped_events: Counter[str] = Counter()
        #: of those, the events written to the dead-letter file, by reason
        self.dead_lettered_events: Counter[str] = Counter()
        #: requests split in halves after a 413
        self.splits = 0
        self.in_flight = 0
        lanes = config.request.concurrency
        self._router = KeyRouter(lanes)
        self._batchers = [
            LaneBatcher(
                lane,
                config.batch.max_events,
                config.batch.max_bytes,
                self.dropped_events,
                self.protocol,
            )
            for lane in range(lanes)
        ]
        self._lanes: list[asyncio.Queue[RequestBatch | None]] = [asyncio.Queue(maxsize=1) for _ in range(lanes)]

    # -- lifecycle ---------------------------------------------------------

    async def start(self) -> None:
        """Open the connection pool; raises ``ValueError("tls.<key>: ...")`` for unusable TLS files."""
        ssl_context = build_ssl_context(self.config.tls) if self.config.uri.startswith("https") else None
        connector = aiohttp.TCPConnector(limit=self.config.request.concurrency, ssl=ssl_context or True)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=self.config.request.timeout_secs),
            auto_decompress=True,
            raise_for_status=False,
        )

    async def stop(self) -> None:
        self._bodies.close()
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def run(self, inbox: BatchQueue) -> None:
        if self._session is None:
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
        while True:
            batch = inbox.get_nowait()
            if batch is None:
                deadline = self._next_deadline()
                try:
                    async with asyncio.timeout_at(deadline):
                        batch = await inbox.get()
                except TimeoutError:
                    await self._flush_expired(loop.time())
                    continue
                if batch is None:
                    break
            self.events_in += len(batch.events)
            ready: list[RequestBatch] = []
            self._place(batch, ready, lambda: loop.time() + timeout)
            for request in ready:
                await self._lanes[request.lane].put(request)
            await self._flush_expired(loop.time())
        for batcher in self._batchers:
            request = batcher.take()
            if request is not None:
                await self._lanes[request.lane].put(request)

    def _place(self, batch: Batch, ready: list[RequestBatch], deadline: Callable[[], float]) -> None:
        tracker = BatchTracker(batch)
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

    async def _flush_expired(self, now: float) -> None:
        for batcher in self._batchers:
            if batcher.deadline is not None and batcher.deadline <= now:
                request = batcher.take()
                if request is not None:
                    await self._lanes[request.lane].put(request)

    # -- lane workers ------------------------------------------------------

    async def _lane_worker(self, lane: int) -> None:
        queue = self._lanes[lane]
        while True:
            request = await queue.get()
            if request is None:
                return
            await self._deliver(request)
            for key, events in request.keys.items():
                self._router.finished(key, events)
            request.finish()

    async def _deliver(self, request: RequestBatch) -> None:
        """Send until every record is delivered or dead-lettered; then the request is finished.

        Parts of the request are sent in order: the whole request first; a 413
        replaces a part by its two halves; records a 2xx answer asks to retry
        come back as a part of their own after a backoff.
        """
        per = self.protocol.parts_per_record
        pending: deque[list[bytes]] = deque([request.parts])
        request.parts = []
        nbytes: int | None = request.nbytes  # known for the whole request only
        record_retries = 0
        while pending:
            parts = pending.popleft()
            try:
                outcome = await self._send_part(parts, request, nbytes)
            except _Rejected as rejected:
                count = len(parts) // per
                if rejected.status == 413 and count > 1:
                    half = count // 2 * per
                    pending.extendleft((parts[half:], parts[:half]))
                    self.splits += 1
                    continue
                self._give_up(parts, rejected)
                continue
            finally:
                nbytes = None
            if outcome is None:
                self.events_sent += len(parts) // per
                continue
            retry = self._apply_outcome(parts, outcome)
            if retry:
                record_retries += 1
                self.retries["records"] += 1
                await asyncio.sleep(self._backoff.delay(record_retries))
                pending.appendleft(retry)

    def _apply_outcome(self, parts: list[bytes], outcome: Outcome) -> list[bytes]:
        """Dead-letter what the answer rejected; returns the parts of the records to retry."""
        per = self.protocol.parts_per_record
        by_reason: dict[str, list[bytes]] = {}
        for index, reason in outcome.dead_letter:
            by_reason.setdefault(reason, []).extend(parts[index * per : (index + 1) * per])
        for reason, rejected in by_reason.items():
            self._give_up(rejected, _Rejected(reason, None, ""))
        self.events_sent += len(parts) // per - len(outcome.retry) - len(outcome.dead_letter)
        return [part for index in outcome.retry for part in parts[index * per : (index + 1) * per]]

    async def _send_part(self, parts: list[bytes], request: RequestBatch, nbytes: int | None) -> Outcome | None:
        """Send one body until answered for good: its outcome, or ``_Rejected``."""
        if nbytes is None:
            nbytes = sum(map(len, parts))
        body = await self._bodies.build(self.protocol, parts, nbytes)
        max_attempts = self.config.retry.max_attempts
        attempts = 0
        while True:
            attempts += 1
            request.attempts += 1
            try:
                outcome = await self._send_once(body, parts)
            except _Retry as retry:
                if max_attempts is not None and attempts >= max_attempts:
                    raise _Rejected("retries_exhausted", None, retry.reason) from None
                self.retries[retry.reason] += 1
                delay = retry.delay if retry.delay is not None else self._backoff.delay(attempts)
                self._log_limited(
                    f"retry:{retry.reason}",
                    RETRY_LOG_INTERVAL_SECS,
                    "warning",
                    "http request failed, retrying",
                    reason=retry.reason,
                    detail=retry.detail,
                    delay_secs=round(delay, 3),
                    uri=self._uri_for_logs,
                )
                await asyncio.sleep(delay)
                continue
            self.bytes_sent += len(body)
            return outcome

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": self.protocol.content_type}
        headers.update(self.config.request.headers)
        if self._bodies.content_encoding is not None:
            headers["Content-Encoding"] = self._bodies.content_encoding
        try:
            authorization = self._credentials.header()
        except CredentialsUnavailable as exc:
            raise _Retry("credentials_unavailable", detail=str(exc)) from None
        if authorization is not None:
            headers["Authorization"] = authorization
        return headers

    async def _send_once(self, body: bytes | StreamedBody, parts: list[bytes]) -> Outcome | None:
        """One attempt: the outcome of a 2xx, or raises ``_Retry`` or ``_Rejected``."""
        assert self._session is not None, "start() was not called"
        headers = self._headers()
        sent_authorization = headers.get("Authorization")
        self.in_flight += 1
        try:
            async with self._session.request(
                self.config.method.upper(),
                self.config.uri,
                data=BodyPayload(body),
                headers=headers,
                allow_redirects=False,
            ) as response:
                status = response.status
                if 200 <= status <= 299:
                    answer = await response.read()
                    self.requests["2xx"] += 1
                    return self._interpret(answer, parts) if self.protocol.reads_answer else None
                self.requests[f"{status // 100}xx"] += 1
                answer = await response.content.read(4096)
                retry_after = response.headers.get("Retry-After")
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            self.requests["error"] += 1
            reason = "timeout" if isinstance(exc, asyncio.TimeoutError) else "connection"
            raise _Retry(reason, detail=self._describe(exc)) from None
        finally:
            self.in_flight -= 1
        snippet = self._redactor.redact(answer[:_ANSWER_SNIPPET_BYTES].decode("utf-8", "replace"))
        if is_retryable_status(status):
            raise _Retry(f"http_{status}", delay=parse_retry_after(retry_after), detail=snippet)
        if status == 401 and self._credentials.from_file and self._token_changed(sent_authorization):
            raise _Retry("token_rotated", delay=0.0)
        raise _Rejected(f"http_{status}", status, snippet)

    def _interpret(self, answer: bytes, parts: list[bytes]) -> Outcome | None:
        """The protocol's verdict on a 2xx; an answer it cannot read counts as all delivered (logged)."""
        try:
            return self.protocol.interpret(answer, parts)
        except Exception as exc:  # noqa: BLE001 - a protocol bug must not stop the sink
            snippet = answer[:_ANSWER_SNIPPET_BYTES].decode("utf-8", "replace")
            self._log_limited(
                "interpret",
                DROP_LOG_INTERVAL_SECS,
                "error",
                "unreadable 2xx answer, records taken as delivered",
                error=self._describe(exc),
                answer=self._redactor.redact(snippet),
            )
            return None

    def _token_changed(self, sent: str | None) -> bool:
        try:
            return self._credentials.header() != sent
        except CredentialsUnavailable:
            return False

    def _describe(self, exc: BaseException) -> str:
        text = str(exc)
        name = type(exc).__name__
        return self._redactor.redact(f"{name}: {text}" if text else name)

    def _give_up(self, parts: list[bytes], rejected: _Rejected) -> None:
        """Count, dead-letter and log records rejected for good; they then count as finished."""
        reason = rejected.reason
        per = self.protocol.parts_per_record
        records = [self.protocol.record(parts[i : i + per]) for i in range(0, len(parts), per)]
        self.dropped_events[reason] += len(records)
        written_to: str | None = None
        failure: str | None = None
        if self.dead_letter is not None:
            try:
                self.dead_letter.write(records, reason)
            except OSError as exc:
                failure = f"{type(exc).__name__}: {exc}"
            else:
                self.dead_lettered_events[reason] += len(records)
                written_to = str(self.dead_letter.path)
        self._log_limited(
            f"drop:{reason}",
            DROP_LOG_INTERVAL_SECS,
            "error",
            "http request rejected, records dead-lettered" if written_to else "http request rejected, records dropped",
            reason=reason,
            status=rejected.status,
            answer=rejected.snippet,
            events=len(records),
            dead_letter=written_to,
            dead_letter_error=failure,
            uri=self._uri_for_logs,
        )

    def _log_limited(self, kind: str, interval: float, level: str, message: str, **fields: object) -> None:
        """Log the first occurrence of a kind, then at most once per ``interval``.

        Counters tell how often it happened; ``suppressed`` says how many
        occurrences since the previous line were not logged.
        """
        suppressed = self._log_limiter.admit(kind, interval)
        if suppressed is not None:
            getattr(self._log, level)(message, suppressed=suppressed, **fields)
