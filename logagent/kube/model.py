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

#: how many distinct label key sets (schemas) and label values are shared
_SHARED_SCHEMAS = 1024
_SHARED_VALUES = 4096
_schemas: dict[tuple[int | str, ...], tuple[int | str, ...]] = {}
_values: dict[str, str] = {}
#: label counts above this use the generic layout (values in one tuple)
_MAX_FLAT_VALUES = 16


def _shared(table: dict, value: object, limit: int) -> object:  # type: ignore[type-arg]
    """An equal object already in the bounded table (most recently used kept), else ``value``.

    Bounded, so values that never repeat (a per-namespace cost-center label)
    cost what they would without sharing and nothing leaks, while values that
    do repeat (team, environment) keep one copy.
    """
    known = table.pop(value, None)
    if known is None:
        known = value
        if len(table) >= limit:
            del table[next(iter(table))]
    table[known] = known
    return known


class NamespaceMeta(msgspec.Struct, frozen=True, gc=False, array_like=True):
    """A namespace's name and labels, built for size (clusters hold 10^5 namespaces).

    Construct with :func:`namespace_meta`. The label keys, in the API's order,
    are one ``schema`` tuple shared by every namespace with the same keys; the
    values are fields of a subclass made for that label count (no per-object
    dict, tuple or GC header). The ``kubernetes.io/metadata.name`` label, always
    equal to the name, is not stored: ``schema[0]`` is its position (-1 if
    absent or different). Label values that repeat across namespaces are shared.
    No resourceVersion is kept: an update is recognised by comparing this
    compact form (equality is by type, name and labels). ``labels`` rebuilds
    the dict, which readers do once per file and metadata version, never per
    line. ``gc=False`` is safe: only strings, ints and tuples of them are held.
    See benchmarks/README.md for the measurements.
    """

    name: str
    schema: tuple[int | str, ...]

    @property
    def labels(self) -> dict[str, str]:
        """All labels, in the order the API sent them. A new dict: the caller may keep it."""
        fields = msgspec.structs.astuple(self)
        values = list(fields[2:]) if type(self) is not _NamespaceMetaMany else list(fields[2])
        schema = self.schema
        at = schema[0]
        if at >= 0:  # type: ignore[operator]
            values.insert(at, self.name)  # type: ignore[arg-type]
        return dict(zip(schema[1:], values))  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"NamespaceMeta(name={self.name!r}, labels={self.labels!r})"


class _NamespaceMetaMany(NamespaceMeta, frozen=True, gc=False, array_like=True):
    values: tuple[str, ...] = ()


_layouts: dict[int, type[NamespaceMeta]] = {}


def _layout(count: int) -> type[NamespaceMeta]:
    """The NamespaceMeta subclass holding ``count`` label values as fields."""
    cls = _layouts.get(count)
    if cls is None:
        if count > _MAX_FLAT_VALUES:
            return _NamespaceMetaMany
        cls = msgspec.defstruct(
            f"NamespaceMeta{count}",
            [(f"v{i}", str) for i in range(count)],
            bases=(NamespaceMeta,),
            frozen=True,
            gc=False,
            array_like=True,
            module=__name__,
        )
        _layouts[count] = cls
    return cls


def namespace_meta(name: str, labels: dict[str, str]) -> NamespaceMeta:
    """The compact form of a namespace (see :class:`NamespaceMeta`)."""
    at = -1
    keys: list[int | str] = []
    values: list[str] = []
    for i, (key, value) in enumerate(labels.items()):
        keys.append(key)
        if key == NAMESPACE_NAME_LABEL and value == name:
            at = i
        else:
            values.append(_shared(_values, value, _SHARED_VALUES))  # type: ignore[arg-type]
    schema = _shared(_schemas, (at, *keys), _SHARED_SCHEMAS)
    cls = _layout(len(values))
    if cls is _NamespaceMetaMany:
        return cls(name, schema, tuple(values))  # type: ignore[arg-type]
    return cls(name, schema, *values)  # type: ignore[arg-type]


class NodeMeta(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    name: str
    resource_version: str
    labels: dict[str, str]


KubeObject = PodMeta | NamespaceMeta | NodeMeta


def pod_key(pod: PodMeta) -> str:
    return pod.uid


def name_key(obj: NamespaceMeta | NodeMeta) -> str:
    return obj.name
