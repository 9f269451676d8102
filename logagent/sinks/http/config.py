"""Configuration of the ``http`` sink: typed option groups with defaults.

Each option group is its own Struct so that an unknown key is reported where it
is. ``HttpSinkConfig.validate()`` checks what types cannot express and raises
``ValueError("<key.path>: <reason>")`` with the path relative to the sink (the
config layer prefixes ``sinks.<id>.``). Secrets (tokens, passwords, header
values, credentials in the URI) are masked in every ``repr``.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import msgspec

from logagent.sinks.common_config import CodecEncoding, CommonSinkOptions, FramingConfig, check_fields
from logagent.sinks.http.compression import Compression, validate_level
from logagent.sinks.http.dead_letter import DEFAULT_MAX_BYTES as DEAD_LETTER_MAX_BYTES

MASK = "***"

#: Headers the sink sets itself; a user value would corrupt the request.
_RESERVED_HEADERS = frozenset({"content-length", "content-encoding", "transfer-encoding", "host"})


class BatchConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    max_events: int = 2000
    #: uncompressed body size; 10 MB like Vector: fewer, larger requests cost less CPU per record
    max_bytes: int = 10_000_000
    timeout_secs: float = 1.0


class RequestConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    timeout_secs: float = 30.0
    #: requests in flight at most; Vector's ``adaptive`` runs our default (4), ``none`` is 1
    concurrency: int | Literal["adaptive", "none"] = 4
    headers: dict[str, str] = {}
    #: Vector's retry keys, the same as ``retry.max_attempts`` (attempts after the first),
    #: ``retry.initial_backoff_secs`` and ``retry.max_backoff_secs``
    retry_attempts: int | None = None
    retry_initial_backoff_secs: float | None = None
    retry_max_duration_secs: float | None = None
    retry_jitter_mode: Literal["Full"] = "Full"
    #: Vector's request rate limit (refused unless unlimited, see ``_validate_request``)
    rate_limit_num: int | None = None
    rate_limit_duration_secs: float = 1.0
    adaptive_concurrency: dict[str, float] | None = None

    def __post_init__(self) -> None:
        if self.concurrency == "adaptive":
            self.concurrency = 4
        elif self.concurrency == "none":
            self.concurrency = 1

    def __repr__(self) -> str:
        masked = {name: MASK for name in self.headers}
        return (
            f"RequestConfig(timeout_secs={self.timeout_secs!r}, "
            f"concurrency={self.concurrency!r}, headers={masked!r}, retry_attempts={self.retry_attempts!r}, "
            f"retry_initial_backoff_secs={self.retry_initial_backoff_secs!r}, "
            f"retry_max_duration_secs={self.retry_max_duration_secs!r})"
        )


class RetryConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    initial_backoff_secs: float = 0.5
    max_backoff_secs: float = 30.0
    #: None retries without limit: the files on disk are the buffer.
    max_attempts: int | None = None


class DeadLetterConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    #: cap of ``<data_dir>/dead-letter/<sink>.ndjson`` and its ``.1`` together
    max_bytes: int = DEAD_LETTER_MAX_BYTES


class AuthConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    strategy: Literal["bearer", "basic"]
    token: str | None = None
    token_file: str | None = None
    user: str | None = None
    password: str | None = None

    def __repr__(self) -> str:
        def mask(value: str | None) -> str:
            return "None" if value is None else repr(MASK)

        return (
            f"AuthConfig(strategy={self.strategy!r}, token={mask(self.token)}, "
            f"token_file={self.token_file!r}, user={self.user!r}, password={mask(self.password)})"
        )


class TlsConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    ca_file: str | None = None
    crt_file: str | None = None
    key_file: str | None = None
    verify: bool = True
    #: Vector's: check the server's certificate chain / its name (each false only with ``verify`` kept)
    verify_certificate: bool = True
    verify_hostname: bool = True
    #: Vector's: the password of an encrypted ``key_file``
    key_pass: str | None = None
    alpn_protocols: list[str] | None = None
    #: Vector's SNI override (refused, see ``_validate_tls``)
    server_name: str | None = None
    #: the OpenShift logging operator's Vector keys: the lowest TLS version, and the cipher suites
    #: (OpenSSL names, comma-separated; TLS 1.3 suites are always those of the TLS library)
    min_tls_version: Literal["VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13"] | None = None
    ciphersuites: str | None = None

    def __repr__(self) -> str:
        return (f"TlsConfig(ca_file={self.ca_file!r}, crt_file={self.crt_file!r}, key_file={self.key_file!r}, "
                f"verify={self.verify!r}, verify_certificate={self.verify_certificate!r}, "
                f"verify_hostname={self.verify_hostname!r}, key_pass={None if self.key_pass is None else MASK!r})")


class RetryStrategy(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Vector's ``retry_strategy``: only ``default`` (408, 429 and 5xx are retried, see ``retry.py``)."""

    type: Literal["default", "all", "none", "custom"] = "default"
    status_codes: list[int] = []


