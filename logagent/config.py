"""The agent's config: typed Structs, assembled from Vector-shaped files, every error at once.

Each component kind owns its config Struct next to its code, tagged by ``type``;
this module only assembles them, so adding a kind means registering its Struct
in ``SOURCE_KINDS``, ``TRANSFORM_KINDS`` or ``SINK_KINDS``. Files and formats are
``config_files.py``, the explanation of errors ``config_errors.py``, Vector's
spellings ``config_vector.py`` (and the list in ``vector_keys/``).
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Union

import msgspec

from logagent.config_errors import ConfigError, ConfigErrors, KeyErrors, convert_all, did_you_mean, raise_all, show
from logagent.config_files import Origins, interpolate, parse_text, read_bytes, read_configs
from logagent.config_vector import apply_key_list, normalise_globals, unsupported_type
from logagent.kube.config import KubernetesConfig
from logagent.sinks.common_config import HealthchecksConfig
from logagent.ports import expand_input_wildcards
from logagent.sinks.console import ConsoleSinkConfig
from logagent.sinks.elasticsearch.config import ElasticsearchSinkConfig
from logagent.sinks.http.config import HttpSinkConfig
from logagent.sinks.loki.config import LokiSinkConfig
from logagent.sinks.opentelemetry.config import OpentelemetrySinkConfig
from logagent.sinks.prometheus.config import PrometheusExporterConfig
from logagent.sources.internal_metrics import InternalMetricsConfig
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig
from logagent.sources.kubernetes_logs_vector import apply_vector_source_keys
from logagent.transforms.filter import FilterConfig
from logagent.transforms.parse_json import ParseJsonConfig
from logagent.transforms.remap_config import RemapConfig
from logagent.transforms.dedupe_config import DedupeConfig
from logagent.transforms.route import RouteConfig
from logagent.transforms.sample_config import SampleConfig
from logagent.transforms.throttle_config import ThrottleConfig

SOURCE_KINDS: dict[str, type[msgspec.Struct]] = {"kubernetes_logs": KubernetesLogsConfig, "internal_metrics": InternalMetricsConfig}
TRANSFORM_KINDS: dict[str, type[msgspec.Struct]] = {
    "filter": FilterConfig,
    "route": RouteConfig,
    "parse_json": ParseJsonConfig,
    "remap": RemapConfig,
    "throttle": ThrottleConfig,
    "sample": SampleConfig,
    "dedupe": DedupeConfig,
}
SINK_KINDS: dict[str, type[msgspec.Struct]] = {
    "console": ConsoleSinkConfig,
    "http": HttpSinkConfig,
    "elasticsearch": ElasticsearchSinkConfig,
    "loki": LokiSinkConfig,
    "opentelemetry": OpentelemetrySinkConfig,
    "prometheus_exporter": PrometheusExporterConfig,
}

SourceConfig = Union[KubernetesLogsConfig, InternalMetricsConfig]
TransformConfig = Union[FilterConfig, RouteConfig, ParseJsonConfig, RemapConfig, ThrottleConfig, SampleConfig, DedupeConfig]
SinkConfig = Union[ConsoleSinkConfig, HttpSinkConfig, ElasticsearchSinkConfig, LokiSinkConfig, OpentelemetrySinkConfig, PrometheusExporterConfig]


class ApiConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The health and metrics endpoint."""

    enabled: bool = True
    address: str = "127.0.0.1:8686"
    #: a file holding the bearer token that allows ``/tap`` on a non-loopback ``address``
    #: (without it the tap is served on loopback or ``<data_dir>/api.sock`` only)
    tap_token_file: str | None = None


