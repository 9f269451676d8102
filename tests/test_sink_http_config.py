"""The http sink's options, retry timing, credentials and TLS context."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
import time
from email.utils import formatdate

import msgspec
import pytest

from logagent.sinks.http.auth import Credentials, CredentialsUnavailable, Redactor
from logagent.sinks.http.sink import HttpSinkConfig
from logagent.sinks.http.config import AuthConfig, TlsConfig, redact_uri
from logagent.sinks.http.retry import MAX_RETRY_AFTER_SECS, Backoff, is_retryable_status, parse_retry_after
from logagent.sinks.http.tls import build_ssl_context

FULL = {
    "type": "http",
    "inputs": ["user_only"],
    "uri": "https://logs.example.internal/ingest",
    "method": "put",
    "encoding": "json",
    "compression": "gzip",
    "batch": {"max_events": 10, "max_bytes": 4096, "timeout_secs": 0.5},
    "request": {"timeout_secs": 3, "concurrency": 2, "headers": {"X-Scope-OrgID": "tenant-a"}},
    "retry": {"initial_backoff_secs": 0.1, "max_backoff_secs": 2, "max_attempts": 5},
    "auth": {"strategy": "bearer", "token_file": "/var/run/secrets/ship/token"},
    "tls": {"ca_file": "/etc/ssl/ca.pem", "verify": True},
}


def convert(data: dict) -> HttpSinkConfig:
    return msgspec.convert(data, HttpSinkConfig, strict=False)


def with_changes(**changes) -> dict:
    data = {**FULL, **changes}
    return {k: v for k, v in data.items() if v is not None}


def test_full_config_converts_and_validates():
    config = convert(FULL)
    config.validate()
    assert config.method == "put"
    assert config.batch.max_events == 10
    assert config.request.headers == {"X-Scope-OrgID": "tenant-a"}
    assert config.retry.max_attempts == 5
    assert config.auth is not None and config.auth.token_file == "/var/run/secrets/ship/token"
    assert config.tls.ca_file == "/etc/ssl/ca.pem"


def test_defaults():
    config = convert({"type": "http", "inputs": ["a"], "uri": "http://127.0.0.1:9/x"})
    config.validate()
    assert (config.method, config.encoding, config.compression) == ("post", "ndjson", "none")
    assert (config.batch.max_events, config.batch.max_bytes, config.batch.timeout_secs) == (2000, 10_000_000, 1.0)
    assert (config.request.concurrency, config.request.timeout_secs) == (4, 30.0)
    assert config.retry.max_attempts is None
    assert config.auth is None
    assert config.tls.verify is True


@pytest.mark.parametrize(
    "data, path",
    [
        ({**FULL, "batch": {"max_event": 1}}, "max_event"),
        ({**FULL, "tls": {"verify_certs": False}}, "verify_certs"),
        ({**FULL, "compression": "brotli"}, "compression"),
        ({**FULL, "method": "get"}, "method"),
    ],
)
def test_unknown_or_bad_values_are_rejected(data, path):
    with pytest.raises(msgspec.ValidationError, match=path):
        convert(data)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"uri": "ftp://host/x"}, "uri: scheme must be http or https"),
        ({"uri": "logs.example.internal/ingest"}, "uri: scheme must be http or https"),
        ({"uri": "http:///ingest"}, "uri: has no host"),
        ({"uri": "http://host:99999/"}, "uri: not a valid URI"),
        ({"request": {"concurrency": 0}}, "request.concurrency: must be at least 1"),
        ({"request": {"timeout_secs": 0}}, "request.timeout_secs: must be greater than 0"),
        ({"request": {"headers": {"Content-Encoding": "br"}}}, "request.headers.Content-Encoding: is set by the sink"),
        ({"request": {"headers": {"Authorization": "x"}}}, "request.headers.Authorization: conflicts with auth"),
        ({"request": {"headers": {"X-Tenant": "a\r\nX-Other: b"}}}, "request.headers.X-Tenant: the value must be"),
        ({"batch": {"max_events": 0}}, "batch.max_events: must be at least 1"),
        ({"batch": {"timeout_secs": 0}}, "batch.timeout_secs: must be greater than 0"),
        ({"retry": {"initial_backoff_secs": 2, "max_backoff_secs": 1}}, "retry.max_backoff_secs: must be at least"),
        ({"retry": {"max_attempts": 0}}, "retry.max_attempts: must be at least 1"),
        ({"auth": {"strategy": "bearer"}}, "auth.token: strategy bearer needs token or token_file"),
        ({"auth": {"strategy": "bearer", "token": "a", "token_file": "/t"}}, "auth.token_file: set either"),
        ({"auth": {"strategy": "bearer", "token": "abcd", "user": "u"}}, "auth.user: only valid with strategy basic"),
        ({"auth": {"strategy": "basic", "password": "p"}}, "auth.user: strategy basic needs a user"),
        ({"auth": {"strategy": "basic", "user": "u", "token": "t"}}, "auth.token: only valid with strategy bearer"),
        ({"auth": {"strategy": "basic", "user": "u", "token_file": "/t"}}, "auth.token_file: only valid"),
        ({"uri": "https://u:p@host/x"}, "uri: credentials in the URI conflict with auth"),
        ({"tls": {"key_file": "/k.pem"}}, "tls.key_file: needs tls.crt_file"),
        ({"compression": "gzip", "compression_level": 12}, "compression_level: gzip levels are 0..9, got 12"),
        ({"compression": "none", "compression_level": 3}, "compression_level: only valid with compression gzip"),
        ({"dead_letter": {"max_bytes": 10}}, "dead_letter.max_bytes: must be at least 1024"),
    ],
)
def test_validate_names_the_key(changes, message):
    config = convert(with_changes(**changes))
    with pytest.raises(ValueError) as info:
        config.validate()
    assert str(info.value).startswith(message)


def test_repr_masks_secrets():
    data = {
        **FULL,
        "uri": "https://logs.example.internal/ingest",
        "request": {"headers": {"X-Api-Key": "header-secret-1"}},
        "auth": {"strategy": "basic", "user": "shipper", "password": "password-secret-2"},
    }
    config = convert(data)
    text = repr(config) + str(config)
    assert "header-secret-1" not in text and "password-secret-2" not in text
    assert "shipper" in text and "X-Api-Key" in text
    bearer = AuthConfig(strategy="bearer", token="token-secret-3")
    assert "token-secret-3" not in repr(bearer)
    config_with_uri_credentials = convert({"type": "http", "inputs": [], "uri": "https://me:uri-secret-4@h/x"})
    assert "uri-secret-4" not in repr(config_with_uri_credentials)
    assert redact_uri("https://me:uri-secret-4@h:8443/x?q=1") == "https://***@h:8443/x?q=1"


def test_retryable_statuses():
    assert [s for s in (200, 400, 401, 404, 408, 413, 429, 500, 503, 599) if is_retryable_status(s)] == [
        408,
        429,
        500,
        503,
        599,
    ]


def test_parse_retry_after():
    assert parse_retry_after(None) is None
    assert parse_retry_after("") is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("99999") == MAX_RETRY_AFTER_SECS
    now = time.time()
    assert parse_retry_after(formatdate(now + 120, usegmt=True), now=now) == pytest.approx(120, abs=1)
    assert parse_retry_after(formatdate(now - 120, usegmt=True), now=now) == 0.0


def test_backoff_is_full_jitter_below_an_exponential_ceiling():
    import random

    backoff = Backoff(0.5, 8.0, rng=random.Random(3))
    for failures, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (5, 8.0), (40, 8.0), (10_000, 8.0)]:
        delays = [backoff.delay(failures) for _ in range(200)]
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling / 2  # spread over the whole range, not a fixed delay


def test_token_file_is_reread_when_it_changes(tmp_path):
    token_file = tmp_path / "token"
    redactor = Redactor()
    credentials = Credentials(AuthConfig(strategy="bearer", token_file=str(token_file)), redactor)
    with pytest.raises(CredentialsUnavailable, match="auth.token_file"):
        credentials.header()
    token_file.write_text("first-token\n")
    assert credentials.header() == "Bearer first-token"
    # Kubernetes rotates projected tokens by swapping a symlink: a new inode.
    replacement = tmp_path / "token.new"
    replacement.write_text("second-token")
    os.replace(replacement, token_file)
    assert credentials.header() == "Bearer second-token"
    token_file.unlink()
    assert credentials.header() == "Bearer second-token"  # keeps the last good token
    assert redactor.redact("a first-token b second-token") == "a *** b ***"


def test_basic_and_static_bearer_credentials():
    redactor = Redactor()
    basic = Credentials(AuthConfig(strategy="basic", user="shipper", password="pw-secret"), redactor)
    assert basic.header() == "Basic c2hpcHBlcjpwdy1zZWNyZXQ="
    bearer = Credentials(AuthConfig(strategy="bearer", token=" tok-secret\n"), redactor)
    assert bearer.header() == "Bearer tok-secret"
    assert redactor.redact("pw-secret c2hpcHBlcjpwdy1zZWNyZXQ= tok-secret") == "*** *** ***"


def test_tls_context_verifies_unless_told_not_to(tmp_path):
    context = build_ssl_context(TlsConfig())
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    insecure = build_ssl_context(TlsConfig(verify=False))
    assert insecure.verify_mode == ssl.CERT_NONE and not insecure.check_hostname
    with pytest.raises(ValueError, match=r"^tls.ca_file: cannot load"):
        build_ssl_context(TlsConfig(ca_file=str(tmp_path / "missing.pem")))
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate")
    with pytest.raises(ValueError, match=r"^tls.crt_file: cannot load"):
        build_ssl_context(TlsConfig(crt_file=str(garbage)))


YAML = """
sinks:
  ship:
    type: http
    inputs: [user_only]
    uri: https://logs.example.internal/ingest
    compression: gzip
    batch: {max_events: 1000, max_bytes: 1048576, timeout_secs: 1}
    request: {timeout_secs: 30, concurrency: 4, headers: {X-Scope-OrgID: tenant-a}}
    retry: {initial_backoff_secs: 0.5, max_backoff_secs: 30}
    auth: {strategy: bearer, token: "${SHIP_TOKEN}"}
    tls: {verify: true}
