"""Vector's documented keys of the sources logagent implements, with their status here."""

from __future__ import annotations

from typing import Any

from logagent.vector_keys.model import VectorKey

_POD_FIELDS = (
    "container_id", "container_image", "container_image_id", "container_name", "pod_annotations", "pod_ip",
    "pod_ips", "pod_labels", "pod_name", "pod_namespace", "pod_node_name", "pod_owner", "pod_uid",
)
_FINGERPRINT = (
    "files are told apart by device and inode, guarded by a hash of their first bytes, so a shared first "
    "line (what this tunes in Vector) never makes two files one"
)
_SHARED = "shared by every source (one pod watch per process): two sources that set it differently are an error"

_KUBERNETES_LOGS: tuple[VectorKey, ...] = (
    VectorKey("type", "same", "", "kubernetes_logs"),
    VectorKey("self_node_name", "same", "maps to `kubernetes.node_name`; default `${VECTOR_SELF_NODE_NAME}`, "
              "then `${NODE_NAME}`; " + _SHARED, "node-a"),
    VectorKey("kube_config_file", "same", "maps to `kubernetes.kubeconfig`; " + _SHARED, "/etc/kube/config"),
    VectorKey("data_dir", "same", "maps to the global `data_dir` (checkpoints live there); " + _SHARED, "/var/lib/vector"),
    VectorKey("auto_partial_merge", "same", "", True),
    VectorKey("max_line_bytes", "accepted", "a longer line is cut and marked `truncated: true` rather than "
              "dropped, so nothing is lost without a trace", 32768),
    VectorKey("max_merged_line_bytes", "same", "", 65536),
    VectorKey("max_merged_line_action", "same", "truncate: cut and marked `truncated: true`", "truncate"),
    VectorKey("max_merged_line_action", "refused", "logagent never drops an oversized line: it is cut and marked "
              "`truncated: true`; use `truncate` (or leave the key out)", "drop"),
    VectorKey("max_read_bytes", "same", "", 2048 * 4),
    VectorKey("read_from", "same", "", "end"),
    VectorKey("ignore_older_secs", "same", "", 600),
    VectorKey("oldest_first", "same", "", True),
    VectorKey("include_paths_glob_patterns", "same", "", ["**/*"]),
    VectorKey("exclude_paths_glob_patterns", "same", "", ["**/*.gz", "**/exclude/**"]),
    VectorKey("rotate_wait_secs", "same", "", 300),
    VectorKey("delay_deletion_ms", "same", "the longest of all sources applies (one shared pod store)", 60000),
    VectorKey("extra_label_selector", "same", "applied in addition to the `vector.dev/exclude` label, as in Vector",
              "app!=noisy"),
    VectorKey("extra_field_selector", "same", "", "metadata.name!=pod-name-to-exclude"),
    VectorKey("extra_namespace_label_selector", "same", "", "team!=internal"),
    VectorKey("insert_namespace_fields", "same", "", False),
    VectorKey("glob_minimum_cooldown_ms", "same", "maps to `rescan_interval_secs` (new files are also seen at once "
              "by inotify)", 60000),
    VectorKey("fingerprint_lines", "accepted", _FINGERPRINT, 1),
    VectorKey("fingerprinting", "accepted", _FINGERPRINT, {"strategy": "checksum", "lines": 1}),
    VectorKey("use_apiserver_cache", "accepted", "the initial state always comes from the apiserver's watch cache "
              "(watch-list or `resourceVersion=0`)", True),
    VectorKey("use_apiserver_cache", "refused", "logagent always reads from the apiserver's watch cache, to be gentle "
              "with it at a DaemonSet rollout; remove the key or set `true`", False),
    VectorKey("timezone", "accepted", "kubelet timestamps always carry their zone, so there is no zone-less time "
              "to apply it to", "UTC"),
    VectorKey("ingestion_timestamp_field", "same", "a top-level field (a nested path is refused: it would split "
              "the shared `kubernetes` object per record)", ".ingest_timestamp"),
    VectorKey("internal_metrics.include_file_tag", "same", "false: metric labels are bounded (never a file)", False),
    VectorKey("internal_metrics.include_file_tag", "refused", "metric labels here are bounded: never a file or a pod "
              "(per-file lag is in `logagent top`)", True),
    VectorKey("log_namespace", "same", "false: the legacy layout, the only one here", False),
    VectorKey("log_namespace", "refused", "Vector's log namespaces are not implemented: records keep the legacy "
              "layout", True),
    VectorKey("namespace_annotation_fields.namespace_labels", "same", "", ".k8s.ns_labels"),
    VectorKey("node_annotation_fields.node_labels", "same", "", ".k8s.node_labels"),
    *(VectorKey(f"pod_annotation_fields.{name}", "same", "", f".k8s.{name}") for name in _POD_FIELDS),
    VectorKey("annotation_fields", "same", "Vector's old name of `pod_annotation_fields`", {"pod_name": ".k8s.pod"}),
)

#: component type -> its Vector keys
SOURCES_KEYS: dict[str, tuple[VectorKey, ...]] = {"kubernetes_logs": _KUBERNETES_LOGS}

#: type -> path -> the values the same/accepted entry stands for (others get the refused entry's note)
SOURCES_VALUES: dict[str, dict[str, Any]] = {
    "kubernetes_logs": {
        "max_merged_line_action": lambda v: v == "truncate",
        "use_apiserver_cache": lambda v: v is True,
        "internal_metrics.include_file_tag": lambda v: v is False,
        "log_namespace": lambda v: v is False,
    }
}
