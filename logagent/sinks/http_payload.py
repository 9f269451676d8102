"""Request bodies on the wire: an aiohttp payload written in the fewest copies.

Kept apart from :mod:`logagent.sinks.compression` so that building and
compressing bodies does not need aiohttp (a config check imports those).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from aiohttp.abc import AbstractStreamWriter
from aiohttp.client_exceptions import ClientConnectionResetError
from aiohttp.payload import Payload

from logagent.sinks.compression import APART_BYTES, StreamedBody

#: buffers per writev call (the kernel's IOV_MAX)
IOV_MAX = min(os.sysconf("SC_IOV_MAX"), 1024)


class BodyPayload(Payload):
    """A request body for aiohttp, written in the fewest socket sends and copies.

    A small body goes out with the headers in one send: each send on a busy
    node costs far more than copying a small body. A large body (``APART_BYTES``
    and more) is written after the headers rather than joined with them, which
    would copy all of it once more (Python < 3.12.9). A :class:`StreamedBody`
    is written piece by piece, each write waiting while the socket is behind;
    one whose ``parts`` are the body goes to the socket unjoined
    (:func:`write_parts`). Unlike aiohttp's ``BytesPayload`` it does not warn
    about bodies over 1 MiB.
    """

    _value: bytes | StreamedBody

    def __init__(self, value: bytes | StreamedBody) -> None:
        super().__init__(value, content_type=None)
        self._size = len(value)

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        value = self._value
        raw = value if isinstance(value, bytes) else b"".join(value.pieces())
        return raw.decode(encoding, errors)

    async def write(self, writer: AbstractStreamWriter) -> None:
        await self.write_with_length(writer, None)

    async def write_with_length(self, writer: AbstractStreamWriter, content_length: int | None) -> None:
        value = self._value
        if isinstance(value, StreamedBody):
            if value.parts is not None:
                await write_parts(writer, value.parts)
                return
            for piece in value.pieces():
                await writer.write(piece)
            return
        if content_length is not None:
            value = value[:content_length]
        if len(value) >= APART_BYTES:
            await writer.write(b"")  # the headers alone
        await writer.write(value)


async def write_parts(writer: AbstractStreamWriter, parts: Sequence[bytes]) -> None:
    """Write the concatenation of ``parts`` without joining them, when the connection allows.

    On a plain TCP connection whose transport has nothing buffered, ``IOV_MAX``
    parts at a time go straight to the socket with ``os.writev``, like the
    console sink's writes: the kernel copies each part once, where a joined
    body costs a copy of every record (and fresh pages for it) first. Whatever
    the socket does not take, and everything while the transport holds
    unsent bytes, goes through the writer as usual, so the order of bytes on
    the connection is kept. Under TLS, or with a writer that transforms or
    counts the bytes, the parts are joined, ``IOV_MAX`` at a time.
    """
    transport = writer.transport
    sock = transport.get_extra_info("socket") if transport is not None else None
    direct = (
        sock is not None
        and transport.get_extra_info("sslcontext") is None
        # bytes as given, and nobody counting them on the way (upload progress)
        and not getattr(writer, "chunked", True)
        and getattr(writer, "on_body_write", None) is None
    )
    await writer.write(b"")  # the headers, so that nothing can go out before them
    fd = sock.fileno() if direct else -1
    for start in range(0, len(parts), IOV_MAX):
        group = parts[start : start + IOV_MAX]
        if direct:
            if transport.is_closing():
                raise ClientConnectionResetError("Cannot write to closing transport")
            if not transport.get_write_buffer_size():
                sent = _writev(fd, group)
                if sent == sum(map(len, group)):
                    continue
                group = _unsent(group, sent)
        await writer.write(b"".join(group))


def _writev(fd: int, group: Sequence[bytes]) -> int:
    try:
        return os.writev(fd, group)
    except (BlockingIOError, InterruptedError):
        return 0


def _unsent(group: Sequence[bytes], sent: int) -> list[bytes]:
    """The parts of ``group`` after its first ``sent`` bytes."""
    for index, part in enumerate(group):
        if sent < len(part):
            return [part[sent:], *group[index + 1 :]] if sent else list(group[index:])
        sent -= len(part)
    return []
