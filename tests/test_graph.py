"""Graph checks: inputs, route outputs, cycles, duplicates, unreachable components."""

from __future__ import annotations

import textwrap

import pytest

from logagent.config import ConfigError, parse_config
from logagent.graph import check_graph, check_kubernetes

HEAD = """
kubernetes: {node_name: n1}
sources:
  app_logs: {type: kubernetes_logs}
"""


def graph(text: str) -> list[str]:
    return check_graph(parse_config(HEAD + textwrap.dedent(text), {}))


def graph_error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        graph(text)
    return str(info.value)


def test_valid_graph_has_no_warnings() -> None:
    warnings = graph(
        """
        transforms:
          keep: {type: filter, inputs: [app_logs], condition: '.stream == "stdout"'}
          split: {type: route, inputs: [keep], route: {errors: '.stream == "stderr"'}}
        sinks:
          out: {type: console, inputs: [split.errors, split._unmatched]}
        """
    )
    assert warnings == []


def test_input_naming_nothing() -> None:
    message = graph_error("sinks:\n  out: {type: console, inputs: [nope]}\n")
    assert message == 'sinks.out.inputs[0]: "nope" names no source or transform'


def test_route_output_that_does_not_exist() -> None:
    message = graph_error(
        """
        transforms:
          split: {type: route, inputs: [app_logs], route: {errors: '.stream == "stderr"'}}
        sinks:
          out: {type: console, inputs: [split.warnings]}
        """
    )
    assert message.startswith('sinks.out.inputs[0]: "split.warnings": split has no output "warnings"')
    assert "errors" in message and "_unmatched" in message


def test_route_named_without_output() -> None:
    message = graph_error(
        """
        transforms:
          split: {type: route, inputs: [app_logs], route: {errors: '.stream == "stderr"'}}
        sinks:
          out: {type: console, inputs: [split]}
        """
    )
    assert "is a route" in message


def test_cycle_is_reported() -> None:
    message = graph_error(
        """
        transforms:
          a: {type: filter, inputs: [app_logs, c], condition: 'true'}
          b: {type: filter, inputs: [a], condition: 'true'}
          c: {type: filter, inputs: [b], condition: 'true'}
        sinks:
          out: {type: console, inputs: [c]}
        """
    )
    assert "cycle" in message and "a -> b -> c -> a" in message


def test_duplicate_id_across_sections() -> None:
    message = graph_error(
        """
        transforms:
          app_logs: {type: filter, inputs: [app_logs], condition: 'true'}
        sinks:
          out: {type: console, inputs: [app_logs]}
        """
    )
    assert message.startswith("transforms.app_logs: duplicate component id")


def test_sink_as_input() -> None:
    message = graph_error(
        """
        sinks:
          out: {type: console, inputs: [app_logs]}
          out2: {type: console, inputs: [out]}
        """
    )
    assert "is a sink" in message


def test_component_reaching_no_sink_is_a_warning() -> None:
    warnings = graph(
        """
        transforms:
          orphan: {type: filter, inputs: [app_logs], condition: 'true'}
        sinks:
          out: {type: console, inputs: [app_logs]}
        """
    )
    assert warnings == ["transforms.orphan: its output reaches no sink; its records are discarded"]


def test_no_sinks_is_an_error() -> None:
    assert graph_error("sinks: {}\n") == "sinks: expected at least one sink"


def test_node_name_required_for_the_api() -> None:
    config = parse_config("sources:\n  a: {type: kubernetes_logs}\nsinks:\n  o: {type: console, inputs: [a]}\n", {})
    with pytest.raises(ConfigError) as info:
        check_kubernetes(config)
    assert str(info.value).startswith("kubernetes.node_name: required")
