"""The one list of Vector's keys: each listed key loads (same, accepted) or fails with its note (refused)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from logagent.config import SINK_KINDS, SOURCE_KINDS, TRANSFORM_KINDS, ConfigError, build_config
from logagent.config_vector import struct_has
from logagent.graph import check_graph
from logagent.vector_keys import ALL_KEYS, VectorKey, render_markdown

README = Path(__file__).resolve().parent.parent / "README.md"

BASE: dict[str, Any] = {
    "sources": {"pods": {"type": "kubernetes_logs"}},
    "sinks": {"out": {"type": "console", "inputs": ["pods"]}},
}
#: the least a transform of each type needs
TRANSFORM_BODIES: dict[str, dict[str, Any]] = {
    "filter": {"condition": ".a == 1"},
    "route": {"route": {"a": ".a == 1"}},
    "remap": {"source": ".a = 1"},
    "throttle": {"threshold": 10, "window_secs": 1.0},
    "sample": {"rate": 2},
    "dedupe": {},
}


#: the parts of the list this test walks; the sinks' part (and internal_metrics) is walked by the sinks' own
#: table test with each sink type's required keys (vector_keys.sinks.SINK_BODIES)
WALKED = {"global": None, "sources": {"kubernetes_logs"}, "transforms": None}


def _cases() -> list[Any]:
    cases = []
    for section, kinds in ALL_KEYS.items():
        for kind, keys in kinds.items():
            if section not in WALKED or (WALKED[section] is not None and kind not in WALKED[section]):
                continue
            for index, key in enumerate(keys):
                cases.append(pytest.param(section, kind, key, id=f"{section}.{kind}.{key.path}.{key.status}.{index}"))
    return cases


def _set(target: dict[str, Any], path: str, value: Any) -> None:
    parts = path.replace("*", "errors").split(".")
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = value


def _get(target: Any, path: str) -> Any:
    for part in path.replace("*", "errors").split("."):
        target = target[part] if isinstance(target, dict) else getattr(target, part)
    return target


def _config_with(section: str, kind: str, key: VectorKey, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A minimal config with the key set to its example; and the mapping the key was set in."""
    raw = copy.deepcopy(BASE)
    value = key.example
    if section == "global":
        body = raw
    elif section == "sources":
        body = raw["sources"]["pods"] = {"type": kind}
    elif section == "transforms":
        body = {"type": kind, "inputs": ["pods"], **copy.deepcopy(TRANSFORM_BODIES[kind])}
        raw["transforms"] = {"t": body}
        if key.path in ("file", "files", "ratio") or key.path.startswith("route."):
            body.pop({"file": "source", "files": "source", "ratio": "rate"}.get(key.path, "route"), None)
        if key.path in ("file", "files"):
            program = tmp_path / "p.vrl"
            program.write_text(".a = 1\n")
            value = str(program) if key.path == "file" else [str(program)]
    else:
        body = raw["sinks"]["out"] = {"type": kind, "inputs": ["pods"]}
    if key.path == "inputs":
        value = ["pods"]
    elif value is None and key.path == "ratio":
        value = 0.5
    elif value is None and key.path == "fields.ignore":
        body.pop("fields", None)
        value = ["timestamp"]
    elif value is None and key.path == "time_settings.refresh_on_drop":
        _set(body, "time_settings.max_age_ms", 1000)
        value = True
    assert value is not None, f"{section}.{kind}.{key.path}: give the key an example"
    _set(body, key.path, value)
    return raw, body


STRUCTS = {"sources": SOURCE_KINDS, "transforms": TRANSFORM_KINDS, "sinks": SINK_KINDS}


@pytest.mark.parametrize(("section", "kind", "key"), _cases())
def test_every_listed_key_loads_or_is_refused_with_its_note(section: str, kind: str, key: VectorKey, tmp_path: Path) -> None:
    raw, _ = _config_with(section, kind, key, tmp_path)
    if key.status == "refused":
        assert key.note, "a refusal says why"
        with pytest.raises(ConfigError) as info:
            build_config(raw, {})
        assert any(e.message == key.note and e.path.endswith(key.path.replace("*", "errors")) for e in info.value.errors), (
            str(info.value))
        return
    assert key.status == "same" or key.note, "an accepted key says how our behaviour gives what it asks"
    config = build_config(raw, {})
    check_graph(config)
    if section == "global":
        return
    component = {"sources": config.sources, "transforms": config.transforms, "sinks": config.sinks}[section]
    loaded = component["pods" if section == "sources" else "t" if section == "transforms" else "out"]
    struct = STRUCTS[section][kind]
    if key.status == "same" and key.path != "type" and struct_has(struct, key.path.replace("*", "errors").split(".")):
        assert msgspec.to_builtins(_get(loaded, key.path)) == key.example or key.example is None or key.path == "inputs"


