"""A real HTTP log receiver for tests and benchmarks.

An aiohttp app on 127.0.0.1 that records every request (method, path,
headers, decompressed body) and answers according to a programmable plan:
a sequence of actions consumed one per request, or seeded random failures.

Actions: ``"ok"``, an int status (``500``, ``503``, ``400``...), ``("retry_after",
status, value)`` for 429/503 with a ``Retry-After`` header, ``"timeout"`` (the
body is recorded as accepted, then the answer is delayed past the client's
timeout, like a server that processed a request whose answer was lost),
``"reset"`` (the connection is aborted without an answer), ``("echo", status)``
(an error answer that repeats the request's headers, as careless servers do),
``("hook", callable, status)`` (calls ``callable()``, then answers ``status``).

Standing rules, checked before the plan: ``limit_body(n)`` answers 413 to a
body of more than ``n`` bytes (after decompression), ``reject_containing(text,
status)`` answers ``status`` to a body containing ``text``. Bodies are
decompressed by their ``Content-Encoding`` (gzip, zstd); any other encoding
is answered 415.

Run standalone for benchmarks: ``python -m receivers.ndjson --port 8080``;
``--count-only`` there counts the records of an ndjson body by its line ends
as the body streams in (decompressing gzip and zstd on the way) without
keeping or decoding it, so that the receiver takes as little as possible of
the CPU it shares with the agent on one machine. Tests use the default, which
reads each body whole and checks it.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import random
import ssl
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import zstandard
from aiohttp import web

Action = Any  # "ok" | int | tuple


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    raw_size: int
    status: int | None = None  # None: no answer (reset, or answer sent after a timeout)
    #: records counted while the body streamed in (count-only receivers); None: count the body
    counted: int | None = None
    #: the URL's query string
    query: str = ""

    def records(self) -> list[dict[str, Any]]:
        """The body decoded as ndjson or as a JSON array, by Content-Type."""
        if self.headers.get("Content-Type", "").startswith("application/json"):
            return json.loads(self.body)
        return [json.loads(line) for line in self.body.split(b"\n") if line]


@dataclass
class Receiver:
    host: str = "127.0.0.1"
    #: how long a "timeout" action sleeps before answering
    timeout_sleep: float = 5.0
    keep_bodies: bool = True
    #: count ndjson records by line ends as the body streams in, keeping no body (benchmarks)
    count_only: bool = False
    received: list[Received] = field(default_factory=list)
    accepted: list[Received] = field(default_factory=list)
    plan: deque[Action] = field(default_factory=deque)
    port: int = 0
    in_handler: int = 0
    max_in_handler: int = 0
    accepted_records: int = 0
    accepted_bytes: int = 0
    ssl_context: ssl.SSLContext | None = None
    #: the status of answers to GET (healthchecks), which are recorded in ``probes``, not ``received``
    health_status: int = 200
    probes: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._random: tuple[random.Random, float, list[Action]] | None = None
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None
        self._gate: asyncio.Event | None = None
        self._barrier: tuple[int, asyncio.Event] | None = None
        self._delay: tuple[random.Random, float] | None = None
        self.changed = asyncio.Condition()
        self._max_body: int | None = None
        self._reject: list[tuple[bytes, int]] = []

    # -- programming ---------------------------------------------------------

    def fail_next(self, *actions: Action) -> None:
        self.plan.extend(actions)

    def fail_randomly(self, seed: int, rate: float, actions: list[Action]) -> None:
        """After the plan is used up, fail each request with probability ``rate``."""
        self._random = (random.Random(seed), rate, actions)

    def delay_randomly(self, seed: int, max_secs: float) -> None:
        """Delay each answer by a seeded random time, so concurrent answers cross."""
        self._delay = (random.Random(seed), max_secs)

    def limit_body(self, max_bytes: int | None) -> None:
        """Answer 413 to a (decompressed) body larger than ``max_bytes``."""
        self._max_body = max_bytes

    def reject_containing(self, text: bytes, status: int) -> None:
        """Answer ``status`` to every body containing ``text``."""
        self._reject.append((text, status))

    def stop_failing(self) -> None:
        self._random = None
        self.plan.clear()

    def hold(self) -> None:
        """Hold every answer until ``release()`` (the body is already recorded)."""
        self._gate = asyncio.Event()

    def release(self) -> None:
        if self._gate is not None:
            self._gate.set()
            self._gate = None

    def require_concurrency(self, n: int) -> None:
        """Each request waits until ``n`` requests are in the handler at once."""
        self._barrier = (n, asyncio.Event())

    # -- lifecycle -----------------------------------------------------------

    @property
    def url(self) -> str:
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{self.host}:{self.port}/ingest"

    async def start(self) -> int:
        app = web.Application(client_max_size=256 << 20)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, handler_cancellation=True, auto_decompress=False
        )
        await self._runner.setup()
        self._site = web.TCPSite(
            self._runner, self.host, self.port, reuse_address=True, ssl_context=self.ssl_context
        )
        await self._site.start()
        self.port = self._runner.addresses[0][1]
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            if self._gate is not None:
                self._gate.set()
            await self._runner.cleanup()
            self._runner = None

    async def wait_for(self, predicate, timeout: float = 20.0) -> None:
        """Wait until ``predicate(self)`` holds, re-checked after every request."""
        async with asyncio.timeout(timeout):
            async with self.changed:
                await self.changed.wait_for(lambda: predicate(self))

    # -- handler -------------------------------------------------------------

    def _next_action(self) -> Action:
        if self.plan:
            return self.plan.popleft()
        if self._random is not None:
            rng, rate, actions = self._random
            if rng.random() < rate:
                return rng.choice(actions)
        return "ok"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.method == "GET":
            self.probes.append((request.path, dict(request.headers)))
            return self.probe_answer(request)
        encoding = request.headers.get("Content-Encoding")
        counted: int | None = None
        try:
            if self.count_only and not request.headers.get("Content-Type", "").startswith("application/json"):
                body = b""
                size, counted = await count_lines(request, encoding)
            else:
                raw = await request.read()
                body, size = decompress(raw, encoding), len(raw)
        except (LookupError, ValueError, OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
            return web.Response(status=415 if isinstance(exc, LookupError) else 400, text=str(exc))
        entry = Received(
            request.method, request.path, dict(request.headers), body if self.keep_bodies else b"", size, counted=counted,
            query=request.query_string,
        )
        self.received.append(entry)
        self.in_handler += 1
        self.max_in_handler = max(self.max_in_handler, self.in_handler)
        await self._notify()
        try:
            return await self._answer(request, entry, body)
        finally:
            self.in_handler -= 1
            await self._notify()

    def probe_answer(self, request: web.Request) -> web.Response:
        """The answer to a GET: ``health_status``, with an empty JSON object."""
        return web.json_response({}, status=self.health_status)

    async def _answer(self, request: web.Request, entry: Received, body: bytes) -> web.StreamResponse:
        if self._barrier is not None:
            n, event = self._barrier
            if self.in_handler >= n:
                event.set()
            await asyncio.wait_for(event.wait(), timeout=10)
        if self._delay is not None:
            rng, max_secs = self._delay
            await asyncio.sleep(rng.uniform(0, max_secs))
        status = self._standing_rule(body)
        if status is not None:
            entry.status = status
            return web.Response(status=status, text=f"rejected by rule: {status}")
        action = self._next_action()
        if action == "reset":
            request.transport.abort()
            return web.Response(status=500)
        if action == "timeout":
            self._accept(entry, body)
            await asyncio.sleep(self.timeout_sleep)
            return web.Response(status=200)
        if isinstance(action, tuple) and action[0] == "retry_after":
            _, status, value = action
            entry.status = status
            return web.Response(status=status, headers={"Retry-After": str(value)}, text="slow down")
        if isinstance(action, tuple) and action[0] == "hook":
            _, hook, status = action
            hook()
            entry.status = status
            return web.Response(status=status, text=f"error {status}")
        if isinstance(action, tuple) and action[0] == "echo":
            entry.status = action[1]
            text = f"rejected: Authorization: {request.headers.get('Authorization')}; all headers: {dict(request.headers)}"
            return web.Response(status=action[1], text=text)
        if isinstance(action, int):
            entry.status = action
            return web.Response(status=action, text=f"error {action} " + "x" * 500)
        if self._gate is not None:
            await self._gate.wait()
        entry.status = 200
        self._accept(entry, body)
        return web.Response(status=200, text="ok")

    def _standing_rule(self, body: bytes) -> int | None:
        if self._max_body is not None and len(body) > self._max_body:
            return 413
        for text, status in self._reject:
            if text in body:
                return status
        return None

    def _accept(self, entry: Received, body: bytes) -> None:
        self.accepted.append(entry)
        self.accepted_bytes += entry.raw_size
        if entry.counted is not None:
            self.accepted_records += entry.counted
        else:
            self.accepted_records += body.count(b"\n") if not body.startswith(b"[") else len(json.loads(body))

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()


def decompress(raw: bytes, encoding: str | None) -> bytes:
    """A body by its Content-Encoding; ``LookupError`` for an encoding not known here."""
    if encoding is None or encoding == "identity":
        return raw
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "zstd":
        # stream_reader: also reads frames written without their content size
        return zstandard.ZstdDecompressor().stream_reader(raw).read()
    raise LookupError(f"unsupported Content-Encoding {encoding!r}")


async def count_lines(request: web.Request, encoding: str | None) -> tuple[int, int]:
    """(body bytes as sent, line ends after decompression) of a body read as it streams in."""
    if encoding is None or encoding == "identity":
        decode = None
    elif encoding == "gzip":
        decode = zlib.decompressobj(31).decompress
    elif encoding == "zstd":
        decode = zstandard.ZstdDecompressor().decompressobj().decompress
    else:
        raise LookupError(f"unsupported Content-Encoding {encoding!r}")
    size = lines = 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
        lines += (decode(chunk) if decode is not None else chunk).count(b"\n")
    return size, lines


async def _serve(args: argparse.Namespace) -> None:
    receiver = Receiver(keep_bodies=False, port=args.port, count_only=args.count_only)
    if args.fail_rate:
        receiver.fail_randomly(args.seed, args.fail_rate, [500, 503, ("retry_after", 429, 1), "reset"])
    await receiver.start()
    print(f"listening on {receiver.url}", flush=True)
    last, last_time = 0, time.monotonic()
    while True:
        await asyncio.sleep(args.interval)
        now = time.monotonic()
        rate = (receiver.accepted_records - last) / (now - last_time)
        last, last_time = receiver.accepted_records, now
        print(
            f"records={receiver.accepted_records} requests_in_interval={len(receiver.received)} "
            f"bytes={receiver.accepted_bytes} rate={rate:.0f}/s",
            flush=True,
        )
        receiver.received.clear()
        receiver.accepted.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description="A log receiver for benchmarks of the http sink.")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--fail-rate", type=float, default=0.0, help="share of requests answered with a failure")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count-only", action="store_true",
                        help="count ndjson records by line ends as bodies stream in, without keeping or checking them")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between stats lines")
    args = parser.parse_args()
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
