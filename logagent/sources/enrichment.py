"""Build a file's output fields from its path and the shared metadata stores.

One :class:`Enricher` per source: it knows where each field goes (the
``*_annotation_fields`` options) and whether the source asked for namespace and
node fields. It is called once per file and metadata version, never per line.
"""

from __future__ import annotations

from typing import Any, Protocol

from logagent.kube.model import NamespaceMeta, NodeMeta, PodMeta
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig, split_field_path


class FileOrigin(Protocol):
    """What a log file's path says about it: ``<ns>_<pod>_<uid>/<container>/<n>.log``.

    ``files.TailedFile`` has these attributes.
    """

    path: str
    namespace: str | None
    pod_name: str | None
    pod_uid: str | None
    container: str | None


class Enricher:
    def __init__(self, config: KubernetesLogsConfig) -> None:
        self._places: dict[str, list[str]] = {}
        groups = [config.pod_annotation_fields]
        if config.insert_namespace_fields:
            groups.append(config.namespace_annotation_fields)
        if config.insert_node_fields:
            groups.append(config.node_annotation_fields)
        for group in groups:
            for name in group.__struct_fields__:
                path = getattr(group, name)
                if path:
                    self._places[name] = split_field_path(path)

    def fields(
        self,
        origin: FileOrigin,
        pod: PodMeta | None,
        namespace: NamespaceMeta | None,
        node: NodeMeta | None,
    ) -> dict[str, Any]:
        values: dict[str, Any] = {}
        container_name = origin.container
        if pod is not None:
            values["pod_name"] = pod.name
            values["pod_namespace"] = pod.namespace
            values["pod_uid"] = pod.uid
            values["pod_ip"] = pod.pod_ip
            values["pod_ips"] = list(pod.pod_ips) if pod.pod_ips else None
            values["pod_labels"] = pod.labels or None
            values["pod_annotations"] = pod.annotations or None
            values["pod_node_name"] = pod.node_name
            values["pod_owner"] = pod.owner
            container = pod.containers.get(container_name) if container_name else None
            if container is not None:
                values["container_id"] = container.container_id
                values["container_image"] = container.image
                values["container_image_id"] = container.image_id
        else:
            values["pod_name"] = origin.pod_name
            values["pod_namespace"] = origin.namespace
            values["pod_uid"] = origin.pod_uid
        values["container_name"] = container_name
        if namespace is not None:
            values["namespace_labels"] = namespace.labels or None
        if node is not None:
            values["node_labels"] = node.labels or None

        record: dict[str, Any] = {"file": origin.path, "source_type": "kubernetes_logs"}
        for name, segments in self._places.items():
            value = values.get(name)
            if value is None:
                continue
            target = record
            for segment in segments[:-1]:
                child = target.get(segment)
                if not isinstance(child, dict):
                    child = target[segment] = {}
                target = child
            target[segments[-1]] = value
        return record
