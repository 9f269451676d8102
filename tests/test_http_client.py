"""The sinks' HTTP/1.1 client against real sockets: answers of every framing, kept connections, failures, large bodies."""

from __future__ import annotations

import asyncio
import base64
import json
import random
import socket
from collections.abc import Awaitable, Callable

import pytest

from logagent.sinks.http.compression import StreamedBody
from logagent.sinks.http.client import (
    Endpoint,
    HttpClient,
    MalformedAnswer,
    ServerDisconnected,
    StaleConnection,
    _unsent,
    request_head,
)
from logagent.sinks.http.config import BatchConfig, RequestConfig, RetryConfig, TlsConfig
from tests.test_sink_http import (  # noqa: F401 - fixtures
    Feeder,
    delivered,
    make_config,
    pki,
    receiver,
    run_sink,
    tls_receiver,
)

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class Request:
    def __init__(self, head: bytes, body: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        self.line = lines[0]
        self.headers = {name.lower(): value for name, _, value in (line.partition(": ") for line in lines[1:] if line)}
        self.body = body


async def read_request(reader: asyncio.StreamReader, chunk: int | None = None) -> Request:
    head = await reader.readuntil(b"\r\n\r\n")
    request = Request(head[:-4], b"")
    length = int(request.headers["content-length"])
    body = bytearray()
    while len(body) < length:
        body += await reader.read(min(chunk or length, length - len(body)))
        if chunk:
            await asyncio.sleep(0.0005)
    request.body = bytes(body)
    return request


class Server:
    """A TCP server on 127.0.0.1 answering with ``handler``; counts connections."""

    def __init__(self, handler: Handler, rcvbuf: int | None = None) -> None:
        self.handler = handler
        self.rcvbuf = rcvbuf
        self.connections = 0

    async def __aenter__(self) -> Server:
        listener = socket.socket()
        if self.rcvbuf:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)  # inherited when accepted
        listener.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}/in?x=1"
        self._server = await asyncio.start_server(self._handle, sock=listener)
        return self

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        await self._server.wait_closed()


def answering(
    *answers: bytes, received: list[Request] | None = None, chunk: int | None = None, close: bool = False
) -> Handler:
    """A handler that reads a request and writes the next answer, for each answer, on one connection.

    Then it closes the connection (``close``) or waits for the client to.
    """

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for answer in answers:
            request = await read_request(reader, chunk)
            if received is not None:
                received.append(request)
            writer.write(answer)
            await writer.drain()
        if not close:
            await reader.read()

    return handle


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


async def test_answers_in_each_framing_are_read_whole_on_one_kept_connection():
    answers = (
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nsec\r\n3\r\nond\r\n0\r\n\r\n",
        b"HTTP/1.1 503 Busy\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end",
    )
    received: list[Request] = []
    async with Server(answering(*answers, received=received, close=True)) as server:
        async with HttpClient(timeout_secs=10) as client:
            got = [await client.request("POST", server.url, {"X-Test": str(i)}, b"body %d" % i, keep=100) for i in range(3)]
            got.append(await client.request("POST", server.url, {}, b"", keep=100))
    assert [(a.status, a.body) for a in got] == [(200, b"first"), (200, b"second"), (503, b""), (200, b"until the end")]
    assert got[2].headers["retry-after"] == "7"
    assert server.connections == 1  # kept alive between requests
    assert [r.body for r in received] == [b"body 0", b"body 1", b"body 2", b""]
    assert received[0].line == "POST /in?x=1 HTTP/1.1"
    assert received[0].headers["host"] == server.url.split("/")[2] and received[0].headers["x-test"] == "0"
    assert received[0].headers["user-agent"].startswith("logagent/")


async def test_an_interim_answer_is_passed_over_for_the_real_one():
    interim_then_real = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone"
    async with Server(answering(interim_then_real, OK)) as server:
        async with HttpClient(timeout_secs=10) as client:
            first = await client.request("POST", server.url, {}, b"x", keep=100)
            second = await client.request("POST", server.url, {}, b"y", keep=100)
    assert (first.status, first.body, second.status) == (201, b"done", 200)


async def test_only_the_asked_for_bytes_of_an_answer_are_kept_and_the_connection_stays_usable():
    long_answer = b"HTTP/1.1 400 Bad\r\nContent-Length: 10000\r\n\r\n" + b"e" * 10000
    async with Server(answering(long_answer, OK)) as server:
        async with HttpClient(timeout_secs=10) as client:
            first = await client.request("POST", server.url, {}, b"x", keep=100)
            second = await client.request("POST", server.url, {}, b"y", keep=100)
    assert (first.status, first.body) == (400, b"e" * 100)
    assert (second.status, second.body) == (200, b"ok") and server.connections == 1


