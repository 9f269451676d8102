"""The output ports of a config's components, and Vector's wildcards in ``inputs``.

Kept apart from ``graph.py`` (the checks) so that ``config.py`` can expand
wildcards while loading without importing the checks that import it.
"""

from __future__ import annotations

import fnmatch
from typing import Any

from logagent.transforms.remap_config import DROPPED, RemapConfig
from logagent.transforms.route import UNMATCHED, RouteConfig


def output_ports(config: Any) -> dict[str, str]:
    """Every port an input may name, mapped to the component that owns it."""
    ports: dict[str, str] = {}
    for component_id in config.sources:
        ports[component_id] = component_id
    for component_id, transform in config.transforms.items():
        if isinstance(transform, RouteConfig):
            for name in list(transform.route) + ([UNMATCHED] if transform.reroute_unmatched else []):
                ports[f"{component_id}.{name}"] = component_id
        elif isinstance(transform, RemapConfig) and transform.reroute_dropped:
            ports[component_id] = component_id
            ports[f"{component_id}.{DROPPED}"] = component_id
        else:
            ports[component_id] = component_id
    return ports


def expand_input_wildcards(config: Any, relaxed: bool = False) -> None:
    """Replace each ``inputs`` pattern (``kube_*``) by the ports it matches, as Vector does.

    A component never matches itself; a pattern that matches nothing stays as
    written (the graph check then names it), unless ``relaxed`` (Vector's
    ``wildcard_matching: relaxed``), where it is dropped.
    """
    ports = list(output_ports(config))
    for section in ("transforms", "sinks"):
        for component_id, component in getattr(config, section).items():
            if component is None or not any(_is_pattern(name) for name in component.inputs):
                continue
            expanded: list[str] = []
            for name in component.inputs:
                matches = [p for p in ports if p.split(".")[0] != component_id and fnmatch.fnmatchcase(p, name)]
                if not _is_pattern(name) or (not matches and not relaxed):
                    matches = [name]
                expanded.extend(m for m in matches if m not in expanded)
            component.inputs = expanded


def _is_pattern(name: str) -> bool:
    return any(ch in name for ch in "*?[")
