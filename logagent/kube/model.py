"""The compact, immutable metadata the agent keeps for each watched object.

Only the fields that enrichment (Vector's ``kubernetes.*`` output fields) and
selection need are kept; everything else of a Kubernetes object is skipped while
decoding and never materialised (see :mod:`logagent.kube.decode`).

Invariant: objects are frozen and their ``dict`` fields are never mutated after
construction, by anyone. An update replaces the whole object in its store, so a
reader may keep a reference as long as it likes and notices an update by
identity (``store.get(key) is not cached``). Nothing is ever deep-copied.

``gc=False`` is safe here: these objects only reference strings, tuples of
strings, dicts of strings and other such objects, so they can never be part of
a reference cycle.
"""

from __future__ import annotations

import msgspec


class ContainerMeta(msgspec.Struct, frozen=True, gc=False):
    """One container of a pod (regular, init or ephemeral)."""

    image: str | None = None
    #: as the runtime reports it, e.g. ``containerd://4f1e...``; None until started
    container_id: str | None = None
    image_id: str | None = None


class PodMeta(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    uid: str
    name: str
    namespace: str
    resource_version: str
    labels: dict[str, str]
    annotations: dict[str, str]
    node_name: str | None = None
    pod_ip: str | None = None
    pod_ips: tuple[str, ...] = ()
    #: ``<Kind>/<name>`` of the controlling owner (else the first owner), as
    #: Vector's ``kubernetes.pod_owner``
    owner: str | None = None
    #: by container name
    containers: dict[str, ContainerMeta] = {}
    #: the ``kubernetes.io/config.mirror`` annotation of a static pod's mirror
    #: pod: its log directory is named with this hash instead of the uid
    mirror_hash: str | None = None
    #: wall-clock time (``time.time()``) the agent saw the pod deleted; a
    #: deleted pod is kept for a while so that late log lines are still enriched
    deleted_at: float | None = None


class NamespaceMeta(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    name: str
    resource_version: str
    labels: dict[str, str]


class NodeMeta(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    name: str
    resource_version: str
    labels: dict[str, str]


KubeObject = PodMeta | NamespaceMeta | NodeMeta


def pod_key(pod: PodMeta) -> str:
    return pod.uid


def name_key(obj: NamespaceMeta | NodeMeta) -> str:
    return obj.name
