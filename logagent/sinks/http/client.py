"""The HTTP/1.1 client of the HTTP-based sinks: keep-alive connections, the body written unjoined.

A sink needs little of HTTP: POST a body to one or a few endpoints, one
request at a time per connection, and read the status, ``Retry-After`` and
the answer. aiohttp's ``ClientSession`` costs about 230 us of CPU per request
for what it offers besides (cookies, redirects, auto headers, tracing), a
tenth of a large uncompressed request's whole cost; this client costs a small
share of that. Answers are parsed by ``httptools`` (llhttp, Node.js's parser);
TLS, connecting and flow control are asyncio's.

A connection is used for one request at a time and kept for the next while
the server keeps it alive; idle connections the server closed are dropped
before use. Errors: ``OSError`` (connecting, a connection lost before the
whole answer, :class:`ServerDisconnected`, :class:`StaleConnection` when it
was a kept connection that gave no answer at all), :class:`MalformedAnswer`, and
``TimeoutError`` when a request with its answer takes longer than
``timeout_secs``.
"""

from __future__ import annotations

import asyncio
import base64
import os
import ssl
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import httptools

from logagent import __version__
from logagent.sinks.http.compression import APART_BYTES, StreamedBody
from logagent.sinks.http.config import is_header_name

#: buffers per writev call (the kernel's IOV_MAX)
IOV_MAX = min(os.sysconf("SC_IOV_MAX"), 1024)
USER_AGENT = f"logagent/{__version__}"


class ServerDisconnected(ConnectionError):
    """The server closed the connection before its whole answer arrived."""


class StaleConnection(ServerDisconnected):
    """A kept-alive connection was closed with no answer begun: the server
    most likely closed it while idle, as the request left. Worth sending again
    at once (on a new connection)."""


class MalformedAnswer(Exception):
    """The server's bytes are not an HTTP/1.1 answer."""


@dataclass(frozen=True)
class Endpoint:
    """Where a URI's requests go: the connection's address and the request target."""

    scheme: str
    host: str
    port: int
    #: path and query, as sent on the request line
    target: str
    #: the Host header
    authority: str
    #: ``Basic`` credentials from ``user:password@`` in the URI
    authorization: str | None = None

    @classmethod
    def parse(cls, uri: str) -> Endpoint:
        parts = urlsplit(uri)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URI: {uri!r}")
        default_port = 443 if parts.scheme == "https" else 80
        port = parts.port or default_port
        host = parts.hostname
        shown = f"[{host}]" if ":" in host else host
        authority = shown if port == default_port else f"{shown}:{port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authorization = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        return cls(parts.scheme, host, port, target, authority, authorization)


@dataclass
class Answer:
    """A server's answer: status, headers (names in lower case) and up to the asked-for bytes of its body."""

    status: int
    headers: dict[str, str]
    body: bytes


