"""The emulated cluster state: resources, the global resourceVersion, mutations, watchers."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from .objects import make_namespace, stable_uid
from .selectors import Predicate
from .store import KINDS, ChangeEvent, ResourceStore, StoredObject, StoreError, new_uid, now_rfc3339, object_key

_encode = msgspec.json.encode


def watch_frame(event_type: str, kind: str, body: bytes) -> bytes:
    """One newline-terminated watch event; the object gains kind/apiVersion like on the wire."""
    return b'{"type":"%s","object":{"kind":"%s","apiVersion":"v1",%s}\n' % (
        event_type.encode(), kind.encode(), body[1:])


def bookmark_frame(kind_name: str, rv: int, initial_events_end: bool = False) -> bytes:
    kind = KINDS[kind_name]
    annotations = b',"annotations":{"k8s.io/initial-events-end":"true"}' if initial_events_end else b""
    return b'{"type":"BOOKMARK","object":{"kind":"%s","apiVersion":"v1","metadata":{"resourceVersion":"%d",' \
           b'"creationTimestamp":null%s},%s}}\n' % (kind.kind.encode(), rv, annotations, kind.bookmark_body)


class Watcher:
    """One open watch: filters committed events and queues their encoded frames."""

    def __init__(self, resource: str, prefix: str, predicate: Predicate | None):
        self.resource = resource
        self.kind = KINDS[resource].kind
        self.prefix = prefix  # "ns/" for a namespaced watch, "" otherwise
        self.predicate = predicate
        self.pending: deque[bytes] = deque()
        self.wake = asyncio.Event()
        self.closed: str | None = None  # "drop" (clean end) or "abort" (connection reset)

    def matches(self, obj: StoredObject) -> bool:
        if self.prefix and not obj.key.startswith(self.prefix):
            return False
        return self.predicate is None or self.predicate(obj.labels, obj.fields)

    def frame_for(self, ev: ChangeEvent) -> bytes | None:
        """The event as this watcher sees it; an object leaving the selector is DELETED."""
        now_matches = ev.type != "DELETED" and self.matches(ev.obj)
        before_matched = ev.prev is not None and self.matches(ev.prev)
        if now_matches:
            event_type = "MODIFIED" if before_matched else "ADDED"
        elif before_matched:
            event_type = "DELETED"
        else:
            return None
        if ev.frames is None:
            ev.frames = {}
        frame = ev.frames.get(event_type)
        if frame is None:
            if event_type == "DELETED" and ev.type != "DELETED":
                obj = ev.prev.with_rv(ev.rv)  # the last matching state, stamped with this event's RV
            else:
                obj = ev.obj
            frame = ev.frames[event_type] = watch_frame(event_type, self.kind, obj.body)
        return frame

    def offer(self, ev: ChangeEvent) -> None:
        frame = self.frame_for(ev)
        if frame is not None:
            self.pending.append(frame)
            self.wake.set()

    def close(self, how: str = "drop") -> None:
        self.closed = how
        self.wake.set()


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (null deletes a key)."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


#: the label template of seed_namespaces(label_sets="unique"); markers are replaced per namespace
_UNIQUE_LABELS = {"team": "__TEAM__", "environment": "__ENV__", "cost-center": "__CC__",
                  "app.kubernetes.io/managed-by": "argocd"}


def _unique_label_set(i: int, body: bytes, labels: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    """Namespace i's own label values: team of 1,000, environment of 2, a unique cost-center."""
    values = {"__TEAM__": f"team-{i % 1000:04d}", "__ENV__": ("production", "staging")[i % 2],
              "__CC__": f"cc-{i:07d}"}
    for marker, value in values.items():
        body = body.replace(marker.encode(), value.encode())
    return body, {k: values.get(v, v) for k, v in labels.items()}


