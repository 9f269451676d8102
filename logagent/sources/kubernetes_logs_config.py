"""Config of the kubernetes_logs source, named as Vector's kubernetes_logs source."""

from __future__ import annotations

from typing import Literal

import msgspec


def _field(default: str) -> str:
    return msgspec.field(default=default)


class PodAnnotationFields(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Where each pod field goes in the record; ``""`` leaves the field out."""

    container_id: str = ".kubernetes.container_id"
    container_image: str = ".kubernetes.container_image"
    container_image_id: str = ".kubernetes.container_image_id"
    container_name: str = ".kubernetes.container_name"
    pod_annotations: str = ".kubernetes.pod_annotations"
    pod_ip: str = ".kubernetes.pod_ip"
    pod_ips: str = ".kubernetes.pod_ips"
    pod_labels: str = ".kubernetes.pod_labels"
    pod_name: str = ".kubernetes.pod_name"
    pod_namespace: str = ".kubernetes.pod_namespace"
    pod_node_name: str = ".kubernetes.pod_node_name"
    pod_owner: str = ".kubernetes.pod_owner"
    pod_uid: str = ".kubernetes.pod_uid"


class NamespaceAnnotationFields(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    namespace_labels: str = ".kubernetes.namespace_labels"


class NodeAnnotationFields(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    node_labels: str = ".kubernetes.node_labels"


class MultilineConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``multiline``: join the lines of a stack trace (or of a custom format) into one record.

    Grouping is per file and stream, after partial-line merging. ``mode``:
    ``none`` (default), ``auto`` (built-in stack trace detectors, all of them
    or those in ``languages``), ``pattern`` (``start_pattern``, optionally
    ``condition_pattern`` with ``condition_mode``; Rust regex syntax as in
    Vector). A pod may choose its own with the ``logagent.dev/multiline``
    annotation.
    """

    mode: Literal["none", "auto", "pattern"] = "none"
    languages: list[Literal["java", "python", "go", "ruby", "nodejs", "javascript", "dotnet", "php", "dart", "rust"]] | None = None
    start_pattern: str | None = None
    condition_pattern: str | None = None
    condition_mode: Literal["continue_through", "continue_past", "halt_before", "halt_with"] | None = None
    #: an open group is emitted once no line joined it for this long
    timeout_ms: int = 1000
    #: caps of one record; the line that would exceed one begins the next record
    max_lines: int = 1000
    max_bytes: int = 131072

    def validate(self) -> None:
        """Raises ValueError("<key>: <reason>") with keys relative to ``multiline``."""
        if self.timeout_ms < 1:
            raise ValueError("timeout_ms: expected at least 1")
        if self.max_lines < 1:
            raise ValueError("max_lines: expected at least 1")
        if self.max_bytes < 64:
            raise ValueError("max_bytes: expected at least 64")
        if self.languages is not None and (self.mode != "auto" or not self.languages):
            raise ValueError("languages: only with mode: auto, and not empty")
        pattern_keys = ("start_pattern", "condition_pattern", "condition_mode")
        if self.mode != "pattern":
            for key in pattern_keys:
                if getattr(self, key) is not None:
                    raise ValueError(f"{key}: only with mode: pattern")
            return
        from logagent.parsers.multiline_machine import compile_user_pattern  # patterns only: no RE2 otherwise

        if self.start_pattern is None:
            raise ValueError("start_pattern: required with mode: pattern")
        if (self.condition_pattern is None) != (self.condition_mode is None):
            missing = "condition_mode" if self.condition_mode is None else "condition_pattern"
            raise ValueError(f"{missing}: condition_pattern and condition_mode go together")
        for key in ("start_pattern", "condition_pattern"):
            text = getattr(self, key)
            if text is not None:
                compile_user_pattern(text, key)


DEFAULT_EXCLUDE_PATTERNS = ["**/*.gz", "**/*.tmp"]


class KubernetesLogsConfig(
    msgspec.Struct, tag="kubernetes_logs", tag_field="type", forbid_unknown_fields=True, kw_only=True
):
    log_dir: str = "/var/log/pods"
    insert_namespace_fields: bool = True
    #: Vector always adds node labels; so do we by default. ``false`` on every
    #: source means the agent never watches its Node object.
    insert_node_fields: bool = True
    auto_partial_merge: bool = True
    #: cap of one record's message after partial merging; longer ones are cut
    #: and marked ``truncated: true``
    max_line_bytes: int = 32768
    #: cap of a merged message when it should differ from max_line_bytes
    max_merged_line_bytes: int | None = None
    max_read_bytes: int = 262144
    read_from: Literal["beginning", "end"] = "beginning"
    ignore_older_secs: int | None = None
    oldest_first: bool = False
    include_paths_glob_patterns: list[str] = msgspec.field(default_factory=lambda: ["**/*"])
    exclude_paths_glob_patterns: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_EXCLUDE_PATTERNS))
    rescan_interval_secs: float = 10.0
    rotate_wait_secs: float = 300.0
    delay_deletion_ms: int = 60000
    extra_label_selector: str = ""
    extra_field_selector: str = ""
    extra_namespace_label_selector: str = ""
    pod_annotation_fields: PodAnnotationFields = msgspec.field(default_factory=PodAnnotationFields)
    namespace_annotation_fields: NamespaceAnnotationFields = msgspec.field(default_factory=NamespaceAnnotationFields)
    node_annotation_fields: NodeAnnotationFields = msgspec.field(default_factory=NodeAnnotationFields)
    multiline: MultilineConfig = msgspec.field(default_factory=MultilineConfig)
    #: a top-level field set to the time each record was read (Vector's key)
    ingestion_timestamp_field: str | None = None

    def validate(self) -> None:
        if self.max_line_bytes < 64:
            raise ValueError("max_line_bytes: expected at least 64")
        if self.max_merged_line_bytes is not None and self.max_merged_line_bytes < 64:
            raise ValueError("max_merged_line_bytes: expected at least 64")
        if self.max_read_bytes < 4096:
            raise ValueError("max_read_bytes: expected at least 4096")
        try:
            self.multiline.validate()
        except ValueError as exc:
            raise ValueError(f"multiline.{exc}") from None
        for group_name in ("pod_annotation_fields", "namespace_annotation_fields", "node_annotation_fields"):
            group = getattr(self, group_name)
            for name in group.__struct_fields__:
                path = getattr(group, name)
                if path and not _valid_field_path(path):
                    raise ValueError(f'{group_name}.{name}: expected a field path such as ".kubernetes.{name}", got "{path}"')
        self._check_ingestion_field()
        from logagent.sources.selection import SelectorError, parse_field_selector, parse_label_selector

        for name, parse in (
            ("extra_label_selector", parse_label_selector),
            ("extra_namespace_label_selector", parse_label_selector),
            ("extra_field_selector", parse_field_selector),
        ):
            try:
                parse(getattr(self, name))
            except SelectorError as exc:
                raise ValueError(f"{name}: {exc}") from None

    def _check_ingestion_field(self) -> None:
        name = self.ingestion_timestamp_field
        if name is None:
            return
        segments = split_field_path(name)
        taken = {"message", "stream", "timestamp", "truncated", "file", "source_type"} | {
            split_field_path(path)[0]
            for group in (self.pod_annotation_fields, self.namespace_annotation_fields, self.node_annotation_fields)
            for path in (getattr(group, n) for n in group.__struct_fields__) if path
        }
        if len(segments) != 1 or not segments[0]:
            raise ValueError(f'ingestion_timestamp_field: expected a top-level field such as ".ingest_timestamp", got "{name}"')
        if segments[0] in taken:
            raise ValueError(f'ingestion_timestamp_field: "{segments[0]}" is a field the source already writes')

    @property
    def wants_namespaces(self) -> bool:
        return self.insert_namespace_fields or bool(self.extra_namespace_label_selector.strip())


def _valid_field_path(path: str) -> bool:
    segments = split_field_path(path)
    return bool(segments) and all(segments)


def split_field_path(path: str) -> list[str]:
    """``.kubernetes.pod_labels`` or ``kubernetes.pod_labels`` -> segments.

    A segment may be quoted: ``.k8s."pod.name"``.
    """
    path = path.strip()
    if path.startswith("."):
        path = path[1:]
    segments: list[str] = []
    current = ""
    quoted = False
    for ch in path:
        if ch == '"':
            quoted = not quoted
        elif ch == "." and not quoted:
            segments.append(current)
            current = ""
        else:
            current += ch
    segments.append(current)
    if quoted:
        return []
    return segments