def request_head(method: str, endpoint: Endpoint, headers: Mapping[str, str], length: int) -> bytes:
    """The request line and headers; raises ``ValueError`` for a header that would break the request."""
    lines = [f"{method} {endpoint.target} HTTP/1.1", f"Host: {endpoint.authority}"]
    given: set[str] = set()
    for name, value in headers.items():
        if not is_header_name(name) or "\r" in value or "\n" in value:
            raise ValueError(f"invalid HTTP header {name!r}")
        lines.append(f"{name}: {value}")
        given.add(name.lower())
    if "user-agent" not in given:
        lines.append(f"User-Agent: {USER_AGENT}")
    if endpoint.authorization is not None and "authorization" not in given:
        lines.append(f"Authorization: {endpoint.authorization}")
    lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class _Connection(asyncio.Protocol):
    """One keep-alive connection: writes a request, parses its answer (httptools callbacks)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._parser = httptools.HttpResponseParser(self)
        self._answer: asyncio.Future[Answer] | None = None
        self._keep = 0
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._kept = 0
        self._headers_done = False
        self._delimited = False
        self._writable: asyncio.Future[None] | None = None
        #: some of the current request's answer arrived
        self.answered = False

    # -- asyncio.Protocol ------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.answered = True
        if self._answer is None or self._answer.done():
            self._fail(MalformedAnswer("bytes from the server while no request was waiting"))
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(MalformedAnswer(f"unreadable answer: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        answer = self._answer
        if answer is not None and not answer.done():
            if self._headers_done and not self._delimited:  # the body ends with the connection
                self._finish()
            else:
                error = ServerDisconnected("server closed the connection before the whole answer")
                answer.set_exception(error if exc is None else exc)
        self._wake_writer(exc)

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        self._wake_writer(None)

    # -- httptools callbacks --------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        key = name.decode("latin-1").lower()
        if key in ("content-length", "transfer-encoding"):
            self._delimited = True
        self._headers[key] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        room = self._keep - self._kept
        if room > 0:
            piece = body if len(body) <= room else body[:room]
            self._body.append(piece)
            self._kept += len(piece)

    def on_message_complete(self) -> None:
        if 100 <= self._parser.get_status_code() < 200:  # an interim answer (100 Continue, 103): the real one follows
            self._headers, self._body, self._kept = {}, [], 0
            self._headers_done = self._delimited = False
            return
        self._finish()
        if not self._parser.should_keep_alive():
            self.closed = True
            assert self.transport is not None
            self.transport.close()

    # -- a request -------------------------------------------------------------

    async def exchange(self, head: bytes, body: bytes | StreamedBody, keep: int) -> Answer:
        """Send one request and wait for its answer, keeping at most ``keep`` bytes of the answer's body."""
        assert self.transport is not None
        self._answer = asyncio.get_running_loop().create_future()
        self._keep, self._kept, self._body, self._headers = keep, 0, [], {}
        self._headers_done = self._delimited = self.answered = False
        answer = self._answer
        try:
            await self._write(head, body)
        except OSError:
            if not answer.done() or answer.exception() is not None:
                answer.cancel()
                raise
            # the server answered (413, say) and closed before taking the whole body
        except BaseException:
            answer.cancel()
            raise
        return await answer

    async def _write(self, head: bytes, body: bytes | StreamedBody) -> None:
        transport = self.transport
        assert transport is not None
        if isinstance(body, bytes):
            if len(body) < APART_BYTES:  # one send: a send costs more than copying a small body
                transport.write(head + body)
            else:  # joining would copy the whole body once more
                transport.write(head)
                transport.write(body)
        elif body.parts is not None:
            await self._write_parts(head, body)
        else:
            transport.write(head)
            for piece in body.pieces():
                transport.write(piece)
                await self._drained()
        await self._drained()

    async def _write_parts(self, head: bytes, body: StreamedBody) -> None:
        """``head`` then the concatenation of the body's parts, straight to the socket while it takes them.

        On a plain TCP connection with nothing buffered, up to ``IOV_MAX``
        parts at a time go to the socket with ``os.writev``, each byte copied
        once (by the kernel). Whatever the socket does not take, and
        everything after it, goes through the transport, which keeps the bytes
        in order. Under TLS the parts are joined ``IOV_MAX`` at a time.
        """
        transport = self.transport
        assert transport is not None
        sock = transport.get_extra_info("socket")
        fd = sock.fileno() if sock is not None and transport.get_extra_info("sslcontext") is None else -1
        first = True
        for group, size in body.groups or write_groups(body.parts or (), IOV_MAX - 1):
            if first:  # the head goes out with the first parts
                group, size, first = [head, *group], size + len(head) if size is not None else None, False
            if fd >= 0 and not transport.get_write_buffer_size() and not transport.is_closing():
                sent = _writev(fd, group)
                if sent < (size if size is not None else sum(map(len, group))):
                    transport.write(b"".join(_unsent(group, sent)))
                    await self._drained()
            else:
                if self.closed:
                    raise ServerDisconnected("connection closed while the request was written")
                transport.write(b"".join(group))
                await self._drained()
        if first:
            transport.write(head)

    async def _drained(self) -> None:
        if self._writable is not None:
            await self._writable

    def _wake_writer(self, exc: Exception | None) -> None:
        waiter, self._writable = self._writable, None
        if waiter is not None and not waiter.done():
            if exc is None and not self.closed:
                waiter.set_result(None)
            else:
                waiter.set_exception(exc or ServerDisconnected("connection closed while the request was written"))

    def _finish(self) -> None:
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_result(Answer(self._parser.get_status_code(), self._headers, b"".join(self._body)))

    def _fail(self, exc: Exception) -> None:
        answer = self._answer
        if answer is not None and not answer.done():
            answer.set_exception(exc)
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    @property
    def idle(self) -> bool:
        """Ready for another request: the last answer is complete and the server kept the connection."""
        answer = self._answer
        return not self.closed and (answer is None or answer.done()) and not self.transport.is_closing()  # type: ignore[union-attr]


