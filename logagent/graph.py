"""Static checks of the component graph, run by ``validate`` and before ``run``.

``output_ports`` lives in ``ports.py`` and is re-exported here.
"""

from __future__ import annotations

from logagent.config import Config, ConfigError, component_error
from logagent.sinks.prometheus.config import PrometheusExporterConfig
from logagent.config_errors import raise_all
from logagent.ports import output_ports
from logagent.sinks.template_fields import unknown_template_field
from logagent.sources.internal_metrics import is_metrics_source, log_sources
from logagent.transforms.route import RouteConfig


def check_graph(config: Config) -> list[str]:
    """Raise ConfigError for a broken graph (every problem found at once); return warnings for a wasteful one."""
    errors = _check_ids(config)
    ports = output_ports(config)
    consumers = _check_inputs(config, ports, errors)
    errors += metrics_edge_errors(config)
    if not errors:  # a cycle is only looked for in a graph whose edges all exist
        _check_cycles(config, ports)
    errors += _check_templates(config)
    raise_all(errors)
    return _unreachable_warnings(config, consumers)


def _check_ids(config: Config) -> list[ConfigError]:
    errors = []
    seen: dict[str, str] = {}
    for section in ("sources", "transforms", "sinks"):
        for component_id in getattr(config, section):
            if component_id in seen:
                errors.append(ConfigError(f"duplicate component id, already used in {seen[component_id]}",
                                          f"{section}.{component_id}"))
            elif not component_id or "." in component_id:
                errors.append(ConfigError("component ids may not be empty or contain '.'", f"{section}.{component_id}"))
            seen[component_id] = section
    if not config.sources:
        errors.append(ConfigError("expected at least one source", "sources"))
    if not config.sinks:
        errors.append(ConfigError("expected at least one sink", "sinks"))
    return errors


def _check_inputs(config: Config, ports: dict[str, str], errors: list[ConfigError]) -> dict[str, list[str]]:
    """Every input names an output port (else an error in ``errors``); returns component -> the components reading it."""
    consumers: dict[str, list[str]] = {}
    for section in ("transforms", "sinks"):
        for component_id, component in getattr(config, section).items():
            path = f"{section}.{component_id}.inputs"
            if not component.inputs:
                errors.append(ConfigError("expected at least one input", path))
            for index, name in enumerate(component.inputs):
                if name not in ports:
                    errors.append(ConfigError(_unknown_input(config, ports, component_id, name), f"{path}[{index}]"))
                else:
                    consumers.setdefault(ports[name], []).append(component_id)
    return consumers


def metrics_edge_errors(config: Config) -> list[ConfigError]:
    """Metrics go from ``internal_metrics`` to ``prometheus_exporter`` only, and records never there."""
    errors: list[ConfigError] = []
    for section in ("transforms", "sinks"):
        for component_id, component in getattr(config, section).items():
            exporter = isinstance(component, PrometheusExporterConfig)
            for index, name in enumerate(component.inputs):
                metrics = is_metrics_source(config.sources.get(name))
                if metrics and not exporter:
                    errors.append(ConfigError(f'"{name}" is an internal_metrics source: its metrics go to a '
                                              "prometheus_exporter sink only (no records come from it)",
                                              f"{section}.{component_id}.inputs[{index}]"))
                if exporter and not metrics:
                    errors.append(ConfigError(f'"{name}" gives log records; a prometheus_exporter takes internal_metrics '
                                              "sources only", f"{section}.{component_id}.inputs[{index}]"))
    return errors


def _unknown_input(config: Config, ports: dict[str, str], component_id: str, name: str) -> str:
    """Why ``name`` is not an input ``component_id`` can read, as helpfully as the config allows."""
    head, _, tail = name.partition(".")
    if head in config.transforms and tail:
        outputs = [p.partition(".")[2] for p, owner in ports.items() if owner == head and "." in p]
        if outputs:
            return f'"{name}": {head} has no output "{tail}"; expected one of {", ".join(outputs)}'
    transform = config.transforms.get(name)
    if isinstance(transform, RouteConfig):
        return f'"{name}" is a route; name one of its outputs, e.g. "{name}.{next(iter(transform.route))}"'
    if name in config.sinks:
        return f'"{name}" is a sink; sinks have no output'
    if name == component_id:
        return f'"{name}" names this component itself'
    return f'"{name}" names no source or transform'


def _unreachable_warnings(config: Config, consumers: dict[str, list[str]]) -> list[str]:
    reaches_sink = set(config.sinks)
    changed = True
    while changed:
        changed = False
        for component_id, downstream in consumers.items():
            if component_id not in reaches_sink and any(d in reaches_sink for d in downstream):
                reaches_sink.add(component_id)
                changed = True
    return [
        f"{section}.{component_id}: its output reaches no sink; its records are discarded"
        for section in ("sources", "transforms")
        for component_id in getattr(config, section)
        if component_id not in reaches_sink
    ]


def _check_cycles(config: Config, ports: dict[str, str]) -> None:
    edges: dict[str, list[str]] = {t: [] for t in config.transforms}
    for component_id, transform in config.transforms.items():
        for name in transform.inputs:
            upstream = ports.get(name)
            if upstream in config.transforms:
                edges[upstream].append(component_id)
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in edges[node]:
            if state.get(nxt) == 1:
                cycle = trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt]
                raise ConfigError(f"cycle: {' -> '.join(cycle)}", f"transforms.{nxt}.inputs")
            if nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in edges:
        if node not in state:
            visit(node, [node])


def check_config(config: Config) -> list[str]:
    """``check_graph`` and ``check_kubernetes`` together: every error of both at once; the warnings."""
    errors: list[ConfigError] = []
    warnings: list[str] = []
    try:
        warnings = check_graph(config)
    except ConfigError as exc:
        errors += exc.errors
    try:
        check_kubernetes(config)
    except ConfigError as exc:
        errors += exc.errors
    raise_all(errors)
    return warnings


def check_kubernetes(config: Config) -> None:
    if not log_sources(config.sources):
        return
    kube = config.kubernetes
    if kube.snapshot is None and not kube.node_name:
        raise ConfigError(
            "required when metadata comes from the Kubernetes API: set it from the downward API "
            "(${NODE_NAME}), or set kubernetes.snapshot to run offline",
            "kubernetes.node_name",
        )


def _check_templates(config: Config) -> list[ConfigError]:
    """Every field a sink's templates name must be one some source or transform gives."""
    errors = []
    for component_id, sink in config.sinks.items():
        problem = unknown_template_field(sink, config)
        if problem is not None:
            errors.append(component_error(f"sinks.{component_id}", problem))
    return errors
