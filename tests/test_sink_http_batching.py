"""Request building, lane assignment and split-batch acknowledgement of the http sink."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from logagent.acks import AckGroup, Batch
from logagent.encoding import encode_json
from logagent.event import FileContext, LogEvent
from logagent.sinks.http import batching
from logagent.sinks.http.batching import BatchTracker, KeyRouter, LaneBatcher, RequestBatch
from logagent.sinks.http.compression import gzip_compressor, make_compressor, validate_level, zstd_compressor
from logagent.sinks.http.protocol import protocol_for

CTX = FileContext({"file": "/var/log/pods/ns_p_u/c/0.log", "source_type": "kubernetes_logs"})


def events(n: int, size: int = 10) -> list[LogEvent]:
    return [LogEvent(f"{i:0{size}d}", "stdout", None, CTX) for i in range(n)]


def released_batch(log: list[str], name: str) -> Batch:
    return Batch([], [AckGroup(on_done=lambda: log.append(name))], 0)


def test_router_keeps_a_key_on_its_lane_while_it_has_pending_events():
    router = KeyRouter(3)
    assert router.assign("a", 5) == 0
    assert router.assign("b", 1) == 1
    assert router.assign("c", 1) == 2
    assert router.assign("a", 1) == 0  # still pending: same lane, however loaded
    assert router.loads == [6, 1, 1]
    router.finished("a", 5)
    assert router.assign("d", 1) == 0  # least loaded (ties: lowest lane)
    router.finished("d", 1)
    router.assign("b", 3)
    router.finished("a", 1)
    assert router.loads == [0, 4, 1] and router.pending_keys() == 2  # b, c
    # a has nothing outstanding now and moves to the least loaded lane
    assert router.assign("a", 1) == 0
    router.assign("e", 1)
    assert router.assign("f", 1) == 2
    assert router.loads == [2, 4, 2]


def test_batcher_cuts_by_events_and_bytes_and_sends_oversized_events_alone():
    record_size = len(encode_json(events(1)[0])) + 1
    batcher = LaneBatcher(0, max_events=3, max_bytes=2 + 2 * record_size, dropped=Counter())
    tracker = BatchTracker(Batch([], [], 0))
    ready: list[RequestBatch] = []
    batcher.add(events(5), tracker, "k", ready, lambda: 1.0)
    assert [len(r) for r in ready] == [2, 2] and len(batcher.current) == 1
    assert all(r.nbytes <= 2 + 2 * record_size for r in ready)
    big = LaneBatcher(0, max_events=3, max_bytes=10, dropped=Counter())
    ready = []
    big.add(events(2), tracker, "k", ready, lambda: 1.0)
    assert [len(r) for r in ready] == [1] and len(big.current) == 1  # each alone, none lost
    few = LaneBatcher(0, max_events=3, max_bytes=1 << 20, dropped=Counter())
    ready = []
    few.add(events(7), tracker, "k", ready, lambda: 1.0)
    assert [len(r) for r in ready] == [3, 3] and len(few.current) == 1
    assert few.deadline == 1.0
    assert len(few.take()) == 1 and few.current is None and few.deadline is None


def test_bodies_are_ndjson_or_a_json_array():
    parts = [b'{"a":', b'"x\\ny"}\n', b'{"a":2}', b"\n"]
    for encoding, expected in [("ndjson", b'{"a":"x\\ny"}\n{"a":2}\n'), ("json", b'[{"a":"x\\ny"},{"a":2}]')]:
        assert protocol_for(encoding).build_body(parts) == expected
    assert protocol_for("ndjson").record(parts[:2]) == b'{"a":"x\\ny"}'


def test_split_batch_is_released_after_its_last_part():
    log: list[str] = []
    batcher = LaneBatcher(0, max_events=2, max_bytes=1 << 20, dropped=Counter())
    tracker = BatchTracker(released_batch(log, "batch"))
    ready: list[RequestBatch] = []
    batcher.add(events(3), tracker, "k", ready, lambda: 1.0)
    tracker.part_done()  # the dispatcher placed every event
    parts = ready + [batcher.take()]
    assert [len(p) for p in parts] == [2, 1]
    parts[1].finish()
    assert log == []
    parts[0].finish()
    assert log == ["batch"]


def test_a_request_holds_each_input_batch_once():
    log: list[str] = []
    batcher = LaneBatcher(0, max_events=100, max_bytes=1 << 20, dropped=Counter())
    first, second = BatchTracker(released_batch(log, "first")), BatchTracker(released_batch(log, "second"))
    ready: list[RequestBatch] = []
    batcher.add(events(2), first, "a", ready, lambda: 1.0)
    batcher.add(events(2), first, "b", ready, lambda: 1.0)
    batcher.add(events(1), second, "a", ready, lambda: 1.0)
    first.part_done()
    second.part_done()
    request = batcher.take()
    assert request.trackers == [first, second] and request.keys == {"a": 3, "b": 2}
    request.finish()
    assert log == ["first", "second"]


def test_compression_is_deterministic_so_retries_send_identical_bytes():
    import gzip

    import zstandard

    body = b'{"message":"x"}\n' * 100
    pieces = [body[:700], body[700:]]
    for level in (1, 6):  # ISA-L and zlib
        compress = gzip_compressor(level)
        assert compress(pieces) == compress(pieces)
        assert gzip.decompress(compress(pieces)) == body
    compress = zstd_compressor(3)
    assert compress(pieces) == compress(pieces)
    assert zstandard.ZstdDecompressor().decompressobj().decompress(compress(pieces)) == body
    assert make_compressor("none") is None
    assert len(make_compressor("zstd")(pieces)) < len(body) // 10  # the default level compresses


def test_zstd_writes_one_frame_with_its_content_size_and_streams_large_bodies() -> None:
    import zstandard

    from logagent.sinks.http.compression import ZSTD_SIZED_BYTES

    small = [b'{"message":"x %d"}\n' % n for n in range(1000)]
    frame = zstd_compressor(1)(iter(small))
    assert zstandard.frame_content_size(frame) == len(b"".join(small))
    assert zstandard.ZstdDecompressor().decompress(frame) == b"".join(small)
    large = [bytes([n % 251]) * 65536 for n in range(ZSTD_SIZED_BYTES // 65536 + 3)]
    frame = zstd_compressor(1)(iter(large))  # streamed as it comes: one frame, its size not in the header
    assert zstandard.ZstdDecompressor().decompressobj().decompress(frame) == b"".join(large)
    assert zstandard.get_frame_parameters(frame).content_size == zstandard.CONTENTSIZE_UNKNOWN
    frame = zstd_compressor(1)(large)  # a list, not an iterator: still each piece once
    assert zstandard.ZstdDecompressor().decompressobj().decompress(frame) == b"".join(large)


def test_zstd_streams_a_body_of_known_size_with_the_size_in_its_header() -> None:
    import zstandard

    from logagent.sinks.http.compression import ZSTD_SIZED_BYTES

    large = [bytes([n % 251]) * 65536 for n in range(ZSTD_SIZED_BYTES // 65536 + 3)]
    size = sum(map(len, large))
    frame = zstd_compressor(1)(iter(large), size)  # over ZSTD_SIZED_BYTES, yet sized: the size was known
    assert zstandard.frame_content_size(frame) == size
    assert zstandard.ZstdDecompressor().decompress(frame) == b"".join(large)
    with pytest.raises(zstandard.ZstdError):  # a wrong size is the caller's bug: never a wrong frame
        zstd_compressor(1)(iter(large), size - 1)


async def test_body_builder_gives_the_compressor_the_protocols_body_size() -> None:
    import zstandard

    from logagent.sinks.http.compression import BodyBuilder

    parts = [b'{"n":%d}' % n if i == 0 else b"\n" for n in range(20_000) for i in (0, 1)]
    for encoding in ("ndjson", "json"):
        protocol = protocol_for(encoding)
        builder = BodyBuilder("test", "zstd", None)
        try:
            body = await builder.build(protocol, parts, sum(map(len, parts)))
        finally:
            builder.close()
        whole = protocol.build_body(parts)
        assert zstandard.frame_content_size(body) == len(whole)
        assert zstandard.ZstdDecompressor().decompress(body) == whole


async def test_large_gzip_bodies_go_to_the_worker_threads_and_zstd_ones_stay_on_the_loop() -> None:
    import gzip
    import threading

    import zstandard

    from logagent.sinks.http import compression
    from logagent.sinks.http.compression import INLINE_BODY_BYTES, BodyBuilder

    parts = [b'{"n":%d}' % n if i == 0 else b"\n" for n in range(20_000) for i in (0, 1)]
    nbytes = sum(map(len, parts))
    assert nbytes >= INLINE_BODY_BYTES
    protocol = protocol_for("ndjson")
    for kind, decompress, threaded in (("gzip", gzip.decompress, True),
                                       ("zstd", zstandard.ZstdDecompressor().decompress, False)):
        builder = BodyBuilder("test", kind, None)
        seen: list[threading.Thread] = []
        compress = builder._compress
        assert compress is not None

        def watched(pieces, size=None, compress=compress):  # type: ignore[no-untyped-def]
            seen.append(threading.current_thread())
            return compress(pieces, size)

        builder._compress = watched
        try:
            body = await builder.build(protocol, parts, nbytes)
        finally:
            builder.close()
        assert decompress(body) == protocol.build_body(parts)
        assert (seen[0] is not threading.main_thread()) is threaded, kind
        assert (kind in compression.THREADED_CODECS) is threaded


def test_body_pieces_concatenate_to_the_body():
    parts = [b'{"n":%d}' % n if i == 0 else b"\n" for n in range(10) for i in (0, 1)]
    for encoding in ("ndjson", "json"):
        protocol = protocol_for(encoding)
        whole = protocol.build_body(parts)
        for per_piece in (1, 3, 10, 11):
            assert b"".join(protocol.body_pieces(parts, per_piece)) == whole
        assert protocol.body_size(parts, sum(map(len, parts))) == len(whole)
    assert json.loads(protocol_for("json").build_body(parts)) == [{"n": n} for n in range(10)]


def test_compression_levels_are_checked_per_kind():
    validate_level("gzip", 9)
    validate_level("zstd", -7)
    validate_level("none", None)
    for kind, level, message in [
        ("gzip", 10, "compression_level: gzip levels are 0..9, got 10"),
        ("zstd", 23, "compression_level: zstd levels are -7..22, got 23"),
        ("none", 1, "compression_level: only valid with compression gzip or zstd"),
    ]:
        with pytest.raises(ValueError) as error:
            validate_level(kind, level)
        assert str(error.value) == message


@pytest.mark.parametrize("block", [1022, 4, 5])  # parts per measured block: runs span many of the small ones
def test_cuts_keep_every_record_in_order_within_both_limits(block, monkeypatch):
    import random

    monkeypatch.setattr(batching, "SIZE_BLOCK", block)
    rng = random.Random(7)
    for _ in range(200):
        max_events, max_bytes = rng.randint(1, 12), rng.randint(20, 400)
        batcher = LaneBatcher(0, max_events=max_events, max_bytes=max_bytes, dropped=Counter())
        tracker = BatchTracker(Batch([], [], 0))
        ready: list[RequestBatch] = []
        sent: list[bytes] = []
        for _ in range(rng.randint(1, 6)):
            run = [LogEvent("m" * rng.randint(0, 80), "stdout", None, CTX) for _ in range(rng.randint(1, 30))]
            sent += [encode_json(event) + b"\n" for event in run]
            batcher.add(run, tracker, "k", ready, lambda: 1.0)
        if batcher.current is not None:
            ready.append(batcher.take())
        records = []
        for request in ready:
            joined = [b"".join(request.parts[i : i + 2]) for i in range(0, len(request.parts), 2)]
            assert len(joined) == request.events <= max_events
            assert request.nbytes == sum(map(len, joined))
            assert request.nbytes <= max_bytes or request.events == 1  # an oversized record goes alone
            # the writer trusts these sizes: each group's is its byte count, and the groups are the parts
            assert all(size == sum(map(len, group)) and 0 < len(group) <= block for group, size in request.groups)
            assert [part for group, _ in request.groups for part in group] == request.parts
            records += joined
        assert records == sent