def write_groups(parts: Sequence[bytes], limit: int) -> Iterator[tuple[Sequence[bytes], None]]:
    """``parts`` in consecutive groups of at most ``limit``, of sizes not known (None)."""
    for start in range(0, len(parts), limit):
        yield parts[start : start + limit], None


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


class HttpClient:
    """Keep-alive connections to the endpoints of one sink, ``max_idle`` kept per endpoint.

    ``ssl_context`` is used for ``https`` URIs (None: the system's default
    verification).
    """

    def __init__(self, *, timeout_secs: float, ssl_context: ssl.SSLContext | None = None, max_idle: int = 4) -> None:
        self._timeout = timeout_secs
        self._ssl = ssl_context
        self._max_idle = max_idle
        self._endpoints: dict[str, Endpoint] = {}
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open: set[_Connection] = set()

    async def request(
        self, method: str, uri: str, headers: Mapping[str, str], body: bytes | StreamedBody, *, keep: int
    ) -> Answer:
        """Send ``body`` and return the answer with at most ``keep`` bytes of its body (the rest is read and dropped)."""
        endpoint = self._endpoints.get(uri)
        if endpoint is None:
            endpoint = self._endpoints[uri] = Endpoint.parse(uri)
        head = request_head(method, endpoint, headers, len(body))
        async with asyncio.timeout(self._timeout):
            connection = self._kept(endpoint)
            reused = connection is not None
            if connection is None:
                connection = await self._connect(endpoint)
            try:
                answer = await connection.exchange(head, body, keep)
            except (ServerDisconnected, ConnectionResetError, BrokenPipeError) as exc:
                self._discard(connection)
                if reused and not connection.answered:
                    raise StaleConnection(f"kept connection closed by the server: {exc}") from exc
                raise
            except BaseException:
                self._discard(connection)
                raise
        self._release(endpoint, connection)
        return answer

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for connection in list(self._open):
            self._discard(connection)
        self._idle.clear()

    def _kept(self, endpoint: Endpoint) -> _Connection | None:
        """A kept-alive connection to ``endpoint`` the server has not closed, if there is one."""
        idle = self._idle.get((endpoint.scheme, endpoint.host, endpoint.port))
        while idle:
            connection = idle.pop()
            if connection.idle:
                return connection
            self._discard(connection)
        return None

    async def _connect(self, endpoint: Endpoint) -> _Connection:
        loop = asyncio.get_running_loop()
        tls: ssl.SSLContext | None = None
        if endpoint.scheme == "https":
            if self._ssl is None:
                self._ssl = ssl.create_default_context()
            tls = self._ssl
        _, connection = await loop.create_connection(
            _Connection, endpoint.host, endpoint.port, ssl=tls, server_hostname=endpoint.host if tls else None
        )
        self._open.add(connection)
        return connection

    def _release(self, endpoint: Endpoint, connection: _Connection) -> None:
        idle = self._idle.setdefault((endpoint.scheme, endpoint.host, endpoint.port), [])
        if connection.idle and len(idle) < self._max_idle:
            idle.append(connection)
        else:
            self._discard(connection)

    def _discard(self, connection: _Connection) -> None:
        self._open.discard(connection)
        connection.closed = True
        if connection.transport is not None:
            connection.transport.close()
