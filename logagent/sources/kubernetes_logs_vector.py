"""Vector's per-source ``kubernetes_logs`` keys that are shared settings here.

Vector runs one pod watch per source, so each source names its node, its
kubeconfig and its checkpoint directory; logagent runs one per process, so
those keys move to the ``kubernetes`` block (``self_node_name`` ->
``node_name``, ``kube_config_file`` -> ``kubeconfig``) and to the global
``data_dir``. Two sources (or a source and the block) that disagree are an
error naming both. Without any node name, ``${VECTOR_SELF_NODE_NAME}`` (Vector's
default) and then ``${NODE_NAME}`` are used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from logagent.config_errors import ConfigError, show

#: Vector's per-source key -> where it goes (a top-level key, or kubernetes.<key>)
SHARED_KEYS = {
    "self_node_name": ("kubernetes", "node_name"),
    "kube_config_file": ("kubernetes", "kubeconfig"),
    "data_dir": (None, "data_dir"),
}
NODE_NAME_VARIABLES = ("VECTOR_SELF_NODE_NAME", "NODE_NAME")


def apply_vector_source_keys(raw: dict[str, Any], env: Mapping[str, str]) -> list[ConfigError]:
    """Rewrite every kubernetes_logs source's Vector-only keys in place; the conflicts found."""
    errors: list[ConfigError] = []
    sources = raw.get("sources")
    chosen: dict[tuple[str | None, str], tuple[Any, str]] = {}
    for block, key in SHARED_KEYS.values():
        holder = raw.get(block) if block else raw
        if isinstance(holder, dict) and holder.get(key) is not None:
            chosen[(block, key)] = (holder[key], f"{block}.{key}" if block else key)
    for component_id, body in (sources.items() if isinstance(sources, dict) else ()):
        if not isinstance(body, dict) or body.get("type") != "kubernetes_logs":
            continue
        prefix = f"sources.{component_id}"
        errors.extend(_renames(body, prefix))
        for vector_key, target in SHARED_KEYS.items():
            if vector_key not in body:
                continue
            value = body.pop(vector_key)
            where = f"{prefix}.{vector_key}"
            if target in chosen and chosen[target][0] != value:
                first, other = chosen[target]
                errors.append(ConfigError(
                    f"{show(value)} here but {show(first)} in {other}: this setting is shared by every source "
                    "(one pod watch per process); give it once", where))
                continue
            chosen.setdefault(target, (value, where))
    for (block, key), (value, _) in chosen.items():
        holder = raw.setdefault(block, {}) if block else raw
        if isinstance(holder, dict):
            holder[key] = value
    _default_node_name(raw, env)
    return errors


def _renames(body: dict[str, Any], prefix: str) -> list[ConfigError]:
    errors: list[ConfigError] = []
    if "annotation_fields" in body:
        if "pod_annotation_fields" in body:
            errors.append(ConfigError("give pod_annotation_fields only (annotation_fields is its old name)",
                                      f"{prefix}.annotation_fields"))
            del body["annotation_fields"]
        else:
            body["pod_annotation_fields"] = body.pop("annotation_fields")
    if "glob_minimum_cooldown_ms" in body:
        value = body.pop("glob_minimum_cooldown_ms")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            errors.append(ConfigError(f"expected a number of milliseconds > 0, got {show(value)}",
                                      f"{prefix}.glob_minimum_cooldown_ms"))
        elif "rescan_interval_secs" in body:
            errors.append(ConfigError("give rescan_interval_secs or glob_minimum_cooldown_ms, not both",
                                      f"{prefix}.glob_minimum_cooldown_ms"))
        else:
            body["rescan_interval_secs"] = value / 1000
    return errors


def _default_node_name(raw: dict[str, Any], env: Mapping[str, str]) -> None:
    kube = raw.get("kubernetes")
    if kube is not None and not isinstance(kube, dict):
        return
    kube = kube or {}
    if kube.get("node_name") or kube.get("snapshot"):
        return
    for name in NODE_NAME_VARIABLES:
        if env.get(name):
            raw.setdefault("kubernetes", {})["node_name"] = env[name]
            return
