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
    apply_versions(context, tls.min_tls_version, tls.ciphersuites)
    return context


_VERSIONS = {"VersionTLS10": ssl.TLSVersion.TLSv1, "VersionTLS11": ssl.TLSVersion.TLSv1_1,
             "VersionTLS12": ssl.TLSVersion.TLSv1_2, "VersionTLS13": ssl.TLSVersion.TLSv1_3}


def apply_versions(context: ssl.SSLContext, min_tls_version: str | None, ciphersuites: str | None) -> None:
    """``min_tls_version`` and ``ciphersuites``; raises ``ValueError("tls.ciphersuites: ...")`` for unknown suites."""
    if min_tls_version is not None:
        context.minimum_version = _VERSIONS[min_tls_version]
    if ciphersuites:
        # TLS 1.3 suites (TLS_*) cannot be chosen through Python's ssl module: the library's are used
        legacy = [name.strip() for name in ciphersuites.split(",") if name.strip() and not name.strip().startswith("TLS_")]
        if legacy:
            try:
                context.set_ciphers(":".join(legacy))
            except ssl.SSLError:
                raise ValueError(f"tls.ciphersuites: none of {', '.join(legacy)} is a cipher suite of this TLS library") from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _is_key_error(exc: BaseException) -> bool:
    return "KEY" in str(exc).upper()
