"""The http sink against a real HTTP receiver: bodies, auth, retries, order, acks."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import ssl
import subprocess
from collections import defaultdict

import pytest
import structlog

from logagent.acks import AckGroup, Batch
from logagent.encoding import encode_json
from logagent.event import FileContext, LogEvent
from logagent.queue import BatchQueue
from logagent.sinks.http.auth import Redactor
from logagent.sinks.http.sink import HttpSink, HttpSinkConfig
from logagent.sinks.http.config import AuthConfig, BatchConfig, RequestConfig, RetryConfig, TlsConfig
from receivers.ndjson import Receiver

TEST_TIMEOUT = 30

FAST_RETRY = RetryConfig(initial_backoff_secs=0.01, max_backoff_secs=0.05)


@pytest.fixture
async def receiver():
    server = Receiver(timeout_sleep=2.0)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


def context(file_no: int) -> FileContext:
    return FileContext(
        {
            "file": f"/var/log/pods/ns_p{file_no}_u{file_no}/c/0.log",
            "source_type": "kubernetes_logs",
            "kubernetes": {"pod_name": f"p{file_no}", "pod_namespace": "ns", "container_name": "c"},
        }
    )


class Feeder:
    """Builds numbered events per file and batches whose acks are recorded."""

    def __init__(self) -> None:
        self.contexts: dict[int, FileContext] = {}
        self.next_seq: dict[int, int] = defaultdict(int)
        self.sent: dict[str, list[str]] = defaultdict(list)
        self.acked: list[int] = []
        self.batches = 0

    def events(self, file_no: int, n: int) -> list[LogEvent]:
        ctx = self.contexts.setdefault(file_no, context(file_no))
        out = []
        for _ in range(n):
            seq = self.next_seq[file_no]
            self.next_seq[file_no] += 1
            message = f"file {file_no} line {seq}"
            self.sent[ctx.fields["file"]].append(message)
            out.append(LogEvent(message, "stdout", "2026-12-02T10:00:00.000000001Z", ctx))
        return out

    def batch(self, events: list[LogEvent], on_done=None) -> Batch:
        number = self.batches
        self.batches += 1

        def done() -> None:
            self.acked.append(number)
            if on_done is not None:
                on_done()

        return Batch(events, [AckGroup(on_done=done)], sum(len(e.message) for e in events))

    def all_acked(self) -> bool:
        return sorted(self.acked) == list(range(self.batches))


def make_config(uri: str, **options) -> HttpSinkConfig:
    options.setdefault("retry", FAST_RETRY)
    options.setdefault("batch", BatchConfig(max_events=50, timeout_secs=0.05))
    return HttpSinkConfig(inputs=["in"], uri=uri, **options)


async def run_sink(config: HttpSinkConfig, batches: list[Batch], *, sink: HttpSink | None = None) -> HttpSink:
    """Runs a sink until it drained a closed inbox holding ``batches``."""
    sink = sink or HttpSink("ship", config)
    inbox = BatchQueue()
    for batch in batches:
        await inbox.put(batch)
    inbox.close()
    await sink.start()
    try:
        async with asyncio.timeout(TEST_TIMEOUT):
            await sink.run(inbox)
    finally:
        await sink.stop()
    return sink


def delivered(receiver: Receiver) -> dict[str, list[str]]:
    """Messages per file in arrival order, each accepted body counted once."""
    seen: set[bytes] = set()
    per_file: dict[str, list[str]] = defaultdict(list)
    for entry in receiver.accepted:
        if entry.body in seen:
            continue
        seen.add(entry.body)
        for record in entry.records():
            per_file[record["file"]].append(record["message"])
    return dict(per_file)


async def test_ndjson_body_headers_and_acks(receiver):
    feeder = Feeder()
    batches = [feeder.batch(feeder.events(1, 3) + feeder.events(2, 2))]
    config = make_config(receiver.url, request=RequestConfig(headers={"X-Scope-OrgID": "tenant-a"}))
    sink = await run_sink(config, batches)

    assert len(receiver.accepted) == 2  # two files: two lanes
    records = []
    for entry in receiver.accepted:
        assert entry.method == "POST" and entry.path == "/ingest"
        assert entry.headers["Content-Type"] == "application/x-ndjson"
        assert entry.headers["X-Scope-OrgID"] == "tenant-a"
        assert "Content-Encoding" not in entry.headers
        assert entry.body.endswith(b"\n") and b"\n\n" not in entry.body
        records += entry.records()
    by_message = {r["message"]: r for r in records}
    assert by_message["file 1 line 0"] == {
        "file": "/var/log/pods/ns_p1_u1/c/0.log",
        "source_type": "kubernetes_logs",
        "kubernetes": {"pod_name": "p1", "pod_namespace": "ns", "container_name": "c"},
        "message": "file 1 line 0",
        "stream": "stdout",
        "timestamp": "2026-12-02T10:00:00.000000001Z",
    }
    assert delivered(receiver) == feeder.sent
    assert feeder.all_acked()
    assert sink.events_sent == 5 and sink.requests["2xx"] == 2 and sink.bytes_sent > 0
    assert sum(sink.retries.values()) == 0 and not sink.dropped_events


async def test_json_array_with_gzip_and_put(receiver):
    feeder = Feeder()
    batches = [feeder.batch(feeder.events(1, 120))]
    config = make_config(receiver.url, method="put", encoding="json", compression="gzip")
    sink = await run_sink(config, batches)

    assert [e.method for e in receiver.accepted] == ["PUT"] * 3  # 120 events by 50
    for entry in receiver.accepted:
        assert entry.headers["Content-Type"] == "application/json"
        assert entry.headers["Content-Encoding"] == "gzip"
        assert entry.raw_size < len(entry.body)  # it really was compressed
        assert isinstance(json.loads(entry.body), list)
    assert [len(e.records()) for e in receiver.accepted] == [50, 50, 20]
    assert delivered(receiver) == feeder.sent
    assert sink.bytes_sent == sum(e.raw_size for e in receiver.accepted)


async def test_max_bytes_splits_requests_and_releases_split_batch_after_all_parts(receiver):
    feeder = Feeder()
    accepted_at_ack: list[int] = []
    events = feeder.events(1, 5)
    batch = feeder.batch(events, on_done=lambda: accepted_at_ack.append(len(delivered_records(receiver))))
    receiver.fail_next("ok", 503, 503)  # the second part needs retries
    # room for two records (each plus its newline) in a body: requests of 2, 2 and 1 events
    max_bytes = 2 + 2 * (len(encode_json(events[0])) + 1)
    config = make_config(receiver.url, batch=BatchConfig(max_events=100, max_bytes=max_bytes, timeout_secs=0.05))
    sink = await run_sink(config, [batch])

    assert [len(e.records()) for e in receiver.accepted] == [2, 2, 1]
    assert accepted_at_ack == [5]  # released only once every part got a 2xx
    assert sum(sink.retries.values()) == 2 and sink.requests["5xx"] == 2


def delivered_records(receiver: Receiver) -> list[dict]:
    return [record for entry in receiver.accepted for record in entry.records()]


async def test_bearer_token_from_file_follows_rotation(receiver, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("token-one\n")
    feeder = Feeder()
    config = make_config(receiver.url, auth=AuthConfig(strategy="bearer", token_file=str(token_file)))
    sink = HttpSink("ship", config)
    inbox = BatchQueue()
    await sink.start()
    task = asyncio.create_task(sink.run(inbox))
    try:
        async with asyncio.timeout(TEST_TIMEOUT):
            await inbox.put(feeder.batch(feeder.events(1, 2)))
            await receiver.wait_for(lambda r: len(r.accepted) == 1)
            replacement = tmp_path / "token.new"
            replacement.write_text("token-two\n")
            replacement.replace(token_file)
            await inbox.put(feeder.batch(feeder.events(1, 2)))
            await receiver.wait_for(lambda r: len(r.accepted) == 2)
            inbox.close()
            await task
    finally:
        task.cancel()
        await sink.stop()
    assert [e.headers["Authorization"] for e in receiver.accepted] == ["Bearer token-one", "Bearer token-two"]


async def test_static_bearer_and_basic_auth(receiver):
    feeder = Feeder()
    await run_sink(
        make_config(receiver.url, auth=AuthConfig(strategy="bearer", token="static-token")),
        [feeder.batch(feeder.events(1, 1))],
    )
    await run_sink(
        make_config(receiver.url, auth=AuthConfig(strategy="basic", user="shipper", password="pw")),
        [feeder.batch(feeder.events(1, 1))],
    )
    assert [e.headers["Authorization"] for e in receiver.accepted] == [
        "Bearer static-token",
        "Basic c2hpcHBlcjpwdw==",  # shipper:pw
    ]


async def test_random_failures_lose_nothing_and_keep_order_per_file(receiver):
    feeder = Feeder()
    receiver.fail_randomly(
        seed=7,
        rate=0.35,
        actions=[500, 503, ("retry_after", 429, 0), ("retry_after", 503, "0"), 408, "reset", "timeout"],
    )
    batches = []
    for round_no in range(40):
        events = []
        for file_no in range(6):
            events += feeder.events(file_no, 1 + (round_no * 7 + file_no) % 9)
        batches.append(feeder.batch(events))
    config = make_config(
        receiver.url,
        batch=BatchConfig(max_events=20, timeout_secs=0.02),
        request=RequestConfig(concurrency=4, timeout_secs=0.5),
    )
    sink = await run_sink(config, batches)

    assert delivered(receiver) == feeder.sent  # complete, and in order per file
    assert feeder.all_acked()
    failed_attempts = sum(1 for e in receiver.received if e.status != 200)
    assert sum(sink.retries.values()) == failed_attempts > 0
    assert not sink.dropped_events
    # Duplicates only come from retried requests: a request whose answer was
    # lost (timeout) was recorded by the receiver and sent again, byte-identical.
    bodies = [e.body for e in receiver.accepted]
    timeouts = sum(1 for e in receiver.accepted if e.status is None)  # answer never arrived
    assert timeouts > 0
    assert len(bodies) - len(set(bodies)) == timeouts


async def test_rejected_request_is_dropped_logged_counted_and_released(receiver):
    feeder = Feeder()
    receiver.fail_next(400, 400)
    batches = [feeder.batch(feeder.events(1, 3)), feeder.batch(feeder.events(1, 3)), feeder.batch(feeder.events(1, 3))]
    config = make_config(
        receiver.url, batch=BatchConfig(max_events=3, timeout_secs=0.05), request=RequestConfig(concurrency=1)
    )
    with structlog.testing.capture_logs() as logs:
        sink = await run_sink(config, batches)

    assert sink.dropped_events == {"http_400": 6}
    assert sink.requests["4xx"] == 2 and sum(sink.retries.values()) == 0
    assert feeder.all_acked()  # dropped batches are released too
    assert [r["message"] for r in delivered_records(receiver)] == ["file 1 line 6", "file 1 line 7", "file 1 line 8"]
    errors = [entry for entry in logs if entry["log_level"] == "error"]
    assert len(errors) == 1  # once per kind, the counter has the rest
    assert errors[0]["status"] == 400 and errors[0]["reason"] == "http_400"
    assert errors[0]["answer"].startswith("error 400 ") and len(errors[0]["answer"]) == 200
    assert errors[0]["component_id"] == "ship"


async def test_max_attempts_drops_after_the_last_attempt(receiver):
    feeder = Feeder()
    receiver.fail_next(500, 500, 500)
    config = make_config(receiver.url, retry=RetryConfig(initial_backoff_secs=0.01, max_backoff_secs=0.01, max_attempts=2))
    batches = [feeder.batch(feeder.events(1, 2)), feeder.batch(feeder.events(1, 2))]
    with structlog.testing.capture_logs() as logs:
        sink = await run_sink(config, batches)
    # Both batches end up in one request (same lane, timeout not yet reached)
    # or in two; either way the first request is dropped after 2 attempts.
    assert sink.dropped_events["retries_exhausted"] >= 2
    assert feeder.all_acked()
    assert any(e["reason"] == "retries_exhausted" for e in logs if e["log_level"] == "error")


async def test_receiver_down_then_back_loses_nothing(receiver):
    feeder = Feeder()
    await receiver.stop()
    config = make_config(receiver.url, request=RequestConfig(concurrency=2, timeout_secs=1))
    sink = HttpSink("ship", config)
    inbox = BatchQueue()
    await sink.start()
    task = asyncio.create_task(sink.run(inbox))
    try:
        async with asyncio.timeout(TEST_TIMEOUT):
            for _ in range(5):
                await inbox.put(feeder.batch(feeder.events(1, 4) + feeder.events(2, 4)))
            while sink.requests["error"] < 6:
                await asyncio.sleep(0.01)
            assert not feeder.acked
            await receiver.start()  # same port
            inbox.close()
            await task
    finally:
        task.cancel()
        await sink.stop()
    assert delivered(receiver) == feeder.sent
    assert feeder.all_acked()


async def test_concurrent_lanes_keep_order_per_file(receiver):
    feeder = Feeder()
    # Four files arrive together: every lane gets one, and the receiver lets no
    # request through until four are in flight at once.
    receiver.require_concurrency(4)
    first = feeder.batch([e for n in range(4) for e in feeder.events(n, 5)])
    batches = [first] + [feeder.batch([e for n in range(8) for e in feeder.events(n, 3)]) for _ in range(30)]
    receiver.fail_randomly(seed=11, rate=0.2, actions=[503, "reset"])
    receiver.delay_randomly(seed=12, max_secs=0.02)
    config = make_config(
        receiver.url, batch=BatchConfig(max_events=7, timeout_secs=0.01), request=RequestConfig(concurrency=4)
    )
    sink_task = asyncio.create_task(run_sink(config, batches))
    async with asyncio.timeout(TEST_TIMEOUT):
        await receiver.wait_for(lambda r: r.max_in_handler >= 4)
    receiver._barrier = None
    await sink_task
    assert receiver.max_in_handler >= 4
    assert delivered(receiver) == feeder.sent
    assert feeder.all_acked()


async def test_acks_fire_only_after_2xx(receiver):
    feeder = Feeder()
    receiver.hold()
    receiver.fail_next(503)
    config = make_config(receiver.url)
    sink = HttpSink("ship", config)
    inbox = BatchQueue()
    await sink.start()
    task = asyncio.create_task(sink.run(inbox))
    try:
        async with asyncio.timeout(TEST_TIMEOUT):
            await inbox.put(feeder.batch(feeder.events(1, 3)))
            # first attempt answered 503, the retry is held by the receiver
            await receiver.wait_for(lambda r: len(r.received) == 2 and r.in_handler == 1)
            assert feeder.acked == []
            receiver.release()
            await receiver.wait_for(lambda r: len(r.accepted) == 1)
            inbox.close()
            await task
    finally:
        task.cancel()
        await sink.stop()
    assert feeder.acked == [0]


async def test_partial_batch_is_flushed_on_close(receiver):
    feeder = Feeder()
    config = make_config(receiver.url, batch=BatchConfig(max_events=1000, timeout_secs=3600))
    await run_sink(config, [feeder.batch(feeder.events(1, 3))])
    assert delivered(receiver) == feeder.sent and feeder.all_acked()


async def test_cancelled_sink_releases_nothing_unacknowledged(receiver):
    feeder = Feeder()
    receiver.fail_randomly(seed=1, rate=1.0, actions=[503])
    config = make_config(receiver.url)
    sink = HttpSink("ship", config)
    inbox = BatchQueue()
    await inbox.put(feeder.batch(feeder.events(1, 3)))
    await sink.start()
    task = asyncio.create_task(sink.run(inbox))
    try:
        async with asyncio.timeout(TEST_TIMEOUT):
            await receiver.wait_for(lambda r: len(r.received) >= 3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await sink.stop()
    assert feeder.acked == [] and sink.events_sent == 0


async def test_no_secret_reaches_the_logs(receiver, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("file-token-secret-1")
    feeder = Feeder()
    # A careless server echoes the request headers in its error answers.
    receiver.fail_next(("echo", 503), ("echo", 400), "reset", ("echo", 401))
    configs = [
        make_config(receiver.url, auth=AuthConfig(strategy="bearer", token_file=str(token_file))),
        make_config(receiver.url, auth=AuthConfig(strategy="basic", user="shipper", password="basic-secret-2")),
    ]
    with structlog.testing.capture_logs() as logs:
        for config in configs:
            sink = await run_sink(config, [feeder.batch(feeder.events(1, 2)), feeder.batch(feeder.events(2, 2))])
            logs.append({"config": repr(config), "sink": repr(vars(sink))})
    text = repr(logs)
    assert "answer" in text and "shipper" in text  # the logs are there ...
    for secret in ("file-token-secret-1", "basic-secret-2", "c2hpcHBlcjpiYXNpYy1zZWNyZXQtMg=="):
        assert secret not in text  # ... without secrets
    # the echoing server really did see them
    assert any("file-token-secret-1" in str(e.headers) for e in receiver.received)


def test_redactor_ignores_tiny_values():
    redactor = Redactor()
    redactor.add("a")
    redactor.add("")
    assert redactor.redact("a cat") == "a cat"


def openssl(*args: str, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, a server certificate for 127.0.0.1 and a client certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    d = tmp_path_factory.mktemp("pki")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=test-ca", cwd=d)  # fmt: skip
    for name, extension in [("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")]:
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/CN={name}", cwd=d)  # fmt: skip
        (d / f"{name}.ext").write_text(extension + "\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=d)  # fmt: skip
    return d


@pytest.fixture
async def tls_receiver(pki):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pki / "server.pem", pki / "server.key")
    context.load_verify_locations(pki / "ca.pem")
    context.verify_mode = ssl.CERT_REQUIRED  # mutual TLS: the sink must show its client certificate
    server = Receiver(ssl_context=context)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_tls_with_ca_file_and_client_certificate(tls_receiver, pki):
    feeder = Feeder()
    tls = TlsConfig(ca_file=str(pki / "ca.pem"), crt_file=str(pki / "client.pem"), key_file=str(pki / "client.key"))
    await run_sink(make_config(tls_receiver.url, tls=tls), [feeder.batch(feeder.events(1, 3))])
    assert delivered(tls_receiver) == feeder.sent and feeder.all_acked()


async def test_tls_verification_is_on_by_default(tls_receiver, pki):
    feeder = Feeder()
    # no ca_file: the system CAs do not know the test CA, so every attempt fails
    tls = TlsConfig(crt_file=str(pki / "client.pem"), key_file=str(pki / "client.key"))
    retry = RetryConfig(initial_backoff_secs=0.01, max_backoff_secs=0.01, max_attempts=2)
    sink = await run_sink(make_config(tls_receiver.url, tls=tls, retry=retry), [feeder.batch(feeder.events(1, 3))])
    assert tls_receiver.received == []
    assert sink.dropped_events == {"retries_exhausted": 3} and sink.requests["error"] == 2
    # verify: false accepts the unknown CA
    tls = TlsConfig(crt_file=str(pki / "client.pem"), key_file=str(pki / "client.key"), verify=False)
    await run_sink(make_config(tls_receiver.url, tls=tls), [feeder.batch(feeder.events(1, 3))])
    assert len(delivered_records(tls_receiver)) == 3


async def test_undecodable_text_is_sent_with_replacement_characters(receiver):
    feeder = Feeder()
    events = feeder.events(1, 2)
    # a line that was not UTF-8, decoded with surrogateescape by a parser
    events[0].message = b"bad \xff byte".decode("utf-8", "surrogateescape")
    sink = await run_sink(make_config(receiver.url), [feeder.batch(events)])
    assert [r["message"] for r in delivered_records(receiver)] == ["bad \ufffd byte", "file 1 line 1"]
    assert feeder.all_acked() and not sink.dropped_events


async def test_credentials_in_the_uri_are_sent_and_masked(receiver):
    feeder = Feeder()
    uri = receiver.url.replace("http://", "http://shipper:uri-secret-5@")
    with structlog.testing.capture_logs() as logs:
        receiver.fail_next(("echo", 400))
        await run_sink(make_config(uri), [feeder.batch(feeder.events(1, 1))])
    encoded = base64.b64encode(b"shipper:uri-secret-5").decode()
    assert receiver.received[0].headers["Authorization"] == "Basic " + encoded
    assert logs and "uri-secret-5" not in repr(logs) and encoded not in repr(logs)


async def test_401_after_token_rotation_is_retried_with_the_new_token(receiver, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("old-token")
    feeder = Feeder()

    def rotate() -> None:
        replacement = tmp_path / "token.new"
        replacement.write_text("new-token")
        replacement.replace(token_file)

    receiver.fail_next(("hook", rotate, 401), "ok", 401)
    auth = AuthConfig(strategy="bearer", token_file=str(token_file))
    batch = BatchConfig(max_events=2, timeout_secs=0.05)
    config = make_config(receiver.url, auth=auth, batch=batch, request=RequestConfig(concurrency=1))
    sink = await run_sink(config, [feeder.batch(feeder.events(1, 2)), feeder.batch(feeder.events(2, 2))])
    # the first 401 came with a token that has since been rotated: retried and
    # delivered; the second 401 is a real refusal of the current token: dropped
    assert [(e.headers["Authorization"], e.status) for e in receiver.received] == [
        ("Bearer old-token", 401),
        ("Bearer new-token", 200),
        ("Bearer new-token", 401),
    ]
    assert sink.dropped_events == {"http_401": 2} and sum(sink.retries.values()) == 1
    assert feeder.all_acked()