"""


def parse_sink(text: str, env: dict[str, str]):
    config_module = pytest.importorskip("logagent.config")
    return config_module, config_module.parse_config(text, env)


def test_config_layer_reads_the_sink_and_prefixes_errors():
    config_module, config = parse_sink(YAML, {"SHIP_TOKEN": "env-token-secret"})
    sink = config.sinks["ship"]
    assert isinstance(sink, HttpSinkConfig)
    assert sink.auth is not None and sink.auth.token == "env-token-secret"
    assert "env-token-secret" not in repr(config)
    with pytest.raises(config_module.ConfigError, match=r"sinks\.ship\.request\.concurrency"):
        parse_sink(YAML.replace("concurrency: 4", "concurrency: 0"), {"SHIP_TOKEN": "x"})
    with pytest.raises(config_module.ConfigError, match=r"sinks\.ship\.auth\.token_file"):
        parse_sink(YAML.replace('token: "${SHIP_TOKEN}"', 'token: a, token_file: /t'), {})


def test_the_config_module_does_not_import_the_wire_libraries():
    # A console-only agent must not load aiohttp or the compressors to read
    # its config; they are imported by the sink itself, on first use.
    code = (
        "import sys, logagent.sinks.http.config as c\n"
        "c.HttpSinkConfig(inputs=['a'], uri='http://x', compression='zstd', compression_level=3).validate()\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'aiohttp', 'httptools', 'zstandard', 'isal'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_compressors_import_their_library_when_built():
    from logagent.sinks.http.compression import make_compressor

    for kind in ("gzip", "zstd"):
        compress = make_compressor(kind)
        assert compress is not None and compress([b"x" * 100]) != b"x" * 100
