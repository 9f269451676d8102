"""Builders of realistic core/v1 objects (shapes follow what a real cluster returns).

Identifiers (uid, containerID, imageID, IPs) are derived from the names so a
test that builds the same pod twice gets the same object.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

TIMESTAMP = "2024-05-01T10:00:00Z"


def _hex(seed: str, length: int = 64) -> str:
    out = hashlib.sha256(seed.encode()).hexdigest()
    while len(out) < length:
        out += hashlib.sha256(out.encode()).hexdigest()
    return out[:length]


def stable_uid(*parts: str) -> str:
    return str(uuid.UUID(_hex("/".join(parts), 32)))


def _ip(seed: str, prefix: str) -> str:
    h = bytes.fromhex(_hex(seed, 4))
    return f"{prefix}.{h[0]}.{max(1, h[1] % 255)}"


def _fields_v1_for(mapping: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {f"f:{prefix}": {".": {}, **{f"f:{k}": {} for k in mapping}}} if mapping else {}


def make_pod(
    name: str,
    namespace: str = "default",
    node: str | None = "node-1",
    uid: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    containers: Iterable[tuple[str, str]] = (("app", "registry.k8s.io/pause:3.9"),),
    init_containers: Iterable[tuple[str, str]] = (),
    phase: str = "Running",
    owner: tuple[str, str] | None = None,
    pod_ip: str | None = None,
    creation_timestamp: str = TIMESTAMP,
) -> dict[str, Any]:
    """A Pod as a kubelet-managed, scheduled, running pod looks in `kubectl get -o json`.

    `owner` is (kind, name) of the controller, e.g. ("ReplicaSet", "web-5d9c"); by
    default a ReplicaSet named after the pod's name minus its last dash segment.
    """
    uid = uid or stable_uid("pod", namespace, name)
    labels = dict(labels if labels is not None else {"app": name.rsplit("-", 1)[0]})
    annotations = dict(annotations or {})
    containers = list(containers)
    init_containers = list(init_containers)
    if owner is None and "-" in name:
        owner = ("ReplicaSet", name.rsplit("-", 1)[0])
    pod_ip = pod_ip or _ip(f"{namespace}/{name}", "10.244")
    host_ip = _ip(node or "none", "192.168")
    running = phase == "Running"

    def container_spec(cname: str, image: str) -> dict[str, Any]:
        return {
            "name": cname,
            "image": image,
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "resources": {"limits": {"memory": "128Mi"}, "requests": {"cpu": "50m", "memory": "64Mi"}},
            "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                              "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent",
        }

    def container_status(cname: str, image: str, init: bool) -> dict[str, Any]:
        cid = "containerd://" + _hex(f"{uid}/{cname}")
        repo = image.rsplit(":", 1)[0] if ":" in image.rsplit("/", 1)[-1] else image
        status: dict[str, Any] = {
            "name": cname,
            "ready": running and not init,
            "restartCount": 0,
            "image": image if "/" in image else f"docker.io/library/{image}",
            "imageID": f"{repo if '/' in repo else 'docker.io/library/' + repo}@sha256:{_hex(image)}",
            "started": running and not init,
        }
        if init:
            status["state"] = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": creation_timestamp,
                                              "finishedAt": creation_timestamp, "containerID": cid}}
            status["containerID"] = cid
        elif running:
            status["state"] = {"running": {"startedAt": creation_timestamp}}
            status["containerID"] = cid
        else:
            status["state"] = {"waiting": {"reason": "ContainerCreating"}}
        return status

    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid,
        "creationTimestamp": creation_timestamp,
        "labels": labels,
    }
    if annotations:
        metadata["annotations"] = annotations
    if owner:
        metadata["generateName"] = owner[1] + "-"
        metadata["ownerReferences"] = [{
            "apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
            "uid": stable_uid(owner[0], namespace, owner[1]), "controller": True, "blockOwnerDeletion": True,
        }]
    metadata["managedFields"] = [
        {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
         "time": creation_timestamp, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:metadata": {**_fields_v1_for(labels, "labels"), "f:generateName": {}},
                      "f:spec": {"f:containers": {f'k:{{"name":"{c}"}}': {".": {}, "f:image": {}, "f:name": {}}
                                                  for c, _ in containers}}}},
        {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": creation_timestamp,
         "fieldsType": "FieldsV1", "subresource": "status",
         "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:hostIP": {},
                                   "f:phase": {}, "f:podIP": {}, "f:podIPs": {}, "f:startTime": {}}}},
    ]
    spec: dict[str, Any] = {
        "volumes": [{"name": "kube-api-access", "projected": {"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                          "fieldPath": "metadata.namespace"}}]}},
        ], "defaultMode": 420}}],
        "containers": [container_spec(c, i) for c, i in containers],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    if init_containers:
        spec["initContainers"] = [container_spec(c, i) for c, i in init_containers]
    if node:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": phase, "qosClass": "Burstable"}
    if node:
        cond = "True" if running else "False"
        status["conditions"] = [
            {"type": t, "status": s, "lastProbeTime": None, "lastTransitionTime": creation_timestamp}
            for t, s in (("PodReadyToStartContainers", cond), ("Initialized", "True"), ("Ready", cond),
                         ("ContainersReady", cond), ("PodScheduled", "True"))
        ]
        status["hostIP"] = host_ip
        status["hostIPs"] = [{"ip": host_ip}]
        status["startTime"] = creation_timestamp
        if running:
            status["podIP"] = pod_ip
            status["podIPs"] = [{"ip": pod_ip}]
        if init_containers:
            status["initContainerStatuses"] = [container_status(c, i, True) for c, i in init_containers]
        status["containerStatuses"] = [container_status(c, i, False) for c, i in containers]
    else:
        status = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                      "lastProbeTime": None,
                                                      "lastTransitionTime": creation_timestamp,
                                                      "reason": "Unschedulable"}], "qosClass": "Burstable"}
    return {"kind": "Pod", "apiVersion": "v1", "metadata": metadata, "spec": spec, "status": status}


def make_namespace(
    name: str,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    uid: str | None = None,
    last_applied: bool = False,
    creation_timestamp: str = TIMESTAMP,
) -> dict[str, Any]:
    """A Namespace; `last_applied=True` adds the annotation and managedFields `kubectl apply` leaves."""
    labels = {"kubernetes.io/metadata.name": name, **(labels or {})}
    annotations = dict(annotations or {})
    managed: list[dict[str, Any]] = []
    user_labels = {k: v for k, v in labels.items() if k != "kubernetes.io/metadata.name"}
    if last_applied:
        applied = {"apiVersion": "v1", "kind": "Namespace",
                   "metadata": {"annotations": dict(annotations), "labels": user_labels, "name": name}}
        annotations["kubectl.kubernetes.io/last-applied-configuration"] = json.dumps(
            applied, separators=(",", ":"), sort_keys=True) + "\n"
        managed.append({
            "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",
            "time": creation_timestamp, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {**_fields_v1_for(annotations, "annotations"),
                                        **_fields_v1_for(labels, "labels")}},
        })
    else:
        managed.append({
            "manager": "kube-apiserver", "operation": "Update", "apiVersion": "v1",
            "time": creation_timestamp, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": _fields_v1_for(labels, "labels")},
        })
    metadata: dict[str, Any] = {
        "name": name,
        "uid": uid or stable_uid("namespace", name),
        "creationTimestamp": creation_timestamp,
        "labels": labels,
    }
    if annotations:
        metadata["annotations"] = annotations
    metadata["managedFields"] = managed
    return {"kind": "Namespace", "apiVersion": "v1", "metadata": metadata,
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}


def make_node(
    name: str,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    uid: str | None = None,
    creation_timestamp: str = TIMESTAMP,
) -> dict[str, Any]:
    """A Ready linux/amd64 Node with the labels, addresses and nodeInfo a kubelet reports."""
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "topology.kubernetes.io/region": "region-1",
        "topology.kubernetes.io/zone": "zone-a",
        **(labels or {}),
    }
    annotations = {
        "node.alpha.kubernetes.io/ttl": "0",
        "volumes.kubernetes.io/controller-managed-attach-detach": "true",
        **(annotations or {}),
    }
    ip = _ip(name, "192.168")
    resources = {"cpu": "4", "ephemeral-storage": "101430960Ki", "hugepages-2Mi": "0",
                 "memory": "16283300Ki", "pods": "110"}
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "uid": uid or stable_uid("node", name),
            "creationTimestamp": creation_timestamp,
            "labels": labels,
            "annotations": annotations,
            "managedFields": [
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": creation_timestamp,
                 "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {**_fields_v1_for(annotations, "annotations"),
                                             **_fields_v1_for(labels, "labels")}}},
            ],
        },
        "spec": {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"], "providerID": f"kind://docker/{name}"},
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                {"type": t, "status": s, "lastHeartbeatTime": creation_timestamp,
                 "lastTransitionTime": creation_timestamp, "reason": r, "message": m}
                for t, s, r, m in (
                    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                )
            ],
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": _hex(f"machine/{name}", 32), "systemUUID": stable_uid("system", name),
                "bootID": stable_uid("boot", name), "kernelVersion": "6.8.0-45-generic",
                "osImage": "Debian GNU/Linux 12 (bookworm)", "containerRuntimeVersion": "containerd://1.7.18",
                "kubeletVersion": "v1.31.0", "kubeProxyVersion": "v1.31.0", "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": [
                {"names": [f"registry.k8s.io/pause@sha256:{_hex('pause')}", "registry.k8s.io/pause:3.9"],
                 "sizeBytes": 321520},
            ],
        },
    }
