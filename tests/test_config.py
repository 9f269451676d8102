"""Config parsing: every error names its key path and says what was expected."""

from __future__ import annotations

import textwrap

import pytest

from logagent.config import SINK_KINDS, ConfigError, interpolate, parse_config
from logagent.sinks.console import ConsoleSinkConfig
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig
from logagent.transforms.route import RouteConfig

BASE = """
kubernetes:
  node_name: n1
sources:
  app_logs:
    type: kubernetes_logs
sinks:
  out:
    type: console
    inputs: [app_logs]
"""


def parse(text: str, env: dict[str, str] | None = None):
    return parse_config(textwrap.dedent(text), env or {})


def error_of(text: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        parse(text, env)
    return str(info.value)


def test_minimal_config_gets_vector_defaults() -> None:
    config = parse(BASE)
    source = config.sources["app_logs"]
    assert isinstance(source, KubernetesLogsConfig)
    assert source.log_dir == "/var/log/pods"
    assert source.insert_namespace_fields is True
    assert source.pod_annotation_fields.pod_name == ".kubernetes.pod_name"
    assert source.exclude_paths_glob_patterns == ["**/*.gz", "**/*.tmp"]
    sink = config.sinks["out"]
    assert isinstance(sink, ConsoleSinkConfig) and sink.encoding == "json"
    assert config.data_dir == "/var/lib/logagent"


def test_api_listens_on_loopback_unless_told_otherwise() -> None:
    # as Vector's API: /metrics is not served on every interface of a laptop or CI machine
    assert parse(BASE).api.address == "127.0.0.1:8686" and parse(BASE).api.enabled
    assert parse(BASE + "api: {address: '0.0.0.0:8686'}\n").api.address == "0.0.0.0:8686"


def test_enum_error_lists_choices() -> None:
    message = error_of(BASE + "    encoding: xml\n")
    assert message == 'sinks.out.encoding: expected one of json, text, got "xml"'


def test_unknown_key_is_named_with_its_path() -> None:
    message = error_of(BASE + "    colour: red\n")
    assert message.startswith("sinks.out.colour: unknown key")
    assert "encoding" in message


def test_unknown_key_in_nested_struct() -> None:
    text = BASE.replace("type: kubernetes_logs", "type: kubernetes_logs\n    pod_annotation_fields: {pod_nam: .k.n}")
    assert error_of(text).startswith("sources.app_logs.pod_annotation_fields.pod_nam: unknown key")


def test_wrong_type_names_key_and_expected_type() -> None:
    text = BASE.replace("type: kubernetes_logs", "type: kubernetes_logs\n    insert_namespace_fields: maybe")
    assert error_of(text) == 'sources.app_logs.insert_namespace_fields: expected true or false, got "maybe"'


def test_unknown_component_type() -> None:
    text = BASE.replace("type: console", "type: konsole")
    assert error_of(text) == (
        f'sinks.out.type: expected one of {", ".join(SINK_KINDS)}, got "konsole" (did you mean `console`?)'
    )


def test_a_vector_type_we_do_not_have_says_what_to_use_instead() -> None:
    message = error_of(BASE.replace("type: console", "type: kafka"))
    assert message.startswith("sinks.out.type: Vector's `kafka` is not implemented by logagent; use instead: ")
    assert "http sink" in message


def test_missing_required_key() -> None:
    text = BASE.replace("    inputs: [app_logs]\n", "")
    assert error_of(text) == "sinks.out.inputs: missing required key"


def test_list_item_type_error_has_index() -> None:
    text = BASE.replace("inputs: [app_logs]", "inputs: [app_logs, 3]")
    assert error_of(text) == "sinks.out.inputs[1]: expected a string, got 3"


def test_condition_syntax_error_is_a_config_error_with_position() -> None:
    text = BASE + textwrap.dedent(
        """\
        transforms:
          f:
            type: filter
            inputs: [app_logs]
            condition: '.message == '
        """
    )
    message = error_of(text)
    assert message.startswith("transforms.f.condition: line 1, column")
    assert "^" in message


def test_route_names_are_checked() -> None:
    text = BASE + "transforms:\n  r:\n    type: route\n    inputs: [app_logs]\n    route:\n      _unmatched: '.stream == \"stderr\"'\n"
    assert error_of(text).startswith("transforms.r.route._unmatched:")


def test_duplicate_key_in_yaml_is_an_error() -> None:
    text = BASE + "  out:\n    type: console\n    inputs: [app_logs]\n"
    assert "duplicate key 'out'" in error_of(text)


def test_yaml_syntax_error_has_a_line() -> None:
    assert error_of("sources: [a\n").startswith("invalid YAML: line")


def test_field_path_must_be_valid() -> None:
    text = BASE.replace("type: kubernetes_logs", 'type: kubernetes_logs\n    pod_annotation_fields: {pod_name: ".kubernetes..x"}')
    assert error_of(text).startswith("sources.app_logs.pod_annotation_fields.pod_name: expected a field path")


def test_empty_field_path_removes_the_field_and_is_valid() -> None:
    text = BASE.replace("type: kubernetes_logs", 'type: kubernetes_logs\n    pod_annotation_fields: {pod_annotations: ""}')
    assert parse(text).sources["app_logs"].pod_annotation_fields.pod_annotations == ""


def test_bad_selector_is_named() -> None:
    text = BASE.replace("type: kubernetes_logs", 'type: kubernetes_logs\n    extra_label_selector: "app in ("')
    assert error_of(text).startswith("sources.app_logs.extra_label_selector:")


def test_route_config_parses() -> None:
    text = BASE + "transforms:\n  r:\n    type: route\n    inputs: [app_logs]\n    route:\n      errors: '.stream == \"stderr\"'\n"
    assert isinstance(parse(text).transforms["r"], RouteConfig)


# ------------------------------------------------------------ interpolation


def test_interpolation_with_default_and_literal_dollar() -> None:
    env = {"NODE_NAME": "node-7"}
    assert interpolate("${NODE_NAME} ${MISSING:-fallback} $$HOME ${NODE_NAME:-x}", env) == "node-7 fallback $HOME node-7"


def test_unset_variable_without_default_is_named() -> None:
    with pytest.raises(ConfigError) as info:
        interpolate("a: 1\nnode: ${NODE_NAME}\n", {})
    assert "NODE_NAME" in str(info.value) and "line 2" in str(info.value)


def test_interpolation_applies_before_parsing() -> None:
    config = parse(BASE.replace("node_name: n1", "node_name: ${NODE_NAME}"), {"NODE_NAME": "worker-3"})
    assert config.kubernetes.node_name == "worker-3"


def test_empty_variable_uses_default_with_colon_dash() -> None:
    assert interpolate("${X:-d}", {"X": ""}) == "d"
    assert interpolate("${X}", {"X": ""}) == ""


def test_a_variable_with_a_line_break_is_refused_as_in_vector() -> None:
    with pytest.raises(ConfigError, match="A contains a newline"):
        interpolate("x: ${A}", {"A": "1\nsinks: {}"})


def test_vector_interpolation_forms() -> None:
    env = {"SET": "v", "EMPTY": ""}
    assert interpolate("${EMPTY-d} ${EMPTY:-d} ${UNSET-d} $SET ${SET:?must} $$", env) == " d d v v $"
    with pytest.raises(ConfigError, match="EMPTY is required: give it"):
        interpolate("${EMPTY:?give it}", env)
    assert interpolate("${EMPTY?give it}", env) == ""
