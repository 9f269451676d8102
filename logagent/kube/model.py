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


#: the label the apiserver puts on every namespace (1.21+), always equal to its name
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

#: how many distinct label sets :func:`_shared_labels` remembers
_SHARED_LABEL_SETS = 1024
_shared_label_sets: dict[int, dict[str, str]] = {}


def _shared_labels(labels: dict[str, str]) -> dict[str, str]:
    """An equal dict already held by a recently built namespace, else ``labels`` itself.

    Bounded (oldest label set forgotten first), so namespaces with unique
    labels cost what they would without sharing and nothing leaks.
    """
    if not labels:
        return labels
    key = hash(tuple(labels.items()))
    known = _shared_label_sets.get(key)
    if known is not None and known == labels:
        return known
    if len(_shared_label_sets) >= _SHARED_LABEL_SETS:
        del _shared_label_sets[next(iter(_shared_label_sets))]
    _shared_label_sets[key] = labels
    return labels


class NamespaceMeta:
    """A namespace's name and labels.

    Clusters can hold 10^5 namespaces, so this one is built for size (see
    benchmarks/README.md): every namespace carries ``kubernetes.io/metadata.name
    = <its name>`` and its other labels are usually the same as many other
    namespaces'. The object keeps those other labels in a dict shared between
    namespaces and only the position of the name label; ``labels`` rebuilds the
    full dict, which readers do once per file and metadata version, never per
    line. Immutable and compared by value like the msgspec model objects; a
    plain slotted class because a msgspec Struct cannot take ``labels`` in its
    constructor while storing something else.
    """

    __slots__ = ("name", "resource_version", "_other_labels", "_name_label_at")

    name: str
    resource_version: str
    _other_labels: dict[str, str]
    _name_label_at: int

    def __init__(self, *, name: str, resource_version: str, labels: dict[str, str]) -> None:
        name_label_at = -1
        if labels.get(NAMESPACE_NAME_LABEL) == name:
            keys = list(labels)
            name_label_at = keys.index(NAMESPACE_NAME_LABEL)
            labels = {k: v for k, v in labels.items() if k != NAMESPACE_NAME_LABEL}
        setattr_ = object.__setattr__
        setattr_(self, "name", name)
        setattr_(self, "resource_version", resource_version)
        setattr_(self, "_other_labels", _shared_labels(labels))
        setattr_(self, "_name_label_at", name_label_at)

    @property
    def labels(self) -> dict[str, str]:
        """All labels, in the order the API sent them. Never mutate the result."""
        if self._name_label_at < 0:
            return self._other_labels
        items = list(self._other_labels.items())
        items.insert(self._name_label_at, (NAMESPACE_NAME_LABEL, self.name))
        return dict(items)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"immutable type: 'NamespaceMeta' object attribute {name!r} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"immutable type: 'NamespaceMeta' object attribute {name!r} cannot be deleted")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NamespaceMeta):
            return NotImplemented
        return (
            self.name == other.name
            and self.resource_version == other.resource_version
            and self.labels == other.labels
        )

    __hash__ = None  # type: ignore[assignment]  # like a frozen Struct holding a dict

    def __repr__(self) -> str:
        return (
            f"NamespaceMeta(name={self.name!r}, resource_version={self.resource_version!r}, "
            f"labels={self.labels!r})"
        )


class NodeMeta(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    name: str
    resource_version: str
    labels: dict[str, str]


KubeObject = PodMeta | NamespaceMeta | NodeMeta


def pod_key(pod: PodMeta) -> str:
    return pod.uid


def name_key(obj: NamespaceMeta | NodeMeta) -> str:
    return obj.name
