"""Which multiline grouping a file gets: its source's ``multiline``, or its pod's annotation.

``logagent.dev/multiline`` on a pod (the prefix of the exclusion label and
annotation) overrides the source's setting for every container of the pod:
``none``, ``auto``, or one or more detector names separated by commas
(``java``, ``python``, ``go``, ``ruby``, ``nodejs`` or its alias
``javascript``, ``dotnet``, ``php``, ``dart``, ``rust``). The source's
``timeout_ms``, ``max_lines`` and ``max_bytes`` still apply. Patterns cannot
be set by annotation: a regex from every pod author would run on the agent's
hot path. An invalid value is warned about (rate-limited) and ignored.
"""

from __future__ import annotations

import structlog

from logagent.kube.model import PodMeta
from logagent.observe.ratelimit import warn_limited
from logagent.parsers.multiline import MultilineGrouper, MultilineStats
from logagent.parsers.multiline_machine import Machine, compile_user_pattern, pattern_machine
from logagent.sources.kubernetes_logs_config import MultilineConfig

log = structlog.get_logger(__name__)

MULTILINE_ANNOTATION = "logagent.dev/multiline"


def config_machine(config: MultilineConfig) -> Machine | None:
    """The machine of a validated ``multiline`` config; None for ``mode: none``."""
    if config.mode == "auto":
        from logagent.parsers.multiline_rules import AUTO, language_machine  # the tables: only when used

        return language_machine(config.languages or AUTO)
    if config.mode == "pattern":
        assert config.start_pattern is not None
        start = compile_user_pattern(config.start_pattern, "start_pattern")
        condition = (
            compile_user_pattern(config.condition_pattern, "condition_pattern")
            if config.condition_pattern is not None
            else None
        )
        return pattern_machine(start, condition, config.condition_mode)
    return None


def annotation_machine(value: str) -> Machine | None:
    """The machine an annotation value names; None for ``none``. Raises ValueError if invalid."""
    from logagent.parsers.multiline_rules import AUTO, language_machine, language_names  # the tables: only when used

    names = [name.strip().lower() for name in value.split(",") if name.strip()]
    if names == ["none"]:
        return None
    if names == ["auto"]:
        return language_machine(AUTO)
    unknown = [name for name in names if name not in language_names()]
    if unknown or not names:
        raise ValueError(f"expected none, auto or some of {', '.join(language_names())}; got {value!r}")
    return language_machine(names)


class MultilineChoice:
    """Per source: the default machine, the annotation's override, the shared counters."""

    def __init__(self, config: MultilineConfig, source_id: str) -> None:
        self.config = config
        self.source_id = source_id
        self.default = config_machine(config)
        self.stats = MultilineStats()

    def machine(self, pod: PodMeta | None) -> Machine | None:
        value = pod.annotations.get(MULTILINE_ANNOTATION) if pod is not None else None
        if value is None:
            return self.default
        try:
            return annotation_machine(value)
        except ValueError as exc:
            warn_limited(
                log,
                ("multiline_annotation", self.source_id, pod.uid if pod is not None else ""),
                f"ignoring pod annotation {MULTILINE_ANNOTATION}",
                source=self.source_id,
                pod=f"{pod.namespace}/{pod.name}" if pod is not None else None,
                reason=str(exc),
            )
            return self.default

    def grouper(self, machine: Machine) -> MultilineGrouper:
        config = self.config
        return MultilineGrouper(
            machine,
            self.stats,
            timeout_ms=config.timeout_ms,
            max_lines=config.max_lines,
            max_bytes=config.max_bytes,
        )
