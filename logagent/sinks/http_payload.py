"""Request bodies on the wire: an aiohttp payload written in the fewest copies.

Kept apart from :mod:`logagent.sinks.compression` so that building and
compressing bodies does not need aiohttp (a config check imports those).
"""

from __future__ import annotations

from aiohttp.abc import AbstractStreamWriter
from aiohttp.payload import Payload

from logagent.sinks.compression import APART_BYTES, StreamedBody


class BodyPayload(Payload):
    """A request body for aiohttp, written in the fewest socket sends and copies.

    A small body goes out with the headers in one send: each send on a busy
    node costs far more than copying a small body. A large body (``APART_BYTES``
    and more) is written after the headers rather than joined with them, which
    would copy all of it once more (Python < 3.12.9). A :class:`StreamedBody`
    is written piece by piece, each write waiting while the socket is behind.
    Unlike aiohttp's ``BytesPayload`` it does not warn about bodies over 1 MiB.
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
            for piece in value.pieces():
                await writer.write(piece)
            return
        if content_length is not None:
            value = value[:content_length]
        if len(value) >= APART_BYTES:
            await writer.write(b"")  # the headers alone
        await writer.write(value)
