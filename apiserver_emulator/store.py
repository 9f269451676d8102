"""In-memory object storage with etcd-like semantics.

One global resourceVersion counter; each resource keeps its objects (as
pre-encoded JSON plus the few fields selectors need), a bounded history of
change events (used for watch replay and for reading older snapshots, which
is what paginated lists and `resourceVersionMatch=Exact` need), and a lazily
sorted key list so pages come out in etcd key order.
"""

from __future__ import annotations

import bisect
import heapq
import time
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

_encode = msgspec.json.encode
_decode = msgspec.json.decode


@dataclass(frozen=True, slots=True)
class ResourceKind:
    resource: str  # plural, as in the URL
    kind: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...]
    field_labels: frozenset[str]
    bookmark_body: bytes  # the empty object of this kind, as the real server serialises it


POD_FIELDS = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    }
)

KINDS: dict[str, ResourceKind] = {
    "pods": ResourceKind(
        "pods", "Pod", "pod", True, ("po",), POD_FIELDS,
        b'"spec":{"containers":null},"status":{}',
    ),
    "namespaces": ResourceKind(
        "namespaces", "Namespace", "namespace", False, ("ns",),
        frozenset({"metadata.name", "status.phase"}),
        b'"spec":{},"status":{}',
    ),
    "nodes": ResourceKind(
        "nodes", "Node", "node", False, ("no",),
        frozenset({"metadata.name", "spec.unschedulable"}),
        b'"spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"",'
        b'"systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"",'
        b'"kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}',
    ),
}


