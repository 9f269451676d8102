"""Who may tap records: where the API listens, and the bearer token of a network tap.

Tapped records are the most sensitive data on the node, so the tap is served
only where nobody but the node's (or the pod's) root can reach it:

- on ``api.address`` when that address is a loopback one (the default,
  ``127.0.0.1:8686``);
- on a Unix socket, ``<data_dir>/api.sock`` (0600, in the 0700 ``data_dir``),
  opened when ``api.address`` is not a loopback one (the DaemonSet's
  ``0.0.0.0:8686``, which the kubelet probes and Prometheus scrape): there the
  tap is refused, and ``kubectl exec`` into the pod reaches the socket;
- on a network ``api.address`` only with ``api.tap_token_file`` set: then a
  request must carry ``Authorization: Bearer <the file's content>``, compared
  in constant time (the file is read at each tap request, so a rotated Secret
  takes effect at once).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

#: the API's Unix socket, under data_dir, when api.address is not a loopback address
SOCKET_NAME = "api.sock"


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is a loopback address; a name is not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def socket_path(data_dir: str | os.PathLike[str]) -> Path:
    return Path(data_dir) / SOCKET_NAME


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str


@dataclass(frozen=True)
class TapAccess:
    """The tap policy of one listener.

    ``open``: served without a token (a loopback address, the Unix socket).
    ``token_file``: else, the file holding the bearer token that grants it.
    ``socket``: where the tap is served instead (named in the refusal).
    """

    open: bool
    token_file: str | None = None
    socket: str | None = None

    def refusal(self, authorization: str | None) -> Refusal | None:
        """None if the request may tap, else the answer to give."""
        if self.open:
            return None
        if self.token_file is None:
            where = f"the Unix socket {self.socket}" if self.socket else "a loopback api.address"
            return Refusal(403, "the tap serves records and is not served on this network address; it is on "
                                f"{where} (inside the pod: logagent tap --config <the agent's config>), "
                                "or set api.tap_token_file to allow it here with a bearer token")
        try:
            expected = Path(self.token_file).read_bytes().strip()
        except OSError as exc:
            return Refusal(503, f"cannot read api.tap_token_file: {exc.strerror}")
        if not expected:
            return Refusal(503, "api.tap_token_file is empty")
        given = b""
        if authorization is not None and authorization[:7].lower() == "bearer ":
            given = authorization[7:].strip().encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(given, expected):
            return Refusal(401, "a valid bearer token is required (Authorization: Bearer <token>)")
        return None


def network_access(host: str, token_file: str | None, socket: str | None) -> TapAccess:
    """The policy of the TCP listener on ``host``."""
    return TapAccess(open=is_loopback_host(host), token_file=token_file, socket=socket)
