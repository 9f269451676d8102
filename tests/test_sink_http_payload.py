"""Uncompressed bodies written to the socket unjoined: what the socket does not take is not lost or reordered."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from logagent.sinks.http_config import BatchConfig, TlsConfig
from logagent.sinks.http_payload import IOV_MAX, _unsent, write_parts
from tests.test_sink_http import Feeder, delivered, make_config, pki, run_sink, tls_receiver  # noqa: F401 - fixtures


class FakeTransport:
    """A plain TCP transport as ``write_parts`` sees it; its own buffer is empty."""

    def __init__(self, sock: socket.socket, buffered: list[int]) -> None:
        self._sock = sock
        self._buffered = buffered

    def get_extra_info(self, name: str) -> object:
        return {"socket": self._sock}.get(name)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return self._buffered.pop(0) if self._buffered else 0


class FakeWriter:
    """aiohttp's writer: what it is given goes out after what writev already sent."""

    chunked = False
    on_body_write = None

    def __init__(self, sock: socket.socket, buffered: list[int]) -> None:
        self.transport = FakeTransport(sock, buffered)
        self._sock = sock
        self.writes = 0

    async def write(self, data: bytes) -> None:
        if data:
            self.writes += 1
            self._sock.setblocking(True)
            self._sock.sendall(data)
            self._sock.setblocking(False)


def drain(sock: socket.socket, into: bytearray) -> None:
    while chunk := sock.recv(1 << 16):
        into += chunk


@pytest.mark.parametrize("buffered", [[], [0, 100, 0]])  # the transport holding bytes sends through the writer
async def test_parts_arrive_whole_and_in_order_when_the_socket_takes_only_some(buffered):
    ours, peer = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # writev sends a part of each group
    ours.setblocking(False)
    received = bytearray()
    reader = threading.Thread(target=drain, args=(peer, received))
    reader.start()
    parts = [f"{i:05d}".encode() * (1 + i % 50) for i in range(3 * IOV_MAX + 7)]
    writer = FakeWriter(ours, list(buffered))
    try:
        await asyncio.wait_for(write_parts(writer, parts), 20)
    finally:
        ours.close()
        reader.join(20)
        peer.close()
    assert bytes(received) == b"".join(parts)
    assert writer.writes >= 1  # some of it did not fit the socket at once


def test_unsent_is_the_rest_after_the_bytes_sent():
    group = [b"abc", b"de", b"fgh"]
    for sent in range(9):
        assert b"".join(_unsent(group, sent)) == b"abcdefgh"[sent:]
    assert _unsent(group, 3) == [b"de", b"fgh"]  # whole parts are not copied


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


class SlowReader:
    """An HTTP/1.1 server that reads bodies a few KB at a time, so the client's socket fills up."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                body = bytearray()
                while len(body) < length:
                    body += await reader.read(min(8192, length - len(body)))
                    await asyncio.sleep(0.0005)
                self.bodies.append(bytes(body))
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


async def test_a_large_body_to_a_slow_reader_arrives_whole_through_a_real_connection():
    server = SlowReader()
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)  # inherited by the accepted socket
    listener.bind(("127.0.0.1", 0))
    tcp = await asyncio.start_server(server.handle, sock=listener)
    port = listener.getsockname()[1]
    feeder = Feeder()
    events = padded(feeder, 12000)  # ~8 MB in one request: more than the socket buffers hold
    config = make_config(f"http://127.0.0.1:{port}/in", batch=BatchConfig(max_events=20000, timeout_secs=0.05))
    try:
        sink = await run_sink(config, [feeder.batch(events)])
    finally:
        tcp.close()
        await tcp.wait_closed()
    assert len(server.bodies) == 1 and len(server.bodies[0]) > 1_000_000
    lines = [json.loads(line) for line in server.bodies[0].splitlines()]
    assert [line["message"] for line in lines] == next(iter(feeder.sent.values()))
    assert sink.events_sent == 12000 and feeder.all_acked()
