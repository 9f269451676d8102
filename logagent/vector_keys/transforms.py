"""Vector's documented keys of the transforms logagent implements, with their status here.

``parse_json`` has no Vector twin (Vector parses JSON in ``remap``), so it is not listed.
"""

from __future__ import annotations

from typing import Any

from logagent.vector_keys.model import VectorKey

_VRL = '.kubernetes.pod_namespace == "default"'
_GRAPH = VectorKey("graph", "accepted", "only drawn by `vector graph`; nothing to do when running", {"node_attributes": {"color": "red"}})
_DATADOG = (
    "Datadog's search syntax is not implemented; write the condition in VRL "
    '(`{type: vrl, source: \'.service == "web"\'}`)'
)
_IS_LOG = "every record here is a log: `is_log` is always true, `is_metric` and `is_trace` always false"


def _common() -> tuple[VectorKey, ...]:
    return (VectorKey("inputs", "same", "ids of sources and transforms (or their outputs, `route.name`); wildcards "
                      "such as `kube_*` expand to every output they match, as in Vector", None), _GRAPH)


def _conditions(key: str) -> tuple[VectorKey, ...]:
    """A condition option in each of Vector's forms."""
    return (
        VectorKey(key, "same", "a VRL program (README, Conditions: compiled as Vector compiles one)", _VRL),
        VectorKey(key, "same", "Vector's mapping form `{type: vrl, source: ...}`", {"type": "vrl", "source": _VRL}),
        VectorKey(key, "same", _IS_LOG, {"type": "is_log"}),
        VectorKey(key, "refused", _DATADOG, {"type": "datadog_search", "source": "service:web"}),
    )


def _not_datadog(value: Any) -> bool:
    return not (isinstance(value, dict) and value.get("type") == "datadog_search")


#: component type -> its Vector keys
TRANSFORMS_KEYS: dict[str, tuple[VectorKey, ...]] = {
    "filter": (*_common(), *_conditions("condition")),
    "route": (
        *_common(),
        *_conditions("route.*"),
        VectorKey("reroute_unmatched", "same", "false: no `<id>._unmatched` output; unmatched records are dropped", False),
    ),
    "remap": (
        *_common(),
        VectorKey("source", "same", "", ".tag = 1"),
        VectorKey("file", "same", "", None),
        VectorKey("files", "refused", "VRL module files are not supported; put the program in `source` or `file`", ["/etc/vrl/m.vrl"]),
        VectorKey("drop_on_error", "same", "", True),
        VectorKey("drop_on_abort", "same", "", False),
        VectorKey("reroute_dropped", "same", "", True),
        VectorKey("metric_tag_values", "same", "", "single"),
        VectorKey("timezone", "same", "", "UTC"),
        VectorKey("timezone", "refused", "only UTC is supported: VRL functions here read and write zone-less times as UTC",
                  "Europe/Paris"),
    ),
    "throttle": (
        *_common(),
        VectorKey("threshold", "same", "", 100),
        VectorKey("window_secs", "same", "", 1.0),
        VectorKey("key_field", "same", "", "{{ kubernetes.pod_name }}"),
        *_conditions("exclude")[:2],
        VectorKey("internal_metrics.emit_events_discarded_per_key", "same", "", False),
    ),
    "sample": (
        *_common(),
        VectorKey("rate", "same", "", 10),
        VectorKey("ratio", "same", "", None),
        VectorKey("ratio_field", "same", "a record's own ratio; without a valid one, `rate` or `ratio` applies",
                  "sample_ratio"),
        VectorKey("rate_field", "same", "a record's own rate; without a valid one, `rate` or `ratio` applies",
                  "sample_rate_n"),
        VectorKey("key_field", "same", "", "message"),
        VectorKey("group_by", "same", "", "{{ kubernetes.pod_name }}"),
        *_conditions("exclude")[:2],
        VectorKey("sample_rate_key", "same", "", "sample_rate"),
    ),
    "dedupe": (
        *_common(),
        VectorKey("fields.match", "same", "", ["message"]),
        VectorKey("fields.ignore", "same", "", None),
        VectorKey("cache.num_events", "same", "", 5000),
        VectorKey("time_settings.max_age_ms", "same", "", 60000),
        VectorKey("time_settings.refresh_on_drop", "same", "", None),
    ),
}

#: type -> path -> the values the same/accepted entries stand for (others get the refused entry's note)
TRANSFORMS_VALUES: dict[str, dict[str, Any]] = {
    "filter": {"condition": _not_datadog},
    "route": {"route.*": _not_datadog},
    "remap": {"timezone": lambda v: v in ("UTC", "utc", "Etc/UTC")},
}
