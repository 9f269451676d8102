"""Config files as Vector reads them: every error at once, formats by extension, several files merged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from logagent.cli import EXIT_CONFIG
from logagent.config import ConfigError, ConfigErrors, load_config, parse_config

REPO = Path(__file__).resolve().parent.parent


def validate(*args: str) -> tuple[int, str]:
    """``logagent validate`` in a child process (its logging set-up stays out of this one): exit status, stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("NODE_NAME", "VECTOR_SELF_NODE_NAME")}
    result = subprocess.run([sys.executable, "-m", "logagent", "validate", *args], capture_output=True, timeout=60,
                            cwd=REPO, env=env)
    return result.returncode, result.stderr.decode()


FIVE_MISTAKES = """
kubernetes:
  node_name: n1
  backof_max_ms: 10
sources:
  pods:
    type: kubernetes_logs
    multilin: {mode: auto}
    read_from: middle
sinks:
  out:
    type: console
    inputs: [pods]
    encoding: xml
  es:
    type: elasticsearch
    inputs: [pods]
    endpoints: 3
"""


def errors_of(text: str, fmt: str = "yaml", env: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(textwrap.dedent(text), env or {}, fmt)
    return [str(e) for e in info.value.errors]


def test_five_mistakes_are_reported_in_one_run() -> None:
    errors = errors_of(FIVE_MISTAKES)  # in the order of the file
    assert len(errors) == 5, errors
    assert errors[0].startswith("kubernetes.backof_max_ms: unknown key (did you mean `backoff_max_ms`?)")
    assert errors[1].startswith("sources.pods.multilin: unknown key (did you mean `multiline`?)")
    assert errors[2] == 'sources.pods.read_from: expected one of beginning, end, got "middle"'
    assert errors[3] == 'sinks.out.encoding: expected one of json, text, got "xml"'
    assert errors[4].startswith("sinks.es.endpoints")


def test_all_errors_is_one_config_error_whose_text_is_every_line() -> None:
    with pytest.raises(ConfigErrors) as info:
        parse_config(textwrap.dedent(FIVE_MISTAKES), {})
    assert str(info.value).count("\n") == 4
    assert isinstance(info.value, ConfigError)


def test_several_bad_keys_of_one_component_are_all_named() -> None:
    text = """
    kubernetes: {node_name: n1}
    sources:
      pods: {type: kubernetes_logs, colour: red, max_line_bytes: many, insert_node_fields: maybe}
    sinks:
      out: {type: console, inputs: [pods]}
    """
    errors = errors_of(text)
    assert [e.split(":")[0] for e in errors] == [
        "sources.pods.colour", "sources.pods.max_line_bytes", "sources.pods.insert_node_fields"]


def test_a_missing_required_key_does_not_hide_the_others() -> None:
    text = """
    kubernetes: {node_name: n1}
    sources:
      pods: {type: kubernetes_logs}
    sinks:
      out: {type: console, encoding: xml}
    """
    assert sorted(errors_of(text)) == ['sinks.out.encoding: expected one of json, text, got "xml"',
                                       "sinks.out.inputs: missing required key"]


TOML = """
data_dir = "/tmp/x"

[sources.pods]
type = "kubernetes_logs"
self_node_name = "${NODE}"

[transforms.errors]
type = "filter"
inputs = ["pods"]
condition = '.stream == "stderr"'

[sinks.out]
type = "console"
inputs = ["errors"]
"""


def test_toml_and_json_load_as_yaml_does_with_the_same_interpolation() -> None:
    from_toml = parse_config(TOML, {"NODE": "n7"}, "toml")
    assert from_toml.kubernetes.node_name == "n7" and from_toml.data_dir == "/tmp/x"
    import tomllib

    as_json = json.dumps(tomllib.loads(TOML.replace("${NODE}", "$NODE")))
    from_json = parse_config(as_json, {"NODE": "n7"}, "json")
    assert from_json == from_toml


@pytest.mark.parametrize(("fmt", "text", "where"), [
    ("toml", "[sources.pods]\ntype = \n", "line 2"),
    ("json", '{"sources": {\n  "a": 1,\n}', "line 3"),
    ("yaml", "sources:\n  a: [1\n", "line 3"),
    ("json", '{"a": 1, "a": 2}', "duplicate key 'a'"),
])
def test_syntax_errors_name_the_line(tmp_path: Path, fmt: str, text: str, where: str) -> None:
    path = tmp_path / f"agent.{fmt}"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, {})
    assert str(info.value).startswith(f"{path}: invalid {fmt.upper()}: ") or str(path) in str(info.value)
    assert where in str(info.value)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_several_files_merge_and_a_component_defined_twice_names_both(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", "kubernetes: {node_name: n1}\nsources:\n  pods: {type: kubernetes_logs}\n")
    b = write(tmp_path / "b.toml", '[sinks.out]\ntype = "console"\ninputs = ["pods"]\n')
    config = load_config([a, b], {})
    assert list(config.sources) == ["pods"] and list(config.sinks) == ["out"]
    c = write(tmp_path / "c.json", '{"sources": {"pods": {"type": "kubernetes_logs"}}}')
    with pytest.raises(ConfigError) as info:
        load_config([a, b, c], {})
    assert str(info.value) == f"sources.pods: defined in both {a} and {c}"


def test_settings_that_disagree_across_files_name_both(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", "data_dir: /one\nkubernetes: {node_name: n1}\nsources:\n  pods: {type: kubernetes_logs}\n")
    b = write(tmp_path / "b.yaml", "data_dir: /two\nkubernetes: {node_name: n1, initial_delay_ms: 0}\n"
                                   "sinks:\n  out: {type: console, inputs: [pods]}\n")
    with pytest.raises(ConfigError) as info:
        load_config([a, b], {})
    assert str(info.value) == f"data_dir: conflicting values in {a} and {b}"


def test_a_bad_key_names_the_file_it_came_from_when_files_were_merged(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", "kubernetes: {node_name: n1}\nsources:\n  pods: {type: kubernetes_logs}\n")
    b = write(tmp_path / "b.yaml", "sinks:\n  out: {type: console, inputs: [pods], colour: red}\n")
    with pytest.raises(ConfigError) as info:
        load_config([a, b], {})
    assert str(info.value).startswith("sinks.out.colour: unknown key") and str(info.value).endswith(f"(in {b})")


def test_a_config_dir_holds_whole_files_and_one_component_per_file(tmp_path: Path) -> None:
    write(tmp_path / "conf" / "agent.yaml", "kubernetes: {node_name: n1}\n")
    write(tmp_path / "conf" / "sources" / "pods.toml", 'type = "kubernetes_logs"\n')
    write(tmp_path / "conf" / "transforms" / "errors.yaml", "type: filter\ninputs: [pods]\ncondition: .stream == \"stderr\"\n")
    write(tmp_path / "conf" / "sinks" / "out.json", '{"type": "console", "inputs": ["errors"]}')
    write(tmp_path / "conf" / "README.md", "not a config\n")
    config = load_config([], {}, config_dirs=[tmp_path / "conf"])
    assert (list(config.sources), list(config.transforms), list(config.sinks)) == (["pods"], ["errors"], ["out"])


def test_validate_prints_every_error_and_exits_78(tmp_path: Path) -> None:
    path = write(tmp_path / "agent.yaml", FIVE_MISTAKES)
    status, err = validate("--config", str(path))
    assert status == EXIT_CONFIG
    assert "(5 errors)" in err
    for key in ("kubernetes.backof_max_ms", "sources.pods.multilin", "sources.pods.read_from", "sinks.out.encoding",
                "sinks.es.endpoints"):
        assert f"\n  {key}: " in err


def test_validate_takes_several_configs_and_a_dir(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", "kubernetes: {node_name: n1}\n")
    write(tmp_path / "d" / "sources" / "pods.yaml", "type: kubernetes_logs\n")
    write(tmp_path / "d" / "sinks.yaml", "sinks:\n  out: {type: console, inputs: [pods]}\n")
    status, err = validate("--config", str(a), "--config-dir", str(tmp_path / "d"))
    assert status == 0 and "is valid" in err, err


def test_graph_errors_are_reported_together_with_the_node_name(tmp_path: Path) -> None:
    path = write(tmp_path / "agent.yaml", """
    sources:
      pods: {type: kubernetes_logs}
    transforms:
      f: {type: filter, inputs: [podz], condition: 'true'}
    sinks:
      out: {type: console, inputs: [f, nothing]}
    """)
    status, err = validate("--config", str(path))
    assert status == EXIT_CONFIG
    assert "(3 errors)" in err
    for line in ('transforms.f.inputs[0]: "podz" names no source or transform',
                 'sinks.out.inputs[1]: "nothing" names no source or transform', "kubernetes.node_name: required"):
        assert f"\n  {line}" in err


def test_a_config_dir_with_vector_unit_tests_is_refused_not_skipped(tmp_path: Path) -> None:
    write(tmp_path / "conf" / "agent.yaml", "kubernetes: {node_name: n1}\nsources:\n  pods: {type: kubernetes_logs}\n"
                                            "sinks:\n  out: {type: console, inputs: [pods]}\n")
    write(tmp_path / "conf" / "tests" / "parsing.yaml", "inputs: []\noutputs: []\n")
    with pytest.raises(ConfigError) as info:
        load_config([], {}, config_dirs=[tmp_path / "conf"])
    assert str(info.value).startswith("tests: Vector's unit tests (`vector test`) are not run here")


def test_a_config_path_may_be_a_glob_as_in_vector(tmp_path: Path) -> None:
    write(tmp_path / "etc" / "a.toml", '[kubernetes]\nnode_name = "n1"\n[sources.pods]\ntype = "kubernetes_logs"\n')
    write(tmp_path / "etc" / "b.toml", '[sinks.out]\ntype = "console"\ninputs = ["pods"]\n')
    config = load_config([str(tmp_path / "etc" / "*.toml")], {})
    assert (list(config.sources), list(config.sinks)) == (["pods"], ["out"])
    with pytest.raises(ConfigError, match="no config file matches this pattern"):
        load_config([str(tmp_path / "etc" / "*.yaml")], {})


WILDCARDS = """
kubernetes: {node_name: n1}
sources:
  kube_apps: {type: kubernetes_logs}
  kube_system: {type: kubernetes_logs}
transforms:
  split:
    type: route
    inputs: ["kube_*"]
    route: {errors: '.stream == "stderr"'}
sinks:
  out: {type: console, inputs: ["split.*", "kube_sys*"]}
  none: {type: console, inputs: ["nothing_*"]}
"""


def test_inputs_wildcards_expand_as_in_vector() -> None:
    from logagent.graph import check_graph

    config = parse_config(textwrap.dedent(WILDCARDS).replace('  none: {type: console, inputs: ["nothing_*"]}\n', ""), {})
    assert config.transforms["split"].inputs == ["kube_apps", "kube_system"]
    assert config.sinks["out"].inputs == ["split.errors", "split._unmatched", "kube_system"]
    check_graph(config)


def test_a_wildcard_matching_nothing_is_an_error_unless_relaxed() -> None:
    from logagent.graph import check_graph

    with pytest.raises(ConfigError, match=r'sinks.none.inputs\[0\]: "nothing_\*" names no source or transform'):
        check_graph(parse_config(textwrap.dedent(WILDCARDS), {}))
    relaxed = parse_config("wildcard_matching: relaxed\n" + textwrap.dedent(WILDCARDS).replace(
        '["nothing_*"]', '["nothing_*", "kube_apps"]'), {})
    assert relaxed.sinks["none"].inputs == ["kube_apps"]
    check_graph(relaxed)
