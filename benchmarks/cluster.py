"""Realistic pods for the benchmarks, posted into a running emulator.

The emulator's own ``make_pod`` gives a bare pod; real pods of a Deployment
carry more: several labels, annotations (including the
``kubectl.kubernetes.io/last-applied-configuration`` of whoever applied it),
an init container and a sidecar, and managedFields. These are a few KB each
on the wire, like the pods of a real cluster.
"""

from __future__ import annotations

import json
from typing import Any

from benchmarks.common import Emulator
from apiserver_emulator.objects import make_pod

NODE = "node-1"
BIG_NODE = "node-big"


def realistic_pod(index: int, node: str, namespace_count: int = 50) -> dict[str, Any]:
    app = f"svc-{index % 37:02d}"
    namespace = f"ns-{index % namespace_count:06d}"
    name = f"{app}-7d9f8c6b5-{index:05d}-{node}"
    labels = {
        "app": app,
        "app.kubernetes.io/name": app,
        "app.kubernetes.io/instance": f"{app}-prod",
        "app.kubernetes.io/version": f"1.{index % 7}.0",
        "app.kubernetes.io/part-of": "shop",
        "pod-template-hash": "7d9f8c6b5",
        "security.istio.io/tlsMode": "istio",
        "team": "payments",
    }
    applied = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": app, "namespace": namespace, "labels": {k: v for k, v in labels.items()
                                                                     if k != "pod-template-hash"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": app}}, "template": {
            "metadata": {"labels": {"app": app}, "annotations": {"prometheus.io/scrape": "true"}},
            "spec": {"containers": [{"name": "app", "image": f"registry.example.com/shop/{app}:1.{index % 7}.0",
                                     "ports": [{"containerPort": 8080}],
                                     "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}},
                                     "env": [{"name": "LOG_LEVEL", "value": "info"},
                                             {"name": "OTEL_EXPORTER_OTLP_ENDPOINT",
                                              "value": "http://otel-collector.observability:4317"}]}]}}},
    }
    annotations = {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "8080",
        "kubectl.kubernetes.io/restartedAt": "2024-05-01T09:58:00Z",
        "kubectl.kubernetes.io/default-container": "app",
        "istio.io/rev": "default",
        "sidecar.istio.io/status": json.dumps({"initContainers": ["istio-init"], "containers": ["istio-proxy"],
                                               "volumes": ["istio-envoy", "istio-data", "istio-podinfo",
                                                           "istio-token", "istiod-ca-cert"],
                                               "imagePullSecrets": None, "revision": "default"}),
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied, sort_keys=True) + "\n",
    }
    return make_pod(
        name, namespace, node=node, labels=labels, annotations=annotations,
        containers=[("app", f"registry.example.com/shop/{app}:1.{index % 7}.0"),
                    ("istio-proxy", "docker.io/istio/proxyv2:1.22.1")],
        init_containers=[("istio-init", "docker.io/istio/proxyv2:1.22.1")],
    )


def add_pods(emu: Emulator, count: int, node: str, start: int = 0) -> None:
    for i in range(start, start + count):
        emu.create("pods", realistic_pod(i, node))


def pod_wire_size() -> int:
    return len(json.dumps(realistic_pod(0, NODE), separators=(",", ":")))
