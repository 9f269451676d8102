"""Delivering one request of the ``http`` sink: send, retry, split on 413, dead-letter.

A :class:`Delivery` sends a request batch until each of its records is either
delivered (a 2xx, as the protocol reads it) or given up on: retried with
exponential backoff and full jitter on connection errors, timeouts, 408, 429
and 5xx (``Retry-After`` is honoured), split in halves on a 413 down to single
records, and written to the dead-letter file (counted and logged,
rate-limited) for any other answer, a single record still too large, or
retries exhausted. It keeps the counters the sink shows to the metrics.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque

import structlog

from logagent.observe.ratelimit import RateLimiter
from logagent.sinks.http.auth import Credentials, CredentialsUnavailable, Redactor
from logagent.sinks.http.batching import RequestBatch
from logagent.sinks.http.compression import BodyBuilder, StreamedBody
from logagent.sinks.http.dead_letter import DeadLetterFile
from logagent.sinks.http.config import HttpSinkConfig, redact_uri
from logagent.sinks.http.client import HttpClient, MalformedAnswer, StaleConnection
from logagent.sinks.http.protocol import HttpProtocol, Outcome
from logagent.sinks.http.retry import Backoff, is_retryable_status, parse_retry_after

#: Each kind of failure is logged when first seen, then at most this often.
RETRY_LOG_INTERVAL_SECS = 60.0
DROP_LOG_INTERVAL_SECS = 300.0
#: How much of a rejected request's answer is logged.
_ANSWER_SNIPPET_BYTES = 200
#: How much of an answer is kept: the start of one not read by the protocol, all of one it reads (up to a bound)
_ANSWER_KEPT_BYTES = 4096
_ANSWER_READ_BYTES = 64 * 1024 * 1024


class RetryLater(Exception):
    """A failed attempt worth sending again (after ``delay``, or a backoff)."""

    def __init__(self, reason: str, delay: float | None = None, detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay
        self.detail = detail


class Rejected(Exception):
    """An answer that resending the same body cannot change."""

    def __init__(self, reason: str, status: int | None, snippet: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.snippet = snippet


class Delivery:
    """Sends request batches of one sink and counts the outcome.

    ``client`` is set by the sink once it is started.
    ``dead_letter`` None means rejected records are only counted and logged.
    """

    def __init__(
        self,
        config: HttpSinkConfig,
        protocol: HttpProtocol,
        bodies: BodyBuilder,
        dead_letter: DeadLetterFile | None,
        log: structlog.typing.FilteringBoundLogger,
    ) -> None:
        self._config = config
        self._protocol = protocol
        self._bodies = bodies
        self.dead_letter = dead_letter
        self._log = log
        self._redactor = Redactor()
        self._redactor.add_uri_credentials(config.uri)
        self._credentials = Credentials(config.auth, self._redactor)
        self._backoff = Backoff(config.retry.initial_backoff_secs, config.retry.max_backoff_secs)
        self._uri_for_logs = redact_uri(config.uri)
        self._log_limiter = RateLimiter()
        self.client: HttpClient | None = None
        self.events_sent = 0
        self.bytes_sent = 0
        #: requests by status class: 2xx, 4xx, 5xx, error...
        self.requests: Counter[str] = Counter()
        #: attempts retried, by reason: timeout, connection, http_503, records ...
        self.retries: Counter[str] = Counter()
        #: events given up on, by reason (http_400, http_413, retries_exhausted, unencodable ...)
        self.dropped_events: Counter[str] = Counter()
        #: of those, the events written to the dead-letter file, by reason
        self.dead_lettered_events: Counter[str] = Counter()
        #: requests (or parts of one) split in halves after a 413
        self.splits = 0
        #: requests waiting for an answer
        self.in_flight = 0

    async def deliver(self, request: RequestBatch) -> None:
        """Send until every record is delivered or given up on; the sink then finishes the request.

        Parts of the request are sent in order: the whole request first; a 413
        replaces a part by its two halves; records a 2xx answer asks to retry
        come back as a part of their own after a backoff.
        """
        per = self._protocol.parts_per_record
        pending: deque[list[bytes]] = deque([request.parts])
        groups = request.groups  # known for the whole request only, like its size
        request.release_parts()
        nbytes: int | None = request.nbytes
        record_retries = 0
        while pending:
            parts = pending.popleft()
            try:
                outcome = await self._send_part(parts, request, nbytes, groups)
            except Rejected as rejected:
                count = len(parts) // per
                if rejected.status == 413 and count > 1:
                    half = count // 2 * per
                    pending.extendleft((parts[half:], parts[:half]))
                    self.splits += 1
                    continue
                self._give_up(parts, rejected)
                continue
            finally:
                nbytes, groups = None, []
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
        per = self._protocol.parts_per_record
        by_reason: dict[str, list[bytes]] = {}
        for index, reason in outcome.dead_letter:
            by_reason.setdefault(reason, []).extend(parts[index * per : (index + 1) * per])
        for reason, rejected in by_reason.items():
            self._give_up(rejected, Rejected(reason, None, ""))
        self.events_sent += len(parts) // per - len(outcome.retry) - len(outcome.dead_letter)
        return [part for index in outcome.retry for part in parts[index * per : (index + 1) * per]]

    async def _send_part(
        self, parts: list[bytes], request: RequestBatch, nbytes: int | None, groups: list[tuple[list[bytes], int]]
    ) -> Outcome | None:
        """Send one body until answered for good: its outcome, or ``Rejected``."""
        if nbytes is None:
            nbytes = sum(map(len, parts))
        body = await self._bodies.build(self._protocol, parts, nbytes, groups)
        max_attempts = self._config.retry.max_attempts
        attempts = 0
        while True:
            attempts += 1
            request.attempts += 1
            try:
                outcome = await self._send_once(body, parts)
            except RetryLater as retry:
                if max_attempts is not None and attempts >= max_attempts:
                    raise Rejected("retries_exhausted", None, retry.reason) from None
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

    def probe_headers(self) -> dict[str, str]:
        """The configured headers and credentials, for a GET of the destination (healthcheck, version)."""
        headers = dict(self._config.request.headers)
        authorization = self._credentials.header()
        if authorization is not None:
            headers["Authorization"] = authorization
        return headers

    def _headers(self) -> dict[str, str]:
        configured = self._config.request.headers
        headers = {} if any(name.lower() == "content-type" for name in configured) else {"Content-Type": self._protocol.content_type}
        headers.update(configured)
        if self._bodies.content_encoding is not None:
            headers["Content-Encoding"] = self._bodies.content_encoding
        try:
            authorization = self._credentials.header()
        except CredentialsUnavailable as exc:
            raise RetryLater("credentials_unavailable", detail=str(exc)) from None
        if authorization is not None:
            headers["Authorization"] = authorization
        return headers

    async def _send_once(self, body: bytes | StreamedBody, parts: list[bytes]) -> Outcome | None:
        """One attempt: the outcome of a 2xx, or raises ``RetryLater`` or ``Rejected``.

        Subclasses choose where an attempt goes (see the elasticsearch sink's endpoints).
        """
        return await self._send_to(self._config.uri, body, parts)

    async def _send_to(self, uri: str, body: bytes | StreamedBody, parts: list[bytes]) -> Outcome | None:
        assert self.client is not None, "the sink was not started"
        headers = self._headers()
        sent_authorization = headers.get("Authorization")
        reads_answer = self._protocol.reads_answer
        self.in_flight += 1
        try:
            answer = await self.client.request(
                self._config.method.upper(),
                uri,
                headers,
                body,
                keep=_ANSWER_READ_BYTES if reads_answer else _ANSWER_KEPT_BYTES,
            )
        except StaleConnection as exc:  # the server closed a kept connection as the request left
            self.requests["error"] += 1
            raise RetryLater("stale_connection", delay=0.0, detail=self._describe(exc)) from None
        except (OSError, MalformedAnswer, TimeoutError) as exc:
            self.requests["error"] += 1
            reason = "timeout" if isinstance(exc, TimeoutError) else "connection"
            raise RetryLater(reason, detail=self._describe(exc)) from None
        except ValueError as exc:  # a header no HTTP request can carry (a token file's content, say)
            self.requests["error"] += 1
            raise RetryLater("invalid_header", detail=self._describe(exc)) from None
        finally:
            self.in_flight -= 1
        status = answer.status
        if 200 <= status <= 299:
            self.requests["2xx"] += 1
            return self._interpret(answer.body, parts) if reads_answer else None
        self.requests[f"{status // 100}xx"] += 1
        snippet = self._redactor.redact(answer.body[:_ANSWER_SNIPPET_BYTES].decode("utf-8", "replace"))
        if is_retryable_status(status):
            raise RetryLater(f"http_{status}", delay=parse_retry_after(answer.headers.get("retry-after")), detail=snippet)
        if status == 401 and self._credentials.from_file and self._token_changed(sent_authorization):
            raise RetryLater("token_rotated", delay=0.0)
        raise Rejected(f"http_{status}", status, snippet)

    def _interpret(self, answer: bytes, parts: list[bytes]) -> Outcome | None:
        """The protocol's verdict on a 2xx; an answer it cannot read counts as all delivered (logged)."""
        try:
            return self._protocol.interpret(answer, parts)
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

    def _give_up(self, parts: list[bytes], rejected: Rejected) -> None:
        """Count, dead-letter and log records rejected for good; they then count as finished."""
        reason = rejected.reason
        per = self._protocol.parts_per_record
        records = [self._protocol.record(parts[i : i + per]) for i in range(0, len(parts), per)]
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