async def test_a_connection_the_server_closed_while_idle_is_not_used_again():
    async def one_request_per_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(OK)  # keep-alive by default, but the server closes right after
        await writer.drain()

    async with Server(one_request_per_connection) as server:
        async with HttpClient(timeout_secs=10) as client:
            for _ in range(3):
                answer = await client.request("POST", server.url, {}, b"x", keep=10)
                assert answer.status == 200
                await asyncio.sleep(0.05)  # the close reaches the client
    assert server.connections == 3


async def test_a_kept_connection_closed_before_any_answer_is_stale_and_the_next_request_connects_anew():
    received: list[Request] = []

    async def closes_the_second_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first_connection = server.connections == 1
        received.append(await read_request(reader))
        writer.write(OK)
        await writer.drain()
        if first_connection:  # keep-alive announced, but the next request meets a closing server
            received.append(await read_request(reader))
            return
        await reader.read()

    async with Server(closes_the_second_request) as server:
        async with HttpClient(timeout_secs=10) as client:
            assert (await client.request("POST", server.url, {}, b"n0", keep=10)).status == 200
            with pytest.raises(StaleConnection):
                await client.request("POST", server.url, {}, b"n1", keep=10)
            assert (await client.request("POST", server.url, {}, b"n1", keep=10)).status == 200
    assert server.connections == 2 and [r.body for r in received] == [b"n0", b"n1", b"n1"]


async def test_a_sink_resends_at_once_when_a_kept_connection_was_stale(receiver):
    receiver.fail_next("ok", "reset")  # the second request finds its kept connection dropped
    feeder = Feeder()
    config = make_config(
        receiver.url,
        batch=BatchConfig(max_events=2, timeout_secs=0.01),
        request=RequestConfig(concurrency=1),
        retry=RetryConfig(initial_backoff_secs=30.0, max_backoff_secs=30.0),  # a backoff would outlast the test
    )
    sink = await run_sink(config, [feeder.batch(feeder.events(1, 2)), feeder.batch(feeder.events(1, 2))])
    assert sink.retries == {"stale_connection": 1} and delivered(receiver) == feeder.sent and feeder.all_acked()


async def test_a_connection_lost_before_the_whole_answer_is_an_os_error():
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        await writer.drain()

    async with Server(cut) as server:
        async with HttpClient(timeout_secs=10) as client:
            with pytest.raises(ServerDisconnected) as raised:
                await client.request("POST", server.url, {}, b"x", keep=1000)
    assert isinstance(raised.value, OSError)


async def test_bytes_that_are_not_http_are_a_malformed_answer():
    async with Server(answering(b"SMTP ready\r\n\r\n")) as server:
        async with HttpClient(timeout_secs=10) as client:
            with pytest.raises(MalformedAnswer):
                await client.request("POST", server.url, {}, b"x", keep=1000)


async def test_a_server_that_never_answers_times_out():
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()

    async with Server(silent) as server:
        async with HttpClient(timeout_secs=0.2) as client:
            with pytest.raises(TimeoutError):
                await client.request("POST", server.url, {}, b"x", keep=1000)


async def test_refused_connections_are_os_errors():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    client = HttpClient(timeout_secs=5)
    with pytest.raises(OSError):
        await client.request("POST", f"http://127.0.0.1:{port}/", {}, b"x", keep=10)


def streamed(parts: list[bytes], groups: list[tuple[list[bytes], int]]) -> StreamedBody:
    return StreamedBody(lambda: iter([b"".join(parts)]), sum(map(len, parts)), parts, groups)


async def test_an_answer_before_the_whole_body_is_taken_is_the_answer():
    # a server may refuse a large body (413) without reading it, and close
    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 413 Too Large\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbig")
        await writer.drain()

    parts = [b"p" * 1000] * 20_000  # 20 MB: far more than the socket buffers hold
    async with Server(refuse, rcvbuf=8192) as server:
        async with HttpClient(timeout_secs=20) as client:
            answer = await client.request("POST", server.url, {}, streamed(parts, []), keep=100)
    assert (answer.status, answer.body) == (413, b"big")


