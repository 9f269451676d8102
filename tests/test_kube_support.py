"""Builders of Kubernetes JSON objects shared by the kube tests (no tests here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "kubernetes-api"


def fixture(kind: str) -> bytes:
    return (FIXTURES / f"core.v1.{kind}.json").read_bytes()


def pod(
    name: str,
    *,
    uid: str | None = None,
    namespace: str = "default",
    node: str = "node-a",
    rv: str = "1",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    containers: tuple[str, ...] = ("app",),
) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid or f"uid-{name}",
            "resourceVersion": rv,
            "labels": labels or {},
            "annotations": annotations or {},
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
        },
        "spec": {
            "nodeName": node,
            "containers": [{"name": c, "image": f"registry/{c}:1"} for c in containers],
        },
        "status": {"phase": "Running"},
    }


def event(etype: str, obj: dict[str, Any]) -> bytes:
    return msgspec.json.encode({"type": etype, "object": obj})


def to_bytes(obj: Any) -> bytes:
    return msgspec.json.encode(obj)
