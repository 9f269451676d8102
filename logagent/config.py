"""The agent's YAML config: environment interpolation, typed Structs, key-path errors.

Each component kind owns its config Struct next to its code, tagged by ``type``;
this module only assembles them, so adding a kind means registering its Struct
in ``SOURCE_KINDS``, ``TRANSFORM_KINDS`` or ``SINK_KINDS``.
"""

from __future__ import annotations

import os
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Union

import msgspec
import yaml

from logagent.kube.config import KubernetesConfig
from logagent.sinks.common_config import HealthchecksConfig
from logagent.sinks.console import ConsoleSinkConfig
from logagent.sinks.elasticsearch.config import ElasticsearchSinkConfig
from logagent.sinks.http.config import HttpSinkConfig
from logagent.sinks.loki.config import LokiSinkConfig
from logagent.sinks.opentelemetry.config import OpentelemetrySinkConfig
from logagent.sinks.prometheus.config import PrometheusExporterConfig
from logagent.sources.internal_metrics import InternalMetricsConfig
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig
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


class ConfigError(Exception):
    """A config problem; the message starts with the dotted path of the key."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


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
    sources: dict[str, SourceConfig] = msgspec.field(default_factory=dict)
    transforms: dict[str, TransformConfig] = msgspec.field(default_factory=dict)
    sinks: dict[str, SinkConfig] = msgspec.field(default_factory=dict)


# ---------------------------------------------------------------- interpolation

_VAR = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """Replace ``${VAR}``, ``${VAR:-default}`` and ``$VAR``; ``$$`` is a literal ``$``.

    An unset variable without a default is an error naming it (and its line).
    """
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "$$":
            return "$"
        name = match.group(1) or match.group(3)
        default = match.group(2)
        value = env.get(name)
        if value is None or (value == "" and ":-" in whole):
            if default is not None:
                return default
            line = text.count("\n", 0, match.start()) + 1
            missing.append(f"line {line}: environment variable {name} is not set (use ${{{name}:-default}} for a default)")
            return ""
        return value

    result = _VAR.sub(replace, text)
    if missing:
        raise ConfigError("; ".join(missing))
    return result


# ---------------------------------------------------------------- loading


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that rejects a key given twice in one mapping (such as a component id)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                mark = key_node.start_mark
                raise ConfigError(f"line {mark.line + 1}, column {mark.column + 1}: duplicate key {key!r}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _UniqueKeyLoader.construct_mapping)


def load_config(path: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Config:
    """Read, interpolate, parse and type-check a config file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file: {exc.strerror or exc}") from None
    return parse_config(text, os.environ if env is None else env)


def parse_config(text: str, env: Mapping[str, str]) -> Config:
    text = interpolate(text, env)
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"invalid YAML: {where}{problem}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"expected a mapping at the top level, got {_kind_of(raw)}")
    return build_config(raw)


def build_config(raw: dict[str, Any]) -> Config:
    sections: dict[str, dict[str, Any]] = {}
    for section, kinds in (("sources", SOURCE_KINDS), ("transforms", TRANSFORM_KINDS), ("sinks", SINK_KINDS)):
        components = raw.get(section)
        if components is None:
            sections[section] = {}
            continue
        if not isinstance(components, dict):
            raise ConfigError(f"expected a mapping of component ids to components, got {_kind_of(components)}", section)
        converted = {}
        for component_id, body in components.items():
            converted[str(component_id)] = _convert_component(section, str(component_id), body, kinds)
        sections[section] = converted
    top = {k: v for k, v in raw.items() if k not in sections}
    config = _convert(top, Config, "")
    config.sources = sections["sources"]
    config.transforms = sections["transforms"]
    config.sinks = sections["sinks"]
    _check_values(config)
    return config


def _convert_component(section: str, component_id: str, body: Any, kinds: dict[str, type]) -> Any:
    path = f"{section}.{component_id}"
    if not isinstance(body, dict):
        raise ConfigError(f"expected a mapping, got {_kind_of(body)}", path)
    kind = body.get("type")
    if kind is None:
        raise ConfigError(f"missing required key; expected one of {', '.join(kinds)}", f"{path}.type")
    if not isinstance(kind, str) or kind not in kinds:  # a list or mapping is not hashable
        raise ConfigError(f"expected one of {', '.join(kinds)}, got {_show(kind)}", f"{path}.type")
    struct_type = kinds[kind]
    component = _convert(body, struct_type, path)
    validate = getattr(component, "validate", None)
    if validate is not None:
        try:
            validate()
        except ValueError as exc:
            raise component_error(path, str(exc)) from None
    return component


