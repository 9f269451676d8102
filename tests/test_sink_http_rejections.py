"""The http sink's answers that are not worth retrying whole, against a real receiver.

413 splits a request in halves down to one record; a single record still too
large, another 4xx (not 408/429) and exhausted retries go to the dead-letter
file, and the batches are released so the checkpoint moves on. Also the wire
encodings (gzip, zstd) and a protocol that judges each record of a 2xx.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
import structlog

from logagent.sinks.http.dead_letter import DeadLetterFile, dead_letter_path
from logagent.sinks.http.sink import HttpSink
from logagent.sinks.http.config import BatchConfig, RequestConfig, RetryConfig
from logagent.sinks.http.protocol import HttpProtocol, Outcome
from tests.test_sink_http import Feeder, delivered, make_config, receiver, run_sink  # noqa: F401 - fixture

ONE_LANE = RequestConfig(concurrency=1)


def dead_letters(tmp_path: Path, sink: str = "ship") -> list[dict]:
    path = dead_letter_path(tmp_path, sink)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def sink_for(config, tmp_path: Path, protocol: HttpProtocol | None = None) -> HttpSink:
    return HttpSink("ship", config, data_dir=tmp_path, protocol=protocol)


async def test_413_splits_in_halves_until_the_receiver_takes_them(receiver, tmp_path):
    feeder = Feeder()
    batches = [feeder.batch(feeder.events(1, 40)), feeder.batch(feeder.events(2, 40))]
    receiver.limit_body(1500)  # about 10 records of this test
    config = make_config(receiver.url, batch=BatchConfig(max_events=40, timeout_secs=0.05), request=ONE_LANE)
    sink = await run_sink(config, batches, sink=sink_for(config, tmp_path))

    assert delivered(receiver) == feeder.sent  # everything, in order per file
    assert all(len(entry.body) <= 1500 for entry in receiver.accepted)
    assert sink.splits >= 6 and sink.requests["4xx"] == sink.splits
    assert sink.events_sent == 80 and not sink.dropped_events
    assert feeder.all_acked()
    assert dead_letters(tmp_path) == []


async def test_a_single_record_too_large_is_dead_lettered_and_the_rest_delivered(receiver, tmp_path):
    feeder = Feeder()
    events = feeder.events(1, 9)
    big = events[4]
    events[4] = type(big)("x" * 3000, big.stream, big.timestamp, big.ctx)
    receiver.limit_body(2000)
    config = make_config(receiver.url, request=ONE_LANE)
    with structlog.testing.capture_logs() as logs:
        sink = await run_sink(config, [feeder.batch(events)], sink=sink_for(config, tmp_path))

    messages = [record["message"] for entry in receiver.accepted for record in entry.records()]
    assert messages == [f"file 1 line {n}" for n in range(9) if n != 4]
    letters = dead_letters(tmp_path)
    assert [(d["reason"], d["record"]["message"]) for d in letters] == [("http_413", "x" * 3000)]
    assert letters[0]["record"]["file"] == "/var/log/pods/ns_p1_u1/c/0.log"
    assert sink.dropped_events == {"http_413": 1} and sink.dead_lettered_events == {"http_413": 1}
    assert sink.events_sent == 8 and feeder.all_acked()
    errors = [e for e in logs if e["log_level"] == "error"]
    assert len(errors) == 1 and errors[0]["dead_letter"] == str(dead_letter_path(tmp_path, "ship"))


@pytest.mark.parametrize("status", [301, 400, 401, 403, 404, 422])
async def test_other_4xx_dead_letters_the_whole_batch_once_and_moves_on(receiver, tmp_path, status):
    feeder = Feeder()
    good, bad, after = feeder.events(1, 3), feeder.events(1, 3), feeder.events(1, 3)
    receiver.reject_containing(b"file 1 line 4", status)
    config = make_config(receiver.url, batch=BatchConfig(max_events=3, timeout_secs=0.05), request=ONE_LANE)
    batches = [feeder.batch(good), feeder.batch(bad), feeder.batch(after)]
    with structlog.testing.capture_logs() as logs:
        sink = await run_sink(config, batches, sink=sink_for(config, tmp_path))

    messages = [record["message"] for entry in receiver.accepted for record in entry.records()]
    assert messages == [f"file 1 line {n}" for n in (0, 1, 2, 6, 7, 8)]
    assert [(d["reason"], d["record"]["message"]) for d in dead_letters(tmp_path)] == [
        (f"http_{status}", f"file 1 line {n}") for n in (3, 4, 5)
    ]
    assert len(receiver.received) == 3  # the rejected batch was sent once: no split, no retry
    assert sink.dead_lettered_events == {f"http_{status}": 3} and not sink.retries
    assert feeder.all_acked()
    errors = [e for e in logs if e["log_level"] == "error"]
    assert len(errors) == 1 and errors[0]["status"] == status and errors[0]["events"] == 3


async def test_408_and_429_are_retried_not_dead_lettered(receiver, tmp_path):
    feeder = Feeder()
    receiver.fail_next(408, ("retry_after", 429, "0"), 503)
    config = make_config(receiver.url, request=ONE_LANE)
    sink = await run_sink(config, [feeder.batch(feeder.events(1, 5))], sink=sink_for(config, tmp_path))

    assert delivered(receiver) == feeder.sent
    assert sink.retries == {"http_408": 1, "http_429": 1, "http_503": 1}
    assert not sink.dropped_events and dead_letters(tmp_path) == [] and feeder.all_acked()


async def test_exhausted_retries_are_dead_lettered(receiver, tmp_path):
    feeder = Feeder()
    receiver.fail_next(500, 500)
    retry = RetryConfig(initial_backoff_secs=0.01, max_backoff_secs=0.01, max_attempts=2)
    config = make_config(receiver.url, retry=retry, request=ONE_LANE)
    sink = await run_sink(config, [feeder.batch(feeder.events(1, 4))], sink=sink_for(config, tmp_path))

    assert [d["reason"] for d in dead_letters(tmp_path)] == ["retries_exhausted"] * 4
    assert sink.dead_lettered_events == {"retries_exhausted": 4} and feeder.all_acked()


async def test_unwritable_dead_letter_file_counts_and_logs_and_moves_on(receiver, tmp_path):
    feeder = Feeder()
    (tmp_path / "dead-letter").write_text("a file where the directory should be")
    receiver.fail_next(400)
    config = make_config(receiver.url, request=ONE_LANE)
    with structlog.testing.capture_logs() as logs:
        sink = await run_sink(config, [feeder.batch(feeder.events(1, 2))], sink=sink_for(config, tmp_path))

    assert sink.dropped_events == {"http_400": 2} and not sink.dead_lettered_events
    errors = [e for e in logs if e["log_level"] == "error"]
    assert errors[0]["dead_letter"] is None and errors[0]["dead_letter_error"]
    assert feeder.all_acked()


@pytest.mark.parametrize("compression, level", [("gzip", None), ("gzip", 9), ("zstd", None), ("zstd", 19)])
async def test_content_encoding_on_the_wire_is_the_configured_one(receiver, compression, level):
    feeder = Feeder()
    # enough records for a body above INLINE_BODY_BYTES (gzip: built and compressed in a worker thread)
    batches = [feeder.batch(feeder.events(1, 700)), feeder.batch(feeder.events(2, 30))]
    config = make_config(
        receiver.url,
        compression=compression,
        compression_level=level,
        batch=BatchConfig(max_events=1000, timeout_secs=0.05),
    )
    sink = await run_sink(config, batches)

    assert delivered(receiver) == feeder.sent and feeder.all_acked()
    assert {entry.headers["Content-Encoding"] for entry in receiver.accepted} == {compression}
    assert all(entry.raw_size * 3 < len(entry.body) for entry in receiver.accepted)
    assert max(len(entry.body) for entry in receiver.accepted) > 32 * 1024
    assert sink.bytes_sent == sum(entry.raw_size for entry in receiver.accepted)


class PerRecordProtocol(HttpProtocol):
    """Like a bulk API: a 2xx whose answer judges each record (``retry``/``reject`` in the message)."""

    reads_answer = True

    def __init__(self) -> None:
        self.retried: set[bytes] = set()

    def interpret(self, answer: bytes, parts: Sequence[bytes]) -> Outcome | None:
        outcome = Outcome()
        for index, record in enumerate(map(b"".join, zip(parts[::2], parts[1::2]))):
            if b"reject" in record:
                outcome.dead_letter.append((index, "mapping_error"))
            elif b"retry" in record and record not in self.retried:
                self.retried.add(record)
                outcome.retry.append(index)
        return outcome


async def test_a_protocol_can_retry_and_dead_letter_single_records_of_a_2xx(receiver, tmp_path):
    feeder = Feeder()
    events = feeder.events(1, 6)
    for n, word in [(1, "retry"), (3, "reject"), (4, "retry")]:
        events[n] = type(events[n])(f"{word} {n}", events[n].stream, events[n].timestamp, events[n].ctx)
    config = make_config(receiver.url, request=ONE_LANE)
    sink = await run_sink(config, [feeder.batch(events)], sink=sink_for(config, tmp_path, PerRecordProtocol()))

    bodies = [[r["message"] for r in entry.records()] for entry in receiver.accepted]
    assert bodies == [
        ["file 1 line 0", "retry 1", "file 1 line 2", "reject 3", "retry 4", "file 1 line 5"],
        ["retry 1", "retry 4"],
    ]
    assert [(d["reason"], d["record"]["message"]) for d in dead_letters(tmp_path)] == [("mapping_error", "reject 3")]
    assert sink.events_sent == 5 and sink.retries["records"] == 1 and feeder.all_acked()


def test_dead_letter_file_is_capped_dropping_the_oldest_lines_first(tmp_path):
    path = tmp_path / "dl" / "s.ndjson"
    letters = DeadLetterFile(path, max_bytes=2000)
    for n in range(100):
        letters.write([json.dumps({"n": n, "pad": "p" * 20}).encode()], "http_400")
    current = [json.loads(line) for line in path.read_bytes().splitlines()]
    older = [json.loads(line) for line in path.with_name("s.ndjson.1").read_bytes().splitlines()]
    kept = [line["record"]["n"] for line in older + current]
    assert kept == list(range(100 - len(kept), 100))  # the newest, in order
    assert path.stat().st_size <= 1000 and path.with_name("s.ndjson.1").stat().st_size <= 1000
    assert letters.records_written == 100
    assert letters.records_discarded == 100 - len(kept)
    assert {line["reason"] for line in current} == {"http_400"}


def test_dead_letter_file_continues_an_existing_file_and_skips_a_line_above_the_cap(tmp_path):
    path = tmp_path / "s.ndjson"
    DeadLetterFile(path, max_bytes=4096).write([b'{"a":1}'], "r")
    letters = DeadLetterFile(path, max_bytes=4096)
    letters.write([b'{"a":2}', b'"' + b"x" * 5000 + b'"', b'{"a":3}'], "r")
    assert [json.loads(line)["record"] for line in path.read_bytes().splitlines()] == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert letters.records_written == 2 and letters.records_discarded == 1


@pytest.mark.parametrize("encoding", ["ndjson", "json"])
async def test_large_uncompressed_bodies_are_streamed_and_resent_whole(receiver, encoding):
    feeder = Feeder()
    events = feeder.events(1, 800)
    events = [type(e)(e.message + " " + "p" * 500, e.stream, e.timestamp, e.ctx) for e in events]
    feeder.sent = {e.ctx.fields["file"]: [] for e in events[:1]}
    for event in events:
        feeder.sent[event.ctx.fields["file"]].append(event.message)
    receiver.fail_next(503)  # the streamed body is generated again for the retry
    config = make_config(receiver.url, encoding=encoding, batch=BatchConfig(max_events=1000, timeout_secs=0.05))
    sink = await run_sink(config, [feeder.batch(events)])

    assert [len(entry.body) > 256 * 1024 for entry in receiver.received] == [True, True]
    assert receiver.received[0].body == receiver.received[1].body
    assert all(int(entry.headers["Content-Length"]) == len(entry.body) for entry in receiver.received)
    assert delivered(receiver) == feeder.sent and feeder.all_acked()
    assert sink.bytes_sent == len(receiver.accepted[0].body)


class BrokenProtocol(HttpProtocol):
    reads_answer = True

    def interpret(self, answer: bytes, parts: Sequence[bytes]) -> Outcome | None:
        raise ValueError("cannot read " + answer.decode())


async def test_an_answer_the_protocol_cannot_read_is_logged_and_taken_as_delivered(receiver, tmp_path):
    feeder = Feeder()
    config = make_config(receiver.url, request=ONE_LANE)
    with structlog.testing.capture_logs() as logs:
        sink = await run_sink(config, [feeder.batch(feeder.events(1, 3))], sink=sink_for(config, tmp_path, BrokenProtocol()))
    assert sink.events_sent == 3 and feeder.all_acked()
    errors = [e for e in logs if e["log_level"] == "error"]
    assert len(errors) == 1 and "cannot read ok" in errors[0]["error"]
