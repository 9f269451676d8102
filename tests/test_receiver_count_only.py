"""The benchmarks' count-only receiver counts what a checking receiver counts, for every Content-Encoding."""

from __future__ import annotations

import gzip
import json

import aiohttp
import pytest
import zstandard

from receivers.ndjson import Receiver


def ndjson(count: int, size: int = 1800) -> bytes:
    return b"".join(json.dumps({"n": n, "message": "x" * size}).encode() + b"\n" for n in range(count))


ENCODINGS = {
    None: lambda body: body,
    "gzip": lambda body: gzip.compress(body, 1),
    "zstd": lambda body: zstandard.ZstdCompressor(level=1).compress(body),
}


async def post_all(url: str, bodies: list[tuple[bytes, str | None, str]]) -> list[int]:
    statuses = []
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        for body, encoding, content_type in bodies:
            headers = {"Content-Type": content_type}
            if encoding is not None:
                headers["Content-Encoding"] = encoding
            async with session.post(url, data=body, headers=headers) as response:
                await response.read()
                statuses.append(response.status)
    return statuses


@pytest.mark.parametrize("encoding", list(ENCODINGS))
async def test_count_only_counts_records_and_wire_bytes_like_the_checking_receiver(encoding):
    # several MB per body: the count-only receiver sees it in many chunks
    bodies = [ENCODINGS[encoding](ndjson(count)) for count in (1, 700, 3000)]
    counts = {}
    for count_only in (False, True):
        receiver = Receiver(keep_bodies=False, count_only=count_only)
        await receiver.start()
        try:
            statuses = await post_all(receiver.url, [(body, encoding, "application/x-ndjson") for body in bodies])
        finally:
            await receiver.stop()
        assert statuses == [200, 200, 200]
        counts[count_only] = (receiver.accepted_records, receiver.accepted_bytes)
    assert counts[True] == counts[False] == (3701, sum(map(len, bodies)))


async def test_count_only_still_refuses_unknown_encodings_and_counts_no_failed_request():
    receiver = Receiver(keep_bodies=False, count_only=True)
    receiver.fail_next(503)
    await receiver.start()
    try:
        statuses = await post_all(receiver.url, [
            (ndjson(5), "br", "application/x-ndjson"),
            (ndjson(5), None, "application/x-ndjson"),  # answered 503: not accepted
            (b"not gzip at all", "gzip", "application/x-ndjson"),
            (ndjson(7), None, "application/x-ndjson"),
        ])
    finally:
        await receiver.stop()
    assert statuses == [415, 503, 400, 200]
    assert receiver.accepted_records == 7


async def test_count_only_reads_json_arrays_whole():
    receiver = Receiver(keep_bodies=False, count_only=True)
    await receiver.start()
    try:
        body = json.dumps([{"n": n} for n in range(9)]).encode()
        assert await post_all(receiver.url, [(body, None, "application/json")]) == [200]
    finally:
        await receiver.stop()
    assert receiver.accepted_records == 9