class Config(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    data_dir: str = "/var/lib/logagent"
    kubernetes: KubernetesConfig = msgspec.field(default_factory=KubernetesConfig)
    api: ApiConfig = msgspec.field(default_factory=ApiConfig)
    shutdown_grace_secs: float = 25.0
    healthchecks: HealthchecksConfig = msgspec.field(default_factory=HealthchecksConfig)
    #: Vector's: whether an ``inputs`` wildcard that matches nothing is an error (strict) or dropped (relaxed)
    wildcard_matching: Literal["strict", "relaxed"] = "strict"
    sources: dict[str, SourceConfig] = msgspec.field(default_factory=dict)
    transforms: dict[str, TransformConfig] = msgspec.field(default_factory=dict)
    sinks: dict[str, SinkConfig] = msgspec.field(default_factory=dict)


__all__ = ["Config", "ConfigError", "ConfigErrors", "build_config", "interpolate", "load_config", "parse_config"]


# ---------------------------------------------------------------- loading


def load_config(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    env: Mapping[str, str] | None = None,
    *,
    config_dirs: Sequence[str | os.PathLike[str]] = (),
    read: Callable[[Path], bytes] = read_bytes,
) -> Config:
    """Read, interpolate, merge, parse and type-check config files (``--config``, ``--config-dir``)."""
    env = os.environ if env is None else env
    files = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    raw, origins = read_configs(files, config_dirs, env, read)
    return build_config(raw, env, origins if len(set(origins.values())) > 1 else None)


def parse_config(text: str, env: Mapping[str, str], fmt: str = "yaml") -> Config:
    """One config's text (``yaml``, ``toml`` or ``json``)."""
    return build_config(parse_text(text, fmt, env), env)


def build_config(raw: dict[str, Any], env: Mapping[str, str] | None = None, origins: Origins | None = None) -> Config:
    """The Config of a parsed (and merged) mapping; raises every error found."""
    raw = copy.deepcopy(raw)
    errors = apply_vector_source_keys(raw, env or {})
    normalise_globals(raw)
    errors += apply_key_list("global", "global", raw, Config, "")
    sections: dict[str, dict[str, Any]] = {"sources": {}, "transforms": {}, "sinks": {}}
    config, found = convert_all({k: v for k, v in raw.items() if k not in sections}, Config, "")
    errors += found
    for section, kinds in (("sources", SOURCE_KINDS), ("transforms", TRANSFORM_KINDS), ("sinks", SINK_KINDS)):
        components = raw.get(section)
        if components is None:
            continue
        if not isinstance(components, dict):
            errors.append(ConfigError(f"expected a mapping of component ids to components, got {show(components)}", section))
            continue
        for component_id, body in components.items():
            component, found = _convert_component(section, str(component_id), body, kinds)
            sections[section][str(component_id)] = component
            errors += found
    if config is not None:
        errors += _check_values(config)
    raise_all([_with_origin(e, origins) for e in errors])
    config.sources = sections["sources"]
    config.transforms = sections["transforms"]
    config.sinks = sections["sinks"]
    expand_input_wildcards(config, relaxed=config.wildcard_matching == "relaxed")
    return config


def _with_origin(error: ConfigError, origins: Origins | None) -> ConfigError:
    """The error naming the file its key came from, when several files were merged."""
    if not origins or not error.path:
        return error
    parts = error.path.split(".")
    where = origins.get(".".join(parts[:2])) or origins.get(parts[0].split("[")[0])
    if where is None:
        return error
    return ConfigError(f"{error.message} (in {where})", error.path)


def _convert_component(section: str, component_id: str, body: Any, kinds: dict[str, type]) -> tuple[Any, list[ConfigError]]:
    path = f"{section}.{component_id}"
    if not isinstance(body, dict):
        return None, [ConfigError(f"expected a mapping, got {show(body)}", path)]
    kind = body.get("type")
    if kind is None:
        return None, [ConfigError(f"missing required key; expected one of {', '.join(kinds)}", f"{path}.type")]
    if not isinstance(kind, str) or kind not in kinds:  # a list or mapping is not hashable
        why = unsupported_type(section, kind) if isinstance(kind, str) else None
        if why is None:
            hint = did_you_mean(kind, kinds) if isinstance(kind, str) else ""
            why = f"expected one of {', '.join(kinds)}, got {show(kind)}{hint}"
        return None, [ConfigError(why, f"{path}.type")]
    struct_type = kinds[kind]
    body = dict(body)
    errors = apply_key_list(section, kind, body, struct_type, path)
    component, found = convert_all(body, struct_type, path)
    errors += found
    validate = getattr(component, "validate", None)
    if validate is not None and not errors:
        try:
            validate()
        except KeyErrors as exc:
            errors.extend(component_error(path, message) for message in exc.messages)
        except ValueError as exc:
            errors.append(component_error(path, str(exc)))
    return component, errors


def component_error(path: str, message: str) -> ConfigError:
    """A component's ``"<key>: <reason>"`` (relative key path) as a ConfigError under ``path``."""
    key, sep, reason = message.partition(": ")
    if sep and re.fullmatch(r"[A-Za-z0-9_.\[\]-]+", key):
        return ConfigError(reason, f"{path}.{key}")
    return ConfigError(message, path)


def _check_values(config: Config) -> list[ConfigError]:
    errors = []
    if config.shutdown_grace_secs < 0:
        errors.append(ConfigError("expected a number of seconds >= 0", "shutdown_grace_secs"))
    host, sep, port = config.api.address.rpartition(":")
    if config.api.enabled and (not sep or not port.isdigit() or not 0 <= int(port) <= 65535):
        errors.append(ConfigError(f'expected "host:port", got "{config.api.address}"', "api.address"))
    return errors
