"""Configuration of the ``prometheus_exporter`` sink (light: no HTTP server, no prometheus_client).

Vector's keys: ``address`` (default ``0.0.0.0:9598``, Vector's), ``auth``
(``basic`` or ``bearer``: what a scraper must send), the histogram and summary
options Vector applies to metric events, ``flush_period_secs``,
``suppress_timestamp``, ``default_namespace``, ``tls``. The exporter serves
metrics only, never a record, so a network address is fine.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from logagent.sinks.common_config import CommonSinkOptions

#: Vector's defaults: other values would reshape histograms this agent does not build from events
VECTOR_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]
VECTOR_QUANTILES = [0.5, 0.75, 0.9, 0.95, 0.99]


class ScrapeAuth(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The credentials a scrape must carry."""

    strategy: Literal["basic", "bearer"]
    user: str | None = None
    password: str | None = None
    token: str | None = None

    def __repr__(self) -> str:
        return f"ScrapeAuth(strategy={self.strategy!r}, user={self.user!r})"


class ExporterTls(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    enabled: bool = False
    crt_file: str | None = None
    key_file: str | None = None
    key_pass: str | None = None
    ca_file: str | None = None
    verify_certificate: bool | None = None
    verify_hostname: bool | None = None
    alpn_protocols: list[str] | None = None
    server_name: str | None = None
    min_tls_version: Literal["VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13"] | None = None
    ciphersuites: str | None = None

    def validate(self) -> None:
        if self.enabled and (self.crt_file is None or self.key_file is None):
            raise ValueError("tls.crt_file: a TLS exporter needs crt_file and key_file")
        if self.server_name is not None:
            raise ValueError("tls.server_name: not implemented for the exporter (it is the server)")


class PrometheusExporterConfig(CommonSinkOptions, tag="prometheus_exporter", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    address: str = "0.0.0.0:9598"
    auth: ScrapeAuth | None = None
    buckets: list[float] = msgspec.field(default_factory=lambda: list(VECTOR_BUCKETS))
    quantiles: list[float] = msgspec.field(default_factory=lambda: list(VECTOR_QUANTILES))
    distributions_as_summaries: bool = False
    #: accepted: metrics are read live at each scrape, so none goes stale
    flush_period_secs: float = 60.0
    #: accepted: samples never carry timestamps here (Prometheus stamps them at the scrape)
    suppress_timestamp: bool = False
    #: accepted: every metric here has a namespace (``logagent_`` or the source's)
    default_namespace: str | None = None
    tls: ExporterTls = msgspec.field(default_factory=ExporterTls)

    def validate(self) -> None:
        self.validate_common()
        if self.healthcheck_config.uri is not None:
            raise ValueError("healthcheck.uri: the exporter has no destination to check")
        host, sep, port = self.address.rpartition(":")
        if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ValueError(f'address: expected "host:port", got {self.address!r}')
        if self.buckets != VECTOR_BUCKETS or self.quantiles != VECTOR_QUANTILES or self.distributions_as_summaries:
            raise ValueError("buckets: not implemented: Vector builds these from metric events; the agent's own "
                             "histograms keep their buckets (leave buckets, quantiles, distributions_as_summaries unset)")
        self.tls.validate()
        if self.auth is not None:
            _validate_auth(self.auth)


def _validate_auth(auth: ScrapeAuth) -> None:
    if auth.strategy == "basic" and (not auth.user or auth.password is None):
        raise ValueError("auth.user: strategy basic needs user and password")
    if auth.strategy == "bearer" and not auth.token:
        raise ValueError("auth.token: strategy bearer needs a token")