class Cluster:
    """All resources, one resourceVersion counter, and the open watchers."""

    def __init__(self, history_size: int = 10_000):
        self.rv = 1
        self.stores = {name: ResourceStore(kind, history_size) for name, kind in KINDS.items()}
        self.watchers: dict[str, set[Watcher]] = {name: set() for name in KINDS}

    def store(self, resource: str) -> ResourceStore:
        try:
            return self.stores[resource]
        except KeyError:
            raise ValueError(f"unknown resource {resource!r}; expected one of {sorted(KINDS)}") from None

    # -- mutations -----------------------------------------------------

    def _commit(self, store: ResourceStore, event_type: str, obj: StoredObject, prev: StoredObject | None) -> None:
        ev = ChangeEvent(obj.rv, event_type, obj, prev)
        store.commit(ev)
        for watcher in self.watchers[store.kind.resource]:
            watcher.offer(ev)

    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def create(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        store = self.store(resource)
        meta = obj.setdefault("metadata", {})
        key = object_key(meta.get("namespace", "") if store.kind.namespaced else "", meta.get("name", ""))
        if key in store.objects:
            raise StoreError(409, "AlreadyExists", f'{resource} "{meta.get("name")}" already exists',
                             {"name": meta.get("name"), "kind": resource})
        meta.setdefault("uid", new_uid())
        meta.setdefault("creationTimestamp", now_rfc3339())
        stored = store.build(obj, self._next_rv())
        self._commit(store, "ADDED", stored, None)
        return stored.to_dict()

    def update(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        store = self.store(resource)
        meta = obj.setdefault("metadata", {})
        prev = self._existing(store, meta.get("name", ""), meta.get("namespace", ""))
        if "uid" not in meta or "creationTimestamp" not in meta:
            old_meta = prev.to_dict()["metadata"]
            meta.setdefault("uid", old_meta.get("uid"))
            meta.setdefault("creationTimestamp", old_meta.get("creationTimestamp"))
        stored = store.build(obj, self._next_rv())
        self._commit(store, "MODIFIED", stored, prev)
        return stored.to_dict()

    def apply(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create, or replace when it exists."""
        store = self.store(resource)
        meta = obj.get("metadata") or {}
        key = object_key(meta.get("namespace", "") if store.kind.namespaced else "", meta.get("name", ""))
        return self.update(resource, obj) if key in store.objects else self.create(resource, obj)

    def patch(self, resource: str, name: str, patch: Mapping[str, Any], namespace: str = "") -> dict[str, Any]:
        """Apply a JSON merge patch to an existing object."""
        store = self.store(resource)
        prev = self._existing(store, name, namespace)
        merged = _merge_patch(prev.to_dict(), patch)
        merged["metadata"]["name"], merged["metadata"]["uid"] = name, prev.to_dict()["metadata"].get("uid")
        if store.kind.namespaced:
            merged["metadata"]["namespace"] = namespace
        stored = store.build(merged, self._next_rv())
        self._commit(store, "MODIFIED", stored, prev)
        return stored.to_dict()

    def delete(self, resource: str, name: str, namespace: str = "") -> dict[str, Any]:
        store = self.store(resource)
        prev = self._existing(store, name, namespace)
        tombstone = prev.with_rv(self._next_rv())
        self._commit(store, "DELETED", tombstone, prev)
        return tombstone.to_dict()

    def get(self, resource: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        store = self.store(resource)
        obj = store.objects.get(object_key(namespace if store.kind.namespaced else "", name))
        return obj.to_dict() if obj is not None else None

    def _existing(self, store: ResourceStore, name: str, namespace: str) -> StoredObject:
        obj = store.objects.get(object_key(namespace if store.kind.namespaced else "", name))
        if obj is None:
            raise StoreError(404, "NotFound", f'{store.kind.resource} "{name}" not found',
                             {"name": name, "kind": store.kind.resource})
        return obj

    def compact(self) -> int:
        """Drop all history: every RV older than now becomes 410 Gone for watches and continues."""
        for store in self.stores.values():
            store.compact(self.rv)
        return self.rv

    # -- bulk seeding ----------------------------------------------------

    def seed(self, resource: str, objects: Iterable[dict[str, Any]]) -> int:
        count = 0
        for obj in objects:
            self.apply(resource, obj)
            count += 1
        return count

    def seed_namespaces(
        self,
        count: int,
        name_format: str = "ns-{i:06d}",
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        last_applied: bool = True,
        start: int = 0,
        label_sets: str = "shared",
    ) -> int:
        """Create `count` realistic namespaces (~2 KB each) from one encoded template.

        The template is encoded once with placeholders and specialised by byte
        replacement, so 200,000 namespaces take seconds, not minutes.
        `label_sets="unique"` (when `labels` is None) gives each namespace its own
        label set, as a per-team cost-center label does: team (one of 1,000),
        environment (one of 2), a unique cost-center, managed-by.
        """
        store = self.store("namespaces")
        if label_sets not in ("shared", "unique"):
            raise ValueError(f"label_sets must be 'shared' or 'unique', got {label_sets!r}")
        unique = label_sets == "unique" and labels is None
        if unique:
            labels = _UNIQUE_LABELS
        labels = dict(labels if labels is not None else {
            "team": "payments", "environment": "production", "cost-center": "cc-1234",
            "app.kubernetes.io/managed-by": "argocd", "app.kubernetes.io/part-of": "platform",
            "istio-injection": "enabled", "pod-security.kubernetes.io/enforce": "restricted",
        })
        annotations = dict(annotations if annotations is not None else {
            "owner": "team-payments@example.com",
            "argocd.argoproj.io/tracking-id": "platform:/Namespace:__NAME__/__NAME__",
            "scheduler.alpha.kubernetes.io/node-selector": "pool=general",
            "description": "Namespace managed by the platform team; see the runbook for the on-call rota.",
        })
        template = make_namespace("__NAME__", labels=labels, annotations=annotations,
                                  uid="__UID__", last_applied=last_applied)
        template["metadata"]["resourceVersion"] = "__RV__"
        template.pop("kind")
        template.pop("apiVersion")
        encoded = _encode(template)
        fields_phase = template["status"]["phase"]
        created = 0
        for i in range(start, start + count):
            name = name_format.format(i=i)
            key = name
            if key in store.objects:
                continue
            rv = self._next_rv()
            body = (encoded.replace(b"__NAME__", name.encode())
                    .replace(b"__UID__", stable_uid("namespace", name).encode())
                    .replace(b"__RV__", str(rv).encode()))
            obj_labels = {"kubernetes.io/metadata.name": name, **labels}
            if unique:
                body, obj_labels = _unique_label_set(i, body, obj_labels)
            stored = StoredObject(key, name, "", rv, obj_labels,
                                  {"metadata.name": name, "status.phase": fields_phase}, body)
            self._commit(store, "ADDED", stored, None)
            created += 1
        return created