class HttpOptions(CommonSinkOptions, forbid_unknown_fields=True, kw_only=True):
    """The ``http`` sink's option groups, which the backend sinks share (``backend_config``)."""

    compression: Compression = "none"
    #: None: the throughput default of the chosen compression (gzip 1, zstd 1)
    compression_level: int | None = None
    batch: BatchConfig = msgspec.field(default_factory=BatchConfig)
    request: RequestConfig = msgspec.field(default_factory=RequestConfig)
    retry: RetryConfig = msgspec.field(default_factory=RetryConfig)
    dead_letter: DeadLetterConfig = msgspec.field(default_factory=DeadLetterConfig)
    auth: AuthConfig | None = None
    tls: TlsConfig = msgspec.field(default_factory=TlsConfig)
    #: Vector's: accepted (templates here render names and labels, never paths)
    dangerously_allow_unconfined_template_resolution: bool = False

    def __post_init__(self) -> None:
        """Vector's ``request.retry_*`` keys are our ``retry`` group's."""
        request = self.request
        vector = {"max_attempts": request.retry_attempts, "initial_backoff_secs": request.retry_initial_backoff_secs,
                  "max_backoff_secs": request.retry_max_duration_secs}
        given = {name: value for name, value in vector.items() if value is not None}
        if given:
            self.retry = msgspec.structs.replace(self.retry, **given)


