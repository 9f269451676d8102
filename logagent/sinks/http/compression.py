"""Request bodies: built from pre-encoded records and compressed.

gzip bodies are built and compressed in worker threads (ISA-L and zlib
release the GIL while they compress, and a gzip compressor is made per body);
zstd bodies on the event loop, where the one compressor context, reused body
after body, stays warm and no piece waits for the GIL to change hands: per
CPU-second that measured cheaper for each (benchmarks/README.md, "http").
Small bodies are built inline: a thread hop costs more than it saves.
"""

from __future__ import annotations

import asyncio
import threading
import zlib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from logagent.sinks.http.protocol import HttpProtocol

Compression = Literal["none", "gzip", "zstd"]

#: Chosen from the measured table in benchmarks/README.md ("compression-levels"):
#: on the benchmark's enriched records gzip 1 (ISA-L) and zstd 1 cost under
#: 1 µs of CPU a line; gzip 3 and 6 cost 15-20 times that for 25-35 % fewer
#: bytes, and zstd 1 is already smaller than gzip 6 (9.4 against 22.5 B/line).
DEFAULT_LEVELS: dict[str, int] = {"gzip": 1, "zstd": 1}
#: gzip levels up to this one use ISA-L (its levels 0-3) when it is installed;
#: higher levels use zlib.
ISAL_MAX_LEVEL = 3
LEVEL_RANGES: dict[str, tuple[int, int]] = {"gzip": (0, 9), "zstd": (-7, 22)}
CONTENT_ENCODINGS: dict[str, str] = {"gzip": "gzip", "zstd": "zstd"}

#: Bodies (before compression) below this size are compressed inline.
INLINE_BODY_BYTES = 32 * 1024
#: Codecs whose larger bodies go to the worker threads; the others are compressed on the event loop.
#: Interleaved runs against the console sink (lines per CPU-second, median per round): zstd 0.71 in the
#: threads, 0.75-0.78 on the loop; gzip 0.73-0.74 in the threads, 0.64 on the loop.
THREADED_CODECS = frozenset({"gzip"})
#: Records per piece fed to a compressor (a few hundred kilobytes).
PIECE_RECORDS = 128
#: Bodies from this size on are not joined with the request headers.
APART_BYTES = 256 * 1024
#: zstd bodies up to this size (uncompressed) get their content size in the frame header
ZSTD_SIZED_BYTES = 4 << 20
#: Worker threads per sink: two cores are the common DaemonSet budget.
WORKER_THREADS = 2


class Compressor(Protocol):
    """Takes the pieces of a body and, when known, the body's exact size; returns the compressed body."""

    def __call__(self, pieces: Iterable[bytes], size: int | None = None) -> bytes: ...


def _isal_zlib() -> Any | None:
    """ISA-L's zlib module (the same gzip format, several times faster than zlib), if installed.

    Imported when a gzip sink is built, not with this module: a config
    without one does not pay for it at start-up.
    """
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - a platform without isal wheels
        return None
    return isal_zlib


def gzip_compressor(level: int) -> Compressor:
    # wbits 31: a gzip member, written with a zero mtime, so a retried body
    # is byte-identical.
    isal_zlib = _isal_zlib() if level <= ISAL_MAX_LEVEL else None
    if isal_zlib is not None:
        new = partial(isal_zlib.compressobj, level, isal_zlib.DEFLATED, 31)
    else:
        new = partial(zlib.compressobj, level, zlib.DEFLATED, 31)

    def compress(pieces: Iterable[bytes], size: int | None = None) -> bytes:
        compressor = new()
        out = [compressor.compress(piece) for piece in pieces]
        out.append(compressor.flush())
        return b"".join(out)

    return compress


