"""The ``ssl.SSLContext`` of an HTTP client from the sink's ``tls`` options."""

from __future__ import annotations

import ssl

from logagent.sinks.http.config import TlsConfig


def build_ssl_context(tls: TlsConfig) -> ssl.SSLContext:
    """A client context: system CAs (or ``ca_file``), optional client certificate.

    Verification stays on unless ``verify: false`` is set explicitly.
    Raises ``ValueError("tls.<key>: <reason>")`` when a file cannot be used.
    """
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if tls.ca_file is not None:
        try:
            context.load_verify_locations(cafile=tls.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(f"tls.ca_file: cannot load {tls.ca_file!r}: {_reason(exc)}") from None
    if tls.crt_file is not None:
        try:
            context.load_cert_chain(certfile=tls.crt_file, keyfile=tls.key_file, password=tls.key_pass)
        except (OSError, ssl.SSLError) as exc:
            key = "tls.key_file" if tls.key_file is not None and _is_key_error(exc) else "tls.crt_file"
            raise ValueError(f"{key}: cannot load the client certificate: {_reason(exc)}") from None
    if not tls.verify_hostname:
        context.check_hostname = False
    if not tls.verify or not tls.verify_certificate:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if tls.alpn_protocols:
        context.set_alpn_protocols(tls.alpn_protocols)
    return context


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _is_key_error(exc: BaseException) -> bool:
    return "KEY" in str(exc).upper()
