"""Decode Kubernetes API responses straight from bytes into the compact model.

msgspec decodes into private intermediate Structs that declare only the fields
the model needs; every other field of the JSON (managedFields, most of spec and
status) is skipped by the parser and never becomes a Python object. The
intermediate objects are then turned into the frozen :mod:`logagent.kube.model`
objects, interning the strings that repeat across objects (label keys and
values, images, owner and namespace names).

Every decoder raises :class:`KubeDecodeError` (a ``ValueError``) on malformed
input, naming what it was decoding.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from logagent.kube.model import (
    ContainerMeta,
    KubeObject,
    NamespaceMeta,
    NodeMeta,
    PodMeta,
    namespace_meta,
)

#: the resource names (URL plural) of the kinds the agent watches
Kind = Literal["pods", "namespaces", "nodes"]
KINDS: tuple[Kind, ...] = ("pods", "namespaces", "nodes")

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"

#: annotation values longer than this are not interned (they are rarely shared:
#: think of ``kubectl.kubernetes.io/last-applied-configuration``)
_INTERN_MAX_LEN = 128

_intern = sys.intern
_EMPTY: dict[str, str] = {}  # shared; never mutated (see model invariant)


class KubeDecodeError(ValueError):
    """A response body or watch line could not be decoded."""


# --- intermediate wire Structs: only the fields we read --------------------


class _OwnerRef(msgspec.Struct):
    kind: str = ""
    name: str = ""
    controller: bool | None = None


class _ObjectMeta(msgspec.Struct, rename="camel"):
    name: str = ""
    namespace: str | None = None
    uid: str = ""
    resource_version: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[_OwnerRef] | None = None


class _Container(msgspec.Struct):
    name: str = ""
    image: str | None = None


class _ContainerStatus(msgspec.Struct):
    name: str = ""
    image: str | None = None
    image_id: str | None = msgspec.field(default=None, name="imageID")
    container_id: str | None = msgspec.field(default=None, name="containerID")


class _PodSpec(msgspec.Struct, rename="camel"):
    node_name: str | None = None
    containers: list[_Container] | None = None
    init_containers: list[_Container] | None = None
    ephemeral_containers: list[_Container] | None = None


class _PodIP(msgspec.Struct):
    ip: str = ""


class _PodStatus(msgspec.Struct, rename="camel"):
    pod_ip: str | None = msgspec.field(default=None, name="podIP")
    pod_ips: list[_PodIP] | None = msgspec.field(default=None, name="podIPs")
    container_statuses: list[_ContainerStatus] | None = None
    init_container_statuses: list[_ContainerStatus] | None = None
    ephemeral_container_statuses: list[_ContainerStatus] | None = None


class _Pod(msgspec.Struct):
    metadata: _ObjectMeta = msgspec.field(default_factory=_ObjectMeta)
    spec: _PodSpec | None = None
    status: _PodStatus | None = None


class _Named(msgspec.Struct):
    """Namespace and Node: only metadata is read."""

    metadata: _ObjectMeta = msgspec.field(default_factory=_ObjectMeta)


class _ListMeta(msgspec.Struct, rename="camel"):
    resource_version: str = ""
    continue_: str | None = msgspec.field(default=None, name="continue")


class _PodList(msgspec.Struct):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[_Pod] | None = None


class _NamedList(msgspec.Struct):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[_Named] | None = None


class _RawEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw = msgspec.Raw(b"null")


class _KindOnly(msgspec.Struct):
    kind: str = ""


class ApiStatus(msgspec.Struct, frozen=True):
    """A ``meta.v1.Status`` as sent in ERROR watch events and error responses."""

    code: int = 0
    reason: str = ""
    message: str = ""


class WatchEvent(msgspec.Struct, frozen=True, gc=False):
    #: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR
    type: str
    #: the decoded object for ADDED / MODIFIED / DELETED, else None
    obj: KubeObject | None
    #: the resourceVersion carried by the event ("" for ERROR)
    resource_version: str
    #: a BOOKMARK that ends the initial events of a streaming watch-list
    initial_events_end: bool = False
    error_status: ApiStatus | None = None


# --- conversions --------------------------------------------------------------


def _labels(raw: dict[str, str] | None) -> dict[str, str]:
    if not raw:
        return _EMPTY
    return {_intern(k): _intern(v) for k, v in raw.items()}


def _annotations(raw: dict[str, str] | None) -> dict[str, str]:
    if not raw:
        return _EMPTY
    return {
        _intern(k): (_intern(v) if len(v) <= _INTERN_MAX_LEN else v) for k, v in raw.items()
    }


def _maybe_intern(value: str | None) -> str | None:
    return _intern(value) if value else value


def _owner(refs: list[_OwnerRef] | None) -> str | None:
    if not refs:
        return None
    chosen = next((r for r in refs if r.controller), refs[0])
    return _intern(f"{chosen.kind}/{chosen.name}")


def _containers(spec: _PodSpec | None, status: _PodStatus | None) -> dict[str, ContainerMeta]:
    images: dict[str, str | None] = {}
    if spec is not None:
        for group in (spec.init_containers, spec.containers, spec.ephemeral_containers):
            for c in group or ():
                images[c.name] = c.image
    statuses: dict[str, _ContainerStatus] = {}
    if status is not None:
        for group in (
            status.init_container_statuses,
            status.container_statuses,
            status.ephemeral_container_statuses,
        ):
            for s in group or ():
                statuses[s.name] = s
    if not images and not statuses:
        return {}
    result: dict[str, ContainerMeta] = {}
    for name in images.keys() | statuses.keys():
        st = statuses.get(name)
        image = images.get(name) or (st.image if st is not None else None)
        result[_intern(name)] = ContainerMeta(
            image=_maybe_intern(image),
            container_id=st.container_id if st is not None else None,
            image_id=_maybe_intern(st.image_id) if st is not None else None,
        )
    return result


def _pod_meta(pod: _Pod) -> PodMeta:
    md = pod.metadata
    annotations = _annotations(md.annotations)
    status = pod.status
    pod_ips: tuple[str, ...] = ()
    pod_ip: str | None = None
    if status is not None:
        pod_ip = status.pod_ip
        if status.pod_ips:
            pod_ips = tuple(p.ip for p in status.pod_ips)
    return PodMeta(
        uid=md.uid,
        name=md.name,
        namespace=_intern(md.namespace or ""),
        resource_version=md.resource_version,
        labels=_labels(md.labels),
        annotations=annotations,
        node_name=_maybe_intern(pod.spec.node_name) if pod.spec is not None else None,
        pod_ip=pod_ip,
        pod_ips=pod_ips,
        owner=_owner(md.owner_references),
        containers=_containers(pod.spec, status),
        mirror_hash=annotations.get(MIRROR_ANNOTATION) or None,
    )


def _namespace_meta(obj: _Named) -> NamespaceMeta:
    md = obj.metadata
    labels = md.labels
    if labels:
        # keys are few and repeat everywhere: interned; values are shared by
        # namespace_meta's bounded table (a unique value is not kept alive by it)
        labels = {_intern(k): v for k, v in labels.items()}
    return namespace_meta(md.name, labels or _EMPTY)


def _node_meta(obj: _Named) -> NodeMeta:
    md = obj.metadata
    return NodeMeta(
        name=_intern(md.name), resource_version=md.resource_version, labels=_labels(md.labels)
    )


_OBJECT_TYPES: dict[str, tuple[type, Callable[[Any], KubeObject]]] = {
    "pods": (_Pod, _pod_meta),
    "namespaces": (_Named, _namespace_meta),
    "nodes": (_Named, _node_meta),
}
_LIST_TYPES: dict[str, type] = {"pods": _PodList, "namespaces": _NamedList, "nodes": _NamedList}
_OBJECT_DECODERS = {k: msgspec.json.Decoder(t) for k, (t, _) in _OBJECT_TYPES.items()}
_LIST_DECODERS = {k: msgspec.json.Decoder(t) for k, t in _LIST_TYPES.items()}
_CONVERTERS = {k: conv for k, (_, conv) in _OBJECT_TYPES.items()}
_event_decoder = msgspec.json.Decoder(_RawEvent)
_named_decoder = msgspec.json.Decoder(_Named)
_status_decoder = msgspec.json.Decoder(ApiStatus)
_kind_decoder = msgspec.json.Decoder(_KindOnly)


def _check_kind(kind: str) -> None:
    if kind not in _OBJECT_TYPES:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")


# --- public decoders ----------------------------------------------------------


def decode_object(kind: Kind, body: bytes) -> KubeObject:
    """Decode one object (e.g. a GET response body) of the given kind."""
    _check_kind(kind)
    try:
        wire = _OBJECT_DECODERS[kind].decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise KubeDecodeError(f"cannot decode a {kind} object: {e}") from None
    return _CONVERTERS[kind](wire)


def decode_pod(body: bytes) -> PodMeta:
    pod = decode_object("pods", body)
    assert isinstance(pod, PodMeta)
    return pod


def decode_list(kind: Kind, body: bytes) -> tuple[list[KubeObject], str, str | None]:
    """Decode one list page: ``(items, resourceVersion, continue token or None)``."""
    _check_kind(kind)
    try:
        wire = _LIST_DECODERS[kind].decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise KubeDecodeError(f"cannot decode a {kind} list page: {e}") from None
    convert = _CONVERTERS[kind]
    items = [convert(item) for item in wire.items or ()]
    return items, wire.metadata.resource_version, wire.metadata.continue_ or None


class _CountListMeta(msgspec.Struct, rename="camel"):
    continue_: str | None = msgspec.field(default=None, name="continue")
    remaining_item_count: int | None = None


class _CountList(msgspec.Struct):
    metadata: _CountListMeta = msgspec.field(default_factory=_CountListMeta)
    items: list[msgspec.Raw] | None = None


_count_list_decoder = msgspec.json.Decoder(_CountList)


def decode_list_count(body: bytes) -> int | None:
    """How many objects a limited list says exist: its items plus ``remainingItemCount``.

    None when the page is incomplete and the server did not say how much is left
    (a selector was set, or the server does not count).
    """
    try:
        wire = _count_list_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise KubeDecodeError(f"cannot decode a list page: {e}") from None
    items = len(wire.items or ())
    if wire.metadata.remaining_item_count is not None:
        return items + wire.metadata.remaining_item_count
    return None if wire.metadata.continue_ else items


def decode_status(body: bytes) -> ApiStatus | None:
    """Decode an error response body; None if it is not a Status object."""
    try:
        return _status_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def decode_watch_event(kind: Kind, line: bytes) -> WatchEvent:
    """Decode one line of a watch stream."""
    _check_kind(kind)
    try:
        raw = _event_decoder.decode(line)
        etype = raw.type
        if etype in ("ADDED", "MODIFIED", "DELETED"):
            wire = _OBJECT_DECODERS[kind].decode(raw.object)
            return WatchEvent(etype, _CONVERTERS[kind](wire), wire.metadata.resource_version)
        if etype == "BOOKMARK":
            md = _named_decoder.decode(raw.object).metadata
            end = (md.annotations or _EMPTY).get(INITIAL_EVENTS_END_ANNOTATION) == "true"
            return WatchEvent(etype, None, md.resource_version, initial_events_end=end)
        if etype == "ERROR":
            status = _status_decoder.decode(raw.object)
            return WatchEvent(etype, None, "", error_status=status)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise KubeDecodeError(f"cannot decode a {kind} watch event: {e}") from None
    raise KubeDecodeError(f"unknown {kind} watch event type {etype!r}")


_SNAPSHOT_KINDS: dict[str, Kind] = {"Pod": "pods", "Namespace": "namespaces", "Node": "nodes"}


class _RawList(msgspec.Struct):
    kind: str = ""
    items: list[msgspec.Raw] | None = None


_raw_items_decoder = msgspec.json.Decoder(_RawList)


def decode_snapshot(
    body: bytes,
) -> tuple[list[PodMeta], list[NamespaceMeta], list[NodeMeta]]:
    """Decode ``kubectl get pods,namespaces,nodes -A -o json`` output (a v1 List).

    Items of other kinds are skipped. A typed list (PodList, ...) whose items
    carry no ``kind`` is accepted too, and so is a single object.
    """
    try:
        top = _raw_items_decoder.decode(body)
        if top.items is None:
            raws = [msgspec.Raw(body)] if top.kind in _SNAPSHOT_KINDS else []
        else:
            raws = top.items
        default_kind = top.kind[:-4] if top.kind.endswith("List") else ""
        out: dict[str, list[Any]] = {"pods": [], "namespaces": [], "nodes": []}
        for raw in raws:
            item_kind = _kind_decoder.decode(raw).kind or default_kind
            kind = _SNAPSHOT_KINDS.get(item_kind)
            if kind is None:
                continue
            out[kind].append(_CONVERTERS[kind](_OBJECT_DECODERS[kind].decode(raw)))
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise KubeDecodeError(f"cannot decode the metadata snapshot: {e}") from None
    return out["pods"], out["namespaces"], out["nodes"]