class StoreError(Exception):
    """A request the store refuses; carries the HTTP status and Kubernetes reason."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details or {}


def _field_values(kind: ResourceKind, obj: dict[str, Any]) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": meta.get("name", "")}
    if kind.namespaced:
        fields["metadata.namespace"] = meta.get("namespace", "")
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    if kind.resource == "pods":
        fields["spec.nodeName"] = spec.get("nodeName", "")
        fields["spec.restartPolicy"] = spec.get("restartPolicy", "")
        fields["spec.schedulerName"] = spec.get("schedulerName", "")
        fields["spec.serviceAccountName"] = spec.get("serviceAccountName", "")
        fields["spec.hostNetwork"] = "true" if spec.get("hostNetwork") else "false"
        fields["status.phase"] = status.get("phase", "")
        fields["status.podIP"] = status.get("podIP", "")
        fields["status.nominatedNodeName"] = status.get("nominatedNodeName", "")
    elif kind.resource == "namespaces":
        fields["status.phase"] = status.get("phase", "")
    elif kind.resource == "nodes":
        fields["spec.unschedulable"] = "true" if spec.get("unschedulable") else "false"
    return fields


class StoredObject:
    """One version of one object: its item JSON (no kind/apiVersion) and selector inputs."""

    __slots__ = ("key", "name", "namespace", "rv", "labels", "fields", "body")

    def __init__(self, key: str, name: str, namespace: str, rv: int,
                 labels: dict[str, str], fields: dict[str, str], body: bytes):
        self.key, self.name, self.namespace, self.rv = key, name, namespace, rv
        self.labels, self.fields, self.body = labels, fields, body

    def to_dict(self) -> dict[str, Any]:
        return _decode(self.body)

    def with_rv(self, rv: int) -> StoredObject:
        obj = self.to_dict()
        obj["metadata"]["resourceVersion"] = str(rv)
        return StoredObject(self.key, self.name, self.namespace, rv, self.labels, self.fields, _encode(obj))


@dataclass(slots=True)
class ChangeEvent:
    """A committed change. For DELETED, `obj` is the last state stamped with the deletion RV."""

    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    obj: StoredObject
    prev: StoredObject | None
    frames: dict[str, bytes] | None = None  # encoded watch frames, shared by all watchers


def object_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def now_rfc3339() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class ResourceStore:
    """Objects and history of one resource kind."""

    def __init__(self, kind: ResourceKind, history_size: int):
        self.kind = kind
        self.objects: dict[str, StoredObject] = {}
        self.history: deque[ChangeEvent] = deque()
        self.history_size = history_size
        # Highest RV whose event is no longer in history: RVs below it cannot be replayed.
        self.compacted_rv = 0
        self._sorted_keys: list[str] | None = None

    # -- writing -------------------------------------------------------

    def build(self, obj: dict[str, Any], rv: int) -> StoredObject:
        """Encode a full object (kind/apiVersion are dropped, RV stamped)."""
        meta = dict(obj.get("metadata") or {})
        name = meta.get("name")
        if not name:
            raise StoreError(422, "Invalid", f"{self.kind.kind} is invalid: metadata.name: Required value")
        namespace = meta.get("namespace", "") if self.kind.namespaced else ""
        if self.kind.namespaced and not namespace:
            raise StoreError(422, "Invalid", f"{self.kind.kind} is invalid: metadata.namespace: Required value")
        if not self.kind.namespaced:
            meta.pop("namespace", None)
        meta["resourceVersion"] = str(rv)
        body = {"metadata": meta}
        for k, v in obj.items():
            if k not in ("kind", "apiVersion", "metadata"):
                body[k] = v
        labels = meta.get("labels") or {}
        return StoredObject(object_key(namespace, name), name, namespace, rv, labels,
                            _field_values(self.kind, body), _encode(body))

    def commit(self, event: ChangeEvent) -> None:
        key = event.obj.key
        if event.type == "DELETED":
            del self.objects[key]
            self._sorted_keys = None
        else:
            if key not in self.objects:
                self._sorted_keys = None
            self.objects[key] = event.obj
        if len(self.history) >= self.history_size:
            self.compacted_rv = self.history.popleft().rv
        self.history.append(event)

    def compact(self, rv: int) -> None:
        """Forget history up to and including `rv` (like an etcd compaction)."""
        while self.history and self.history[0].rv <= rv:
            self.history.popleft()
        self.compacted_rv = max(self.compacted_rv, rv)

    # -- reading -------------------------------------------------------

    def sorted_keys(self) -> list[str]:
        if self._sorted_keys is None:
            self._sorted_keys = sorted(self.objects)
        return self._sorted_keys

    def events_after(self, rv: int) -> list[ChangeEvent]:
        """Every retained event with RV > rv, oldest first (caller checks compaction)."""
        if not self.history or self.history[-1].rv <= rv:
            return []
        out = []
        for ev in reversed(self.history):
            if ev.rv <= rv:
                break
            out.append(ev)
        out.reverse()
        return out

    def snapshot_overrides(self, rv: int) -> dict[str, StoredObject | None]:
        """How the state at `rv` differs from now: key -> object then (None = absent)."""
        overrides: dict[str, StoredObject | None] = {}
        for ev in reversed(self.history):
            if ev.rv <= rv:
                break
            overrides[ev.obj.key] = ev.prev
        return overrides

    def iter_snapshot(self, rv: int | None, start_after: str = "", prefix: str = "") -> Iterator[StoredObject]:
        """Objects as of `rv` (None = now) in key order, keys > start_after and starting with prefix."""
        overrides = self.snapshot_overrides(rv) if rv is not None else {}
        keys = self.sorted_keys()
        lower = max(start_after + "\x00", prefix) if start_after else prefix
        i = bisect.bisect_left(keys, lower)
        current_keys: Iterator[str] = (keys[j] for j in range(i, len(keys)))
        if overrides:
            extra = sorted(k for k in overrides if k not in self.objects and k >= lower)
            current_keys = heapq.merge(current_keys, extra)
        objects = self.objects
        for key in current_keys:
            if prefix and not key.startswith(prefix):
                return
            if key in overrides:
                obj = overrides[key]
                if obj is None:
                    continue
            else:
                obj = objects[key]
            yield obj

    def count_after(self, last_key: str, prefix: str, overrides_empty: bool) -> int | None:
        """Objects after last_key within prefix, if cheaply known (no snapshot overrides)."""
        if not overrides_empty:
            return None
        keys = self.sorted_keys()
        i = bisect.bisect_right(keys, last_key)
        end = bisect.bisect_left(keys, prefix[:-1] + chr(ord(prefix[-1]) + 1)) if prefix else len(keys)
        return max(0, end - i)


def new_uid() -> str:
    return str(uuid.uuid4())
