"""``parse_url``: the WHATWG URL rules of Rust's ``url`` crate (VRL's) for the parts VRL returns.

Special schemes (http, https, ws, wss, ftp, file) get a lower-cased IDNA host,
the default port dropped, dot segments removed and the path percent-encoded;
other schemes keep an opaque path and no host.
"""

from __future__ import annotations

import posixpath
import urllib.parse
from typing import Any

from ..function import FunctionError
from .declare import BOOL, OBJ, B, always, function, opt, req

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_SPECIAL = frozenset((*DEFAULT_PORTS, "file"))
# the WHATWG path percent-encode set: C0 controls, space, " # < > ? ` { } and anything non-ASCII
_PATH_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in '"#<>?`{}')


def _host(netloc_host: str) -> str:
    host = urllib.parse.unquote(netloc_host).lower()
    if ":" in host:
        return f"[{host}]"
    try:
        return host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise FunctionError("unable to parse url: invalid international domain name") from None


def _path(path: str) -> str:
    if not path:
        return "/"
    normalised = posixpath.normpath(path.replace("\\", "/")) if any(seg in (".", "..") for seg in path.split("/")) else path
    if normalised.startswith("//"):
        normalised = "/" + normalised.lstrip("/")
    if path.endswith("/") and not normalised.endswith("/"):
        normalised += "/"
    return urllib.parse.quote(normalised, safe=_PATH_SAFE + "%")


def parse_url(value: str, default_known_ports: bool | None) -> dict[str, Any]:
    parts = urllib.parse.urlsplit(value.strip(), allow_fragments=True)
    scheme = parts.scheme.lower()
    if not scheme or ":" not in value:
        raise FunctionError("unable to parse url: relative URL without a base")
    special = scheme in _SPECIAL
    try:
        port = parts.port
    except ValueError:
        raise FunctionError("unable to parse url: invalid port number") from None
    if special and scheme != "file" and not parts.hostname:
        raise FunctionError("unable to parse url: empty host")
    if port is not None and DEFAULT_PORTS.get(scheme) == port:
        port = None
    if port is None and default_known_ports:
        port = DEFAULT_PORTS.get(scheme)
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True)) if parts.query else {}
    return {
        "scheme": scheme,
        "username": parts.username or "",
        "password": parts.password or "",
        "path": _path(parts.path) if special else parts.path,
        "host": _host(parts.hostname) if parts.hostname else ("" if scheme == "file" else None),
        "port": port,
        "fragment": parts.fragment if "#" in value else None,
        "query": query,
    }


FUNCTIONS = [
    function("parse_url", (req("value", B), opt("default_known_ports", BOOL)), always(OBJ, True), parse_url),
]
