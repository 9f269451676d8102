"""The pods tree of the pipeline benchmarks: 20 pods' CRI log files and the same pods as API objects.

``throughput``, ``checkpoints``, ``multiline``, ``parse_json``, ``http`` and
``backends`` all read this tree: ``<root>/<ns>_<pod>_<uid>/app/0.log`` per pod,
CRI lines of about 120 bytes (1 % written as a P fragment plus its F rest,
every 5th line on stderr), and enrich it from realistic pods (labels,
annotations, owner, IPs), served by the apiserver emulator (``start_cluster``)
or written as an offline snapshot (``write_snapshot``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import Emulator

NODE = "node-1"
PODS = 20
#: raw CRI line length (with its newline) the generator aims at
LINE_BYTES = 120
#: every Nth logical line is written as a P fragment plus its F rest
PARTIAL_EVERY = 100
#: every Nth line goes to stderr
STDERR_EVERY = 5
#: the length of a CRI line's prefix (timestamp, stream, tag) before its message
CRI_PREFIX_BYTES = len("2026-12-02T10:00:00.000000000Z stdout F ")


@dataclass(frozen=True)
class PodSpec:
    namespace: str
    name: str
    uid: str
    container: str
    frontend: bool

    @property
    def dir_name(self) -> str:
        return f"{self.namespace}_{self.name}_{self.uid}"


def pod_specs(count: int = PODS) -> list[PodSpec]:
    from apiserver_emulator.objects import stable_uid

    namespaces = ["shop", "payments", "search", "identity"]
    specs = []
    for i in range(count):
        namespace = namespaces[i % len(namespaces)]
        name = f"svc{i:02d}-7d9f8c6b5-{i:05d}"
        specs.append(PodSpec(namespace, name, stable_uid("pod", namespace, name), "app", frontend=i % 2 == 0))
    return specs


def pod_objects(specs: Sequence[PodSpec]) -> list[dict]:
    """Realistic pods (labels, annotations, owner, IPs) for the emulator."""
    from apiserver_emulator.objects import make_pod

    pods = []
    for i, spec in enumerate(specs):
        app = spec.name.split("-")[0]
        labels = {
            "app": app,
            "app.kubernetes.io/name": app,
            "app.kubernetes.io/instance": f"{app}-prod",
            "app.kubernetes.io/version": f"1.{i}.3",
            "app.kubernetes.io/component": "frontend" if spec.frontend else "backend",
            "app.kubernetes.io/part-of": spec.namespace,
            "app.kubernetes.io/managed-by": "Helm",
            "helm.sh/chart": f"{app}-0.{i}.1",
            "pod-template-hash": "7d9f8c6b5",
            "team": f"team-{i % 3}",
            "tier": "frontend" if spec.frontend else "backend",
        }
        annotations = {
            "kubectl.kubernetes.io/default-container": spec.container,
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "9090",
            "checksum/config": "3f7a" * 16,
            "cluster-autoscaler.kubernetes.io/safe-to-evict": "true",
        }
        pods.append(make_pod(spec.name, spec.namespace, node=NODE, uid=spec.uid, labels=labels,
                             annotations=annotations,
                             containers=[(spec.container, f"registry.example.com/{spec.namespace}/{app}:1.{i}.3")]))
    return pods


def cluster_objects(specs: Sequence[PodSpec], namespace_labels: dict[str, str],
                    node_labels: dict[str, str] | None = None) -> tuple[list[dict], list[dict], list[dict]]:
    """The pods' namespaces, the node and the pods: ``(namespaces, nodes, pods)``."""
    from apiserver_emulator.objects import make_namespace, make_node

    namespaces = [make_namespace(ns, labels=namespace_labels) for ns in sorted({s.namespace for s in specs})]
    nodes = [make_node(NODE, labels=node_labels) if node_labels else make_node(NODE)]
    return namespaces, nodes, pod_objects(specs)


def start_cluster(workdir: Path, specs: Sequence[PodSpec]) -> Emulator:
    """An emulator process serving the pods, their namespaces and the node (``with``: stopped at the end)."""
    emulator = Emulator(workdir, token="bench")
    try:
        namespaces, nodes, pods = cluster_objects(specs, {"team": "platform", "env": "prod"},
                                                  {"topology.kubernetes.io/zone": "zone-a"})
        for resource, objects in (("namespaces", namespaces), ("nodes", nodes), ("pods", pods)):
            for obj in objects:
                emulator.create(resource, obj)
    except BaseException:
        emulator.stop()
        raise
    return emulator


def write_snapshot(path: Path, specs: Sequence[PodSpec]) -> Path:
    """The same pods as an offline ``kubernetes.snapshot`` (a ``kubectl get -o json`` List)."""
    namespaces, nodes, pods = cluster_objects(specs, {"team": "platform"})
    path.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": namespaces + nodes + pods}))
    return path


# -- the log files ---------------------------------------------------------------------------


def cri_timestamp(seq: int) -> bytes:
    return b"2026-12-02T10:%02d:%02d.%09dZ" % (seq // 60000 % 60, seq // 1000 % 60, seq % 1000 * 1000)


def stream_of(seq: int) -> bytes:
    return b"stderr" if seq % STDERR_EVERY == 0 else b"stdout"


def message_text(seq: int, width: int) -> bytes:
    """A logfmt access-log message padded to ``width`` bytes."""
    body = f'level=info msg="handled" path=/api/items/{seq % 9973} status=200 ms={seq % 97} seq={seq:09d}'.encode()
    if len(body) < width:
        body += b" " + b"x" * (width - len(body) - 1)
    return body


def write_pod_log(root: Path, spec: PodSpec, lines: Sequence[bytes]) -> None:
    """``lines`` (CRI lines without newlines) as the pod's ``<container>/0.log``."""
    directory = root / spec.dir_name / spec.container
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "0.log").write_bytes(b"\n".join(lines) + b"\n")


def write_tree(root: Path, specs: Sequence[PodSpec], lines_per_file: int) -> dict[str, int]:
    """Write ``lines_per_file`` physical CRI lines per pod; returns logical records per pod dir."""
    records: dict[str, int] = {}
    width = LINE_BYTES - 1 - CRI_PREFIX_BYTES
    for spec in specs:
        out: list[bytes] = []
        seq = physical = logical = 0
        while physical < lines_per_file:
            stream, ts = stream_of(seq), cri_timestamp(seq)
            message = message_text(seq, width)
            if seq % PARTIAL_EVERY == PARTIAL_EVERY - 1 and physical + 2 <= lines_per_file:
                half = len(message) // 2
                out.append(ts + b" " + stream + b" P " + message[:half])
                out.append(ts + b" " + stream + b" F " + message[half:])
                physical += 2
            else:
                out.append(ts + b" " + stream + b" F " + message)
                physical += 1
            logical += 1
            seq += 1
        write_pod_log(root, spec, out)
        records[spec.dir_name] = logical
    return records