def zstd_compressor(level: int) -> Compressor:
    """One zstd frame per body, from a compressor context reused per thread.

    The pieces are streamed into the frame, each compressed right after it
    was joined (still in the cache), never joined into one body first:
    joining megabytes (on fresh pages each time) cost more CPU than
    compressing them (benchmarks/README.md, "compression-levels"). The frame
    header carries the content size (``write_content_size``): the size the
    caller knows (a protocol's ``body_size``), or else, for a body up to
    ``ZSTD_SIZED_BYTES``, the size of its pieces, held until the last one is
    made; a larger body of unknown size is streamed as it comes, so it is
    never whole in memory, and its header has no size.
    """
    # A ZstdCompressor must not be used by two threads at once: one per
    # thread, reused (a new one per body costs ~13% of the compression time).
    import zstandard  # here, not at module import: only zstd sinks need it

    local = threading.local()

    def compress(pieces: Iterable[bytes], size: int | None = None) -> bytes:
        compressor = getattr(local, "compressor", None)
        if compressor is None:
            compressor = local.compressor = zstandard.ZstdCompressor(level=level, write_content_size=True)
        pieces = iter(pieces)  # the rest goes on where a loop stopped
        held: list[bytes] = []
        if size is None:
            size = 0
            for piece in pieces:
                held.append(piece)
                size += len(piece)
                if size > ZSTD_SIZED_BYTES:
                    size = -1  # not known: zstandard's "unknown content size"
                    break
        stream = compressor.compressobj(size=size)
        out = [stream.compress(piece) for piece in held]
        out += [stream.compress(piece) for piece in pieces]
        out.append(stream.flush())
        return b"".join(out)

    return compress


def make_compressor(kind: Compression, level: int | None = None) -> Compressor | None:
    """The compress function for ``kind`` (None for ``none``); ``level`` None: the default."""
    if kind == "none":
        return None
    chosen = DEFAULT_LEVELS[kind] if level is None else level
    return gzip_compressor(chosen) if kind == "gzip" else zstd_compressor(chosen)


def validate_level(kind: Compression, level: int | None) -> None:
    """Raise ``ValueError("compression_level: ...")`` for a level ``kind`` does not have."""
    if level is None:
        return
    if kind == "none":
        raise ValueError("compression_level: only valid with compression gzip or zstd")
    low, high = LEVEL_RANGES[kind]
    if not low <= level <= high:
        raise ValueError(f"compression_level: {kind} levels are {low}..{high}, got {level}")


class BodyBuilder:
    """Builds and compresses request bodies, large gzip ones in worker threads.

    A compressed body is built piece by piece (``PIECE_RECORDS`` records at a
    time), so only the compressed body is ever whole in memory. At most
    ``WORKER_THREADS`` bodies are in the works at once; the sink's lanes bound
    how many requests (records, body) exist at all.
    """

    def __init__(self, name: str, kind: Compression, level: int | None) -> None:
        self.kind = kind
        self.content_encoding = CONTENT_ENCODINGS.get(kind)
        self._compress = make_compressor(kind, level)
        self._executor: ThreadPoolExecutor | None = None
        self._name = name

    def _compressed(self, protocol: HttpProtocol, parts: Sequence[bytes], nbytes: int) -> bytes:
        assert self._compress is not None
        return self._compress(protocol.body_pieces(parts, PIECE_RECORDS), protocol.body_size(parts, nbytes))

    async def build(
        self,
        protocol: HttpProtocol,
        parts: Sequence[bytes],
        nbytes: int,
        groups: Sequence[tuple[Sequence[bytes], int]] = (),
    ) -> bytes | StreamedBody:
        """The body of the records in ``parts`` (about ``nbytes`` uncompressed), compressed as configured.

        Uncompressed and large, it is a :class:`StreamedBody` when the
        protocol knows its size: never whole in memory, its parts written
        unjoined when they are the body (:meth:`HttpProtocol.body_parts`), as
        ``groups`` (see :class:`StreamedBody`) when given.
        """
        if self._compress is None:
            size = protocol.body_size(parts, nbytes) if nbytes >= APART_BYTES else None
            if size is not None:
                pieces = partial(protocol.body_pieces, parts, PIECE_RECORDS)
                body_parts = protocol.body_parts(parts)
                return StreamedBody(pieces, size, body_parts, groups if body_parts is not None else ())
            return protocol.build_body(parts)  # one join, cheaper than a thread hop
        if nbytes < INLINE_BODY_BYTES or self.kind not in THREADED_CODECS:
            return self._compressed(protocol, parts, nbytes)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(WORKER_THREADS, thread_name_prefix=f"http-{self._name}")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._compressed, protocol, parts, nbytes)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


@dataclass(frozen=True)
class StreamedBody:
    """An uncompressed body generated anew, piece by piece, for each attempt."""

    pieces: Callable[[], Iterable[bytes]]
    size: int
    #: when the body is exactly these parts one after another: written unjoined
    parts: Sequence[bytes] | None = None
    #: ``parts`` again, as consecutive groups of at most IOV_MAX - 1 with their byte counts
    #: (empty: not known): each goes to the socket as it is, without measuring or slicing
    groups: Sequence[tuple[Sequence[bytes], int]] = ()

    def __len__(self) -> int:
        return self.size