def test_every_type_we_implement_is_listed_or_has_no_vector_twin() -> None:
    for section, kinds in STRUCTS.items():
        listed = set(ALL_KEYS[section])
        assert not listed - set(kinds), f"{section}: listed types we do not implement"
    assert set(TRANSFORM_KINDS) - set(ALL_KEYS["transforms"]) == {"parse_json"}


def test_every_field_of_kubernetes_logs_is_a_vector_key_or_our_own() -> None:
    listed = {k.path.split(".")[0] for k in ALL_KEYS["sources"]["kubernetes_logs"]}
    ours = {"log_dir", "insert_node_fields", "rescan_interval_secs", "multiline"}  # logagent's own, in README's options
    assert set(SOURCE_KINDS["kubernetes_logs"].__struct_fields__) - listed == ours


def test_a_vector_kubernetes_logs_source_maps_onto_the_shared_block() -> None:
    raw = {
        "sources": {
            "a": {"type": "kubernetes_logs", "self_node_name": "n9", "kube_config_file": "/k", "data_dir": "/d",
                  "glob_minimum_cooldown_ms": 2000, "annotation_fields": {"pod_name": ".k8s.pod"}},
            "b": {"type": "kubernetes_logs", "self_node_name": "n9"},
        },
        "sinks": {"out": {"type": "console", "inputs": ["a", "b"]}},
    }
    config = build_config(raw, {})
    assert (config.kubernetes.node_name, config.kubernetes.kubeconfig, config.data_dir) == ("n9", "/k", "/d")
    assert config.sources["a"].rescan_interval_secs == 2.0
    assert config.sources["a"].pod_annotation_fields.pod_name == ".k8s.pod"


def test_two_sources_that_disagree_on_a_shared_setting_name_both() -> None:
    raw = {
        "kubernetes": {"kubeconfig": "/k1"},
        "sources": {
            "a": {"type": "kubernetes_logs", "self_node_name": "n1"},
            "b": {"type": "kubernetes_logs", "self_node_name": "n2", "kube_config_file": "/k2"},
        },
        "sinks": {"out": {"type": "console", "inputs": ["a", "b"]}},
    }
    with pytest.raises(ConfigError) as info:
        build_config(raw, {})
    lines = [str(e) for e in info.value.errors]
    assert lines[0].startswith('sources.b.self_node_name: "n2" here but "n1" in sources.a.self_node_name')
    assert lines[1].startswith('sources.b.kube_config_file: "/k2" here but "/k1" in kubernetes.kubeconfig')


@pytest.mark.parametrize(("env", "expected"), [
    ({"VECTOR_SELF_NODE_NAME": "v", "NODE_NAME": "n"}, "v"),
    ({"NODE_NAME": "n"}, "n"),
    ({}, None),
])
def test_the_node_name_defaults_as_in_vector(env: dict[str, str], expected: str | None) -> None:
    raw = {"sources": {"a": {"type": "kubernetes_logs"}}, "sinks": {"out": {"type": "console", "inputs": ["a"]}}}
    assert build_config(raw, env).kubernetes.node_name == expected


def test_a_condition_in_each_of_vectors_forms() -> None:
    raw = yaml.safe_load("""
    kubernetes: {node_name: n1}
    sources: {pods: {type: kubernetes_logs}}
    transforms:
      f: {type: filter, inputs: [pods], condition: {type: vrl, source: '.stream == "stderr"'}}
      logs: {type: filter, inputs: [pods], condition: {type: is_log}}
      r:
        type: route
        inputs: [pods]
        reroute_unmatched: false
        route: {err: {type: vrl, source: '.stream == "stderr"'}, none: {type: is_metric}}
    sinks: {out: {type: console, inputs: [f, logs, r.err, r.none]}}
    """)
    config = build_config(raw, {})
    check_graph(config)
    raw["sinks"]["out"]["inputs"].append("r._unmatched")
    with pytest.raises(ConfigError, match=r"r has no output \"_unmatched\""):
        check_graph(build_config(raw, {}))
    raw["transforms"]["f"]["condition"] = {"type": "vrl", "source": ".a == ", "extra": 1}
    raw["transforms"]["logs"]["condition"] = {"type": "lua"}
    with pytest.raises(ConfigError) as info:
        build_config(raw, {})
    assert [e.path for e in info.value.errors] == ["transforms.f.condition.extra", "transforms.logs.condition.type"]


def test_readme_shows_exactly_the_rendered_table() -> None:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- vector-keys:start -->\n(.*?)<!-- vector-keys:end -->", text, re.S)
    assert match, "README lacks the vector-keys markers"
    assert match.group(1) == render_markdown(), "run: python -m logagent.vector_keys (and paste between the markers)"


def test_global_acknowledgements_in_its_short_form() -> None:
    raw = {"acknowledgements": True, "sources": {"a": {"type": "kubernetes_logs"}},
           "sinks": {"o": {"type": "console", "inputs": ["a"]}}}
    assert list(build_config(raw, {}).sinks) == ["o"]
