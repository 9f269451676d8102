"""Every Vector key listed for a sink (and internal_metrics) loads, or is refused, as the one list says.

v27a's table-driven test walks ALL_KEYS through the loader that reads the
list; this one walks the sink part with each type's required keys
(``SINK_BODIES``) and each key's companions (``SINK_COMPANIONS``), so it also
holds on a loader that does not read the list (refused keys are then errors
at the key, in the Structs' words).
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest

from logagent.config import ConfigError, build_config
from logagent.graph import check_graph
from logagent.vector_keys import ALL_KEYS, VectorKey
from logagent.vector_keys.sinks import SINK_BODIES, SINK_COMPANIONS, SINKS_KEYS, SINKS_VALUES


def _merge(target: dict[str, Any], path: str, value: Any) -> None:
    parts = path.replace("*", "errors").split(".")
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    if isinstance(value, dict) and isinstance(target.get(parts[-1]), dict):
        _deep_update(target[parts[-1]], value)
    else:
        target[parts[-1]] = copy.deepcopy(value)


def _deep_update(target: dict[str, Any], extra: dict[str, Any]) -> None:
    for name, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(name), dict):
            _deep_update(target[name], value)
        else:
            target[name] = copy.deepcopy(value)


def sink_config(kind: str, key: VectorKey) -> dict[str, Any]:
    metrics = kind == "prometheus_exporter"
    body: dict[str, Any] = {"type": kind, "inputs": ["metrics" if metrics else "pods"], **copy.deepcopy(SINK_BODIES[kind])}
    for path, value in SINK_COMPANIONS.get((kind, key.path), {}).items():
        _merge(body, path, value)
    if key.path != "inputs":
        _merge(body, key.path, key.example)
    sources: dict[str, Any] = {"pods": {"type": "kubernetes_logs"}}
    if metrics:
        sources["metrics"] = {"type": "internal_metrics"}
    sinks = {"out": body}
    if metrics:
        sinks["logs"] = {"type": "console", "inputs": ["pods"]}
    return {"sources": sources, "sinks": sinks}


def _cases() -> list[Any]:
    return [pytest.param(kind, key, id=f"{kind}.{key.path}.{key.status}.{index}")
            for kind, keys in SINKS_KEYS.items() for index, key in enumerate(keys)]


@pytest.mark.parametrize(("kind", "key"), _cases())
def test_each_sink_key_loads_or_is_refused(kind: str, key: VectorKey) -> None:
    assert key.example is not None or key.path == "inputs", "every key has an example Vector accepts"
    raw = sink_config(kind, key)
    if key.status == "refused":
        assert key.note
        with pytest.raises(ConfigError) as info:
            config = build_config(raw)
            check_graph(config)
        assert "sinks.out" in str(info.value)
        return
    assert key.status == "same" or key.note, "an accepted key says how our behaviour gives what it asks"
    config = build_config(raw)
    check_graph(config)


def test_value_predicates_name_listed_keys_that_have_a_refused_entry() -> None:
    for kind, predicates in SINKS_VALUES.items():
        listed = {k.path: k.status for k in SINKS_KEYS[kind] if k.status == "refused"}
        for path in predicates:
            if path in {k.path for k in SINKS_KEYS[kind]}:
                assert path in listed, f"{kind}.{path}: a predicate for a key without a refused entry"


def test_refusals_in_the_structs_are_the_listed_notes() -> None:
    """Where a Struct refuses a value itself, its words are the list's note (the README shows those)."""
    checked = 0
    for kind, keys in SINKS_KEYS.items():
        for key in keys:
            if key.status != "refused":
                continue
            try:
                check_graph(build_config(sink_config(kind, key)))
            except ConfigError as error:
                text = str(error)
                if "unknown key" in text or "expected one of" in text:
                    continue  # the list's loader gives the note for these (config_vector.apply_key_list)
                assert key.note in text, (kind, key.path, text)
                checked += 1
    assert checked >= 20


def test_the_exporter_and_internal_metrics_are_listed_and_their_examples_load() -> None:
    assert set(SINKS_KEYS) == {"console", "http", "elasticsearch", "loki", "opentelemetry", "prometheus_exporter"}
    for key in ALL_KEYS["sources"]["internal_metrics"]:
        raw = {"sources": {"m": {"type": "internal_metrics"}, "pods": {"type": "kubernetes_logs"}},
               "sinks": {"p": {"type": "prometheus_exporter", "inputs": ["m"]}, "o": {"type": "console", "inputs": ["pods"]}}}
        _merge(raw["sources"]["m"], key.path, key.example)
        if key.status == "refused":
            with pytest.raises(ConfigError, match="not implemented"):
                build_config(raw)
        else:
            assert msgspec.to_builtins(build_config(raw).sources["m"])["namespace"] in ("vector", "agent")