def component_error(path: str, message: str) -> ConfigError:
    """A component's ``"<key>: <reason>"`` (relative key path) as a ConfigError under ``path``."""
    key, sep, reason = message.partition(": ")
    if sep and re.fullmatch(r"[A-Za-z0-9_.\[\]-]+", key):
        return ConfigError(reason, f"{path}.{key}")
    return ConfigError(message, path)


def _convert(data: Any, struct_type: type, prefix: str) -> Any:
    try:
        return msgspec.convert(data, struct_type, strict=False)
    except msgspec.ValidationError as exc:
        raise _explain(str(exc), data, struct_type, prefix) from None


_AT = re.compile(r"^(?P<msg>.*) - at `\$(?P<path>[^`]*)`$")


def _explain(message: str, data: Any, struct_type: type, prefix: str) -> ConfigError:
    match = _AT.match(message)
    msg, raw_path = (match["msg"], match["path"]) if match else (message, "")
    segments = _split_path(raw_path)
    base = _join_path(prefix, segments)
    value = _value_at(data, segments)
    tp = _type_at(struct_type, segments)
    if msg.startswith("Object contains unknown field"):
        name = re.search(r"`([^`]*)`", msg)
        field = name.group(1) if name else "?"
        allowed = _field_names(tp)
        hint = f"; expected one of {', '.join(allowed)}" if allowed else ""
        return ConfigError(f"unknown key{hint}", _join_path(base, [field]))
    if msg.startswith("Object missing required field"):
        name = re.search(r"`([^`]*)`", msg)
        field = name.group(1) if name else "?"
        return ConfigError("missing required key", _join_path(base, [field]))
    if msg.startswith("Invalid enum value") or msg.startswith("Invalid value"):
        choices = _literal_choices(tp)
        if choices:
            return ConfigError(f"expected one of {', '.join(map(str, choices))}, got {_show(value)}", base)
    expected = re.match(r"Expected `([^`]*)`, got `([^`]*)`", msg)
    if expected:
        choices = _literal_choices(tp)
        if choices:
            return ConfigError(f"expected one of {', '.join(map(str, choices))}, got {_show(value)}", base)
        return ConfigError(f"expected {_describe(expected.group(1))}, got {_show(value)}", base)
    return ConfigError(msg[:1].lower() + msg[1:], base)


def _split_path(raw: str) -> list[str | int]:
    segments: list[str | int] = []
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]", raw):
        if name:
            segments.append(name)
        elif index != "...":
            segments.append(int(index))
    return segments


def _join_path(prefix: str, segments: list[str | int]) -> str:
    path = prefix
    for seg in segments:
        if isinstance(seg, int):
            path += f"[{seg}]"
        else:
            path = f"{path}.{seg}" if path else seg
    return path


def _value_at(data: Any, segments: list[str | int]) -> Any:
    for seg in segments:
        try:
            data = data[seg]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _unwrap(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return tp


def _type_at(tp: Any, segments: list[str | int]) -> Any:
    tp = _unwrap(tp)
    for seg in segments:
        if isinstance(seg, int):
            args = typing.get_args(tp)
            tp = _unwrap(args[0]) if args else Any
        elif isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            hints = typing.get_type_hints(tp)
            tp = _unwrap(hints.get(seg, Any))
        elif typing.get_origin(tp) is dict:
            tp = _unwrap(typing.get_args(tp)[1])
        else:
            return Any
    return tp


def _literal_choices(tp: Any) -> tuple[Any, ...]:
    tp = _unwrap(tp)
    if typing.get_origin(tp) is Literal:
        return typing.get_args(tp)
    if typing.get_origin(tp) in (Union, types.UnionType):  # a short form beside a mapping (encoding: json)
        return tuple(c for arg in typing.get_args(tp) for c in _literal_choices(arg))
    return ()


def _field_names(tp: Any) -> list[str]:
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        names = [f for f in tp.__struct_fields__]
        tag_field = tp.__struct_config__.tag_field
        return ([tag_field] if tag_field else []) + names
    return []


_DESCRIPTIONS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "array": "a list",
    "object": "a mapping",
    "null": "null",
}


def _describe(expected: str) -> str:
    parts = [p.strip() for p in expected.split("|")]
    return " or ".join(_DESCRIPTIONS.get(p, p) for p in parts)


def _kind_of(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return _show(value)


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


def _check_values(config: Config) -> None:
    if config.shutdown_grace_secs < 0:
        raise ConfigError("expected a number of seconds >= 0", "shutdown_grace_secs")
    host, sep, port = config.api.address.rpartition(":")
    if config.api.enabled and (not sep or not port.isdigit() or not 0 <= int(port) <= 65535):
        raise ConfigError(f'expected "host:port", got "{config.api.address}"', "api.address")