class HttpSinkConfig(HttpOptions, tag="http", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    uri: str
    method: Literal["post", "put"] = "post"
    #: ours: ``ndjson`` or ``json`` (an array); Vector's mapping: ``codec: json`` (an array, or
    #: ndjson with ``framing.method: newline_delimited``) or ``text`` (the messages, one a line)
    encoding: Literal["ndjson", "json"] | CodecEncoding = "ndjson"
    framing: FramingConfig | None = None
    #: Vector's: text around a JSON array body (``{"data":`` and ``}``), with ``json`` bodies only
    payload_prefix: str = ""
    payload_suffix: str = ""
    retry_strategy: RetryStrategy = msgspec.field(default_factory=lambda: RetryStrategy())

    @property
    def body_format(self) -> str:
        """``ndjson``, ``json`` (one array) or ``text``."""
        encoding = self.encoding
        if isinstance(encoding, str):
            return encoding
        if encoding.codec == "json" and (self.framing is None or self.framing.json_array):
            return "json"
        return "ndjson" if encoding.codec == "json" else "text"

    def __repr__(self) -> str:
        return (
            f"HttpSinkConfig(inputs={self.inputs!r}, uri={redact_uri(self.uri)!r}, "
            f"method={self.method!r}, encoding={self.encoding!r}, compression={self.compression!r}, "
            f"compression_level={self.compression_level!r}, batch={self.batch!r}, request={self.request!r}, "
            f"retry={self.retry!r}, dead_letter={self.dead_letter!r}, "
            f"auth={self.auth!r}, tls={self.tls!r})"
        )

    def _validate_body(self) -> None:
        """``encoding``, ``framing``, ``payload_prefix``/``payload_suffix`` fit together."""
        if isinstance(self.encoding, str):
            if self.framing is not None:
                raise ValueError("framing: goes with Vector's encoding mapping (encoding: {codec: json}); "
                                 "encoding: ndjson is already one record a line")
        else:
            self.encoding.checked_codec(("json", "text"))
            if self.encoding.json.pretty:
                raise ValueError("encoding.json.pretty: a pretty-printed record spans lines; the http sink sends one "
                                 "record a line or a compact array")
            check_fields(self.encoding)
            if self.framing is not None:
                self.framing.validate()
                if self.framing.json_array and self.encoding.codec != "json":
                    raise ValueError("framing.method: character_delimited makes a JSON array, with codec json only")
        if (self.payload_prefix or self.payload_suffix) and self.body_format != "json":
            raise ValueError("payload_prefix: only with a JSON array body (encoding: json, or codec json without framing)")

    def validate(self) -> None:
        """Raise ``ValueError("<key>: <reason>")`` on the first inconsistent option."""
        _validate_uri(self.uri)
        self.validate_common()
        self._validate_body()
        if self.retry_strategy.status_codes:
            raise ValueError("retry_strategy.status_codes: retry strategies other than default are not implemented: "
                             "408, 429 and 5xx answers are retried, other answers go to the dead-letter file")
        if self.retry_strategy.type != "default":
            raise ValueError("retry_strategy.type: retry strategies other than default are not implemented: 408, 429 "
                             "and 5xx answers are retried, other answers go to the dead-letter file")
        validate_level(self.compression, self.compression_level)
        _validate_batch(self.batch)
        _validate_request(self.request, has_auth=self.auth is not None)
        _validate_retry(self.retry)
        if self.dead_letter.max_bytes < 1024:
            raise ValueError("dead_letter.max_bytes: must be at least 1024")
        if self.auth is not None:
            _validate_auth(self.auth)
            if _uri_has_credentials(self.uri):
                raise ValueError("uri: credentials in the URI conflict with auth; use one of them")
        _validate_tls(self.tls)


def redact_uri(uri: str) -> str:
    """The URI with any user:password part masked, safe for logs."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return MASK
    if parts.username is None and parts.password is None:
        return uri
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, f"{MASK}@{host}", parts.path, parts.query, parts.fragment))


def _uri_has_credentials(uri: str) -> bool:
    parts = urlsplit(uri)
    return parts.username is not None or parts.password is not None


def _validate_uri(uri: str) -> None:
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise ValueError(f"uri: not a valid URI ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"uri: scheme must be http or https, got {parts.scheme or 'none'!r}")
    if not parts.hostname:
        raise ValueError("uri: has no host")


def _validate_batch(batch: BatchConfig) -> None:
    if batch.max_events < 1:
        raise ValueError("batch.max_events: must be at least 1")
    if batch.max_bytes < 1:
        raise ValueError("batch.max_bytes: must be at least 1")
    if not batch.timeout_secs > 0:
        raise ValueError("batch.timeout_secs: must be greater than 0")


def _validate_request(request: RequestConfig, has_auth: bool) -> None:
    if request.rate_limit_num is not None:
        raise ValueError("request.rate_limit_num: request rate limits are not implemented; limit the requests in "
                         "flight with request.concurrency (the sources wait while the sink is busy)")
    if request.adaptive_concurrency is not None:
        raise ValueError("request.adaptive_concurrency: adaptive concurrency is not implemented; "
                         "request.concurrency is a fixed number of requests in flight")
    if not request.timeout_secs > 0:
        raise ValueError("request.timeout_secs: must be greater than 0")
    if request.concurrency < 1:
        raise ValueError("request.concurrency: must be at least 1")
    for name in request.headers:
        lowered = name.lower()
        if lowered in _RESERVED_HEADERS:
            raise ValueError(f"request.headers.{name}: is set by the sink and cannot be configured")
        if lowered == "authorization" and has_auth:
            raise ValueError(f"request.headers.{name}: conflicts with auth; use one of them")
        if not is_header_name(name):
            raise ValueError(f"request.headers.{name}: not a valid header name")
        value = request.headers[name]
        if "{{" in value:
            raise ValueError(f"request.headers.{name}: templated header values are not implemented (a request "
                             "carries many records); give a fixed value")
        if not (value.isascii() and value.isprintable()):  # no line breaks either
            raise ValueError(f"request.headers.{name}: the value must be printable ASCII on one line")


def is_header_name(name: str) -> bool:
    """Whether ``name`` can be sent as an HTTP header name as it is."""
    return bool(name) and not any(c in name for c in " \t\r\n:")


def _validate_retry(retry: RetryConfig) -> None:
    if not retry.initial_backoff_secs > 0:
        raise ValueError("retry.initial_backoff_secs: must be greater than 0")
    if retry.max_backoff_secs < retry.initial_backoff_secs:
        raise ValueError("retry.max_backoff_secs: must be at least retry.initial_backoff_secs")
    if retry.max_attempts is not None and retry.max_attempts < 1:
        raise ValueError("retry.max_attempts: must be at least 1, or null for no limit")


def _validate_auth(auth: AuthConfig) -> None:
    if auth.strategy == "bearer":
        if auth.user is not None:
            raise ValueError("auth.user: only valid with strategy basic")
        if auth.password is not None:
            raise ValueError("auth.password: only valid with strategy basic")
        if auth.token is None and auth.token_file is None:
            raise ValueError("auth.token: strategy bearer needs token or token_file")
        if auth.token is not None and auth.token_file is not None:
            raise ValueError("auth.token_file: set either token or token_file, not both")
        if auth.token is not None and not auth.token.strip():
            raise ValueError("auth.token: is empty")
        if auth.token_file is not None and not auth.token_file:
            raise ValueError("auth.token_file: is empty")
    else:
        if auth.token is not None:
            raise ValueError("auth.token: only valid with strategy bearer")
        if auth.token_file is not None:
            raise ValueError("auth.token_file: only valid with strategy bearer")
        if not auth.user:
            raise ValueError("auth.user: strategy basic needs a user")
        if ":" in auth.user:
            raise ValueError("auth.user: must not contain ':'")


def _validate_tls(tls: TlsConfig) -> None:
    if tls.key_file is not None and tls.crt_file is None:
        raise ValueError("tls.key_file: needs tls.crt_file")
    if tls.server_name is not None:
        raise ValueError("tls.server_name: not implemented: the name checked and sent (SNI) is the URI's host")