@pytest.mark.parametrize("known_sizes", [False, True])
async def test_a_large_body_to_a_slow_reader_arrives_whole_and_in_order(known_sizes):
    # the socket takes only part of most writev calls: the rest goes through the transport, in order
    rng = random.Random(7)
    parts = [f"{i:06d}".encode() * rng.randint(1, 400) for i in range(5000)]  # ~6 MB
    groups = [(parts[i : i + 150], sum(map(len, parts[i : i + 150]))) for i in range(0, len(parts), 150)]
    received: list[Request] = []
    async with Server(answering(OK, OK, received=received, chunk=32768), rcvbuf=8192) as server:
        async with HttpClient(timeout_secs=60) as client:
            for _ in range(2):  # the second on the kept connection, after a body that filled it
                body = streamed(parts, groups if known_sizes else [])
                answer = await client.request("POST", server.url, {}, body, keep=10)
                assert answer.status == 200
    assert [r.body == b"".join(parts) for r in received] == [True, True]


def test_unsent_is_the_rest_after_the_bytes_sent():
    group = [b"abc", b"de", b"fgh"]
    for sent in range(9):
        assert b"".join(_unsent(group, sent)) == b"abcdefgh"[sent:]
    assert _unsent(group, 3) == [b"de", b"fgh"]  # whole parts are not copied


def test_the_request_head_names_the_host_and_refuses_headers_that_would_break_it():
    head = request_head("POST", Endpoint.parse("http://logs.example:8080/a/b?c=d"), {"User-Agent": "mine"}, 12)
    assert head == (
        b"POST /a/b?c=d HTTP/1.1\r\nHost: logs.example:8080\r\nUser-Agent: mine\r\nContent-Length: 12\r\n\r\n"
    )
    assert b"Host: [::1]\r\n" in request_head("POST", Endpoint.parse("https://[::1]/"), {}, 0)
    for name, value in (("X-Bad", "a\r\nInjected: 1"), ("X Bad", "v"), ("", "v"), ("X:Bad", "v")):
        with pytest.raises(ValueError):
            request_head("POST", Endpoint.parse("http://h/"), {name: value}, 0)
    with pytest.raises(ValueError):
        Endpoint.parse("ftp://h/")


async def test_credentials_in_the_uri_are_sent_as_basic_auth():
    received: list[Request] = []
    async with Server(answering(OK, received=received)) as server:
        uri = server.url.replace("http://", "http://us%40er:p%3Ass@")
        async with HttpClient(timeout_secs=10) as client:
            await client.request("POST", uri, {}, b"x", keep=10)
    assert received[0].headers["authorization"] == "Basic " + base64.b64encode(b"us@er:p:ss").decode()


def padded(feeder: Feeder, count: int) -> list:
    events = feeder.events(1, count)
    events = [type(e)(e.message + " " + "p" * 500, e.stream, e.timestamp, e.ctx) for e in events]
    feeder.sent = {events[0].ctx.fields["file"]: [e.message for e in events]}
    return events


async def test_a_large_body_over_tls_is_joined_and_arrives_whole(tls_receiver, pki):
    # TLS: the socket must not be written behind the TLS layer's back
    feeder = Feeder()
    events = padded(feeder, 1500)  # ~1 MB: several writev-sized groups
    tls = TlsConfig(ca_file=str(pki / "ca.pem"), crt_file=str(pki / "client.pem"), key_file=str(pki / "client.key"))
    config = make_config(tls_receiver.url, tls=tls, batch=BatchConfig(max_events=2000, timeout_secs=0.05))
    await run_sink(config, [feeder.batch(events)])
    assert [len(entry.body) > 256 * 1024 for entry in tls_receiver.accepted] == [True]
    assert delivered(tls_receiver) == feeder.sent and feeder.all_acked()


async def test_a_sink_request_larger_than_the_socket_buffers_arrives_whole():
    received: list[Request] = []
    async with Server(answering(OK, received=received, chunk=8192), rcvbuf=8192) as server:
        feeder = Feeder()
        events = padded(feeder, 12000)  # ~8 MB in one request
        config = make_config(server.url, batch=BatchConfig(max_events=20000, timeout_secs=0.05))
        sink = await run_sink(config, [feeder.batch(events)])
    assert len(received) == 1 and len(received[0].body) > 1_000_000
    lines = [json.loads(line) for line in received[0].body.splitlines()]
    assert [line["message"] for line in lines] == next(iter(feeder.sent.values()))
    assert sink.events_sent == 12000 and feeder.all_acked()
