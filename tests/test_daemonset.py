"""The DaemonSet deployment (daemonset/): manifests, RBAC, agent config, image.

No cluster is needed. The kustomizations are rendered with ``kubectl
kustomize`` (skipped, with the reason, where kubectl is missing); the files
they list are also read directly, so the schema and config checks run without
kubectl too. Every manifest is checked against the Kubernetes OpenAPI schemas
(kubernetes-validate, strict: unknown fields fail), and the config the pod
mounts must pass ``logagent validate``.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

import logagent
from logagent.config import Config, parse_config
from logagent.sources.kubernetes_logs import EXCLUDE_LABEL

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "daemonset"
BASE = DEPLOY / "base"
COMPONENT = DEPLOY / "components" / "namespace-fields"
OVERLAY = DEPLOY / "overlays" / "namespace-fields"
LOOKUP_COMPONENT = DEPLOY / "components" / "namespace-lookup"
LOOKUP_OVERLAY = DEPLOY / "overlays" / "namespace-lookup"
DOCKERFILE = DEPLOY / "Dockerfile"

#: oldest and newest Kubernetes minor versions the manifests are checked against
K8S_VERSIONS = ("1.29", "1.31")
NAMESPACE = "logagent"
EXIT_CONFIG = 78
#: a value for env vars the kubelet fills in (downward API) when validating a config
DOWNWARD_PLACEHOLDER = "node-from-downward-api"
READ_VERBS = frozenset({"get", "list", "watch"})
COMMAND_TIMEOUT = 60

Grant = tuple[str, str, str]  # (apiGroup, resource, verb)


# ---------------------------------------------------------------- helpers


def load_docs(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


def kustomization(directory: Path) -> dict[str, Any]:
    return yaml.safe_load((directory / "kustomization.yaml").read_text(encoding="utf-8"))


def single(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind]
    assert len(found) == 1, f"expected exactly one {kind}, got {len(found)}"
    return found[0]


def run_kustomize(directory: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: cannot render the kustomizations")
    return _render(kubectl, str(directory))


@functools.cache
def _render(kubectl: str, directory: str) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [kubectl, "kustomize", directory], capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=False
    )
    if proc.returncode != 0 and "unknown command" in proc.stderr:
        pytest.skip(f"this kubectl has no kustomize: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, f"kubectl kustomize {directory} failed:\n{proc.stderr}"
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc is not None]


def schema_errors(obj: dict[str, Any]) -> list[str]:
    errors = []
    for version in K8S_VERSIONS:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            errors.append(f"{obj['kind']}/{obj['metadata'].get('name')} @ {version}: {where}: {exc.message}")
    return errors


def grants_of(role: dict[str, Any]) -> set[Grant]:
    grants = set()
    for rule in role["rules"]:
        assert "nonResourceURLs" not in rule, rule
        assert "resourceNames" not in rule, rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    grants.add((group, resource, verb))
    return grants


def read_grants(*resources: str) -> set[Grant]:
    return {("", resource, verb) for resource in resources for verb in READ_VERBS}


def grants_needed_by(config: Config) -> set[Grant]:
    """What the agent lists, watches and gets for this config (see ARCHITECTURE: one watch per kind;
    README, "Namespace fields at scale": lookup only gets namespaces, watch and auto may list/watch them)."""
    if not config.sources or config.kubernetes.snapshot is not None:
        return set()
    resources = {"pods"}
    if any(source.insert_node_fields for source in config.sources.values()):
        resources.add("nodes")
    grants = read_grants(*resources)
    if any(source.wants_namespaces for source in config.sources.values()):
        if config.kubernetes.namespace_metadata == "lookup":
            grants.add(("", "namespaces", "get"))
        else:
            grants |= read_grants("namespaces")
    return grants


def agent_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    pod = single(objects, "DaemonSet")["spec"]["template"]["spec"]
    containers = [c for c in pod["containers"] if c["name"] == "logagent"]
    assert len(containers) == 1
    return containers[0]


def config_path_of(container: dict[str, Any]) -> str:
    args = container.get("args") or dockerfile_exec_form("CMD")
    assert "--config" in args, args
    return args[args.index("--config") + 1]


def mounted_config(objects: list[dict[str, Any]]) -> str:
    """The agent config text the DaemonSet's container reads, followed through mount, volume and ConfigMap."""
    pod = single(objects, "DaemonSet")["spec"]["template"]["spec"]
    container = agent_container(objects)
    path = Path(config_path_of(container))
    mounts = [m for m in container["volumeMounts"] if Path(m["mountPath"]) == path.parent]
    assert len(mounts) == 1, f"no single volume mounted at {path.parent}"
    volume = next(v for v in pod["volumes"] if v["name"] == mounts[0]["name"])
    assert "configMap" in volume, f"{path.parent} is not a ConfigMap volume"
    name = volume["configMap"]["name"]
    config_maps = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == name]
    assert len(config_maps) == 1, f"the DaemonSet mounts ConfigMap {name}, which is not rendered"
    return config_maps[0]["data"][path.name]


def env_for(container: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the kubelet would set it (downward API values are placeholders)."""
    env = {}
    for var in container.get("env", []):
        env[var["name"]] = var["value"] if "value" in var else DOWNWARD_PLACEHOLDER
    return env


def referenced_vars(config_text: str) -> set[str]:
    text = config_text.replace("$$", "")
    return set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", text)) | set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", text))


def logagent_validate(config_text: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "logagent.yaml"
    path.write_text(config_text, encoding="utf-8")
    child_env = {k: v for k, v in os.environ.items() if k not in referenced_vars(config_text)}
    child_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "logagent", "validate", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        cwd=REPO,
        env=child_env,
        check=False,
    )


def generated_config_map(directory: Path) -> dict[str, Any]:
    """The ConfigMap the directory's configMapGenerator makes, without its hash suffix."""
    generators = kustomization(directory)["configMapGenerator"]
    assert len(generators) == 1
    generator = generators[0]
    data = {Path(f).name: (directory / f).read_text(encoding="utf-8") for f in generator["files"]}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": generator["name"], "namespace": NAMESPACE},
        "data": data,
    }


def base_objects_without_kustomize() -> list[dict[str, Any]]:
    """The base as kustomize would render it minus name hashing: its resource files plus its ConfigMap."""
    objects = [doc for name in kustomization(BASE)["resources"] for doc in load_docs(BASE / name)]
    return objects + [generated_config_map(BASE)]


# ---------------------------------------------------------------- Dockerfile parsing


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    logical: list[str] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    assert not pending, "Dockerfile ends in a line continuation"
    result = []
    for entry in logical:
        keyword, _, args = entry.partition(" ")
        result.append((keyword.upper(), args.strip()))
    return result


def dockerfile_stages() -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Global ARG defaults and the stages: {"image", "name", "instructions"}."""
    args: dict[str, str] = {}
    stages: list[dict[str, Any]] = []
    for keyword, rest in dockerfile_instructions():
        if keyword == "FROM":
            words = rest.split()
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m.group(1) or m.group(2)], words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append({"image": image, "name": name, "instructions": []})
        elif not stages:
            assert keyword == "ARG", f"only ARG may come before the first FROM, got {keyword}"
            key, _, default = rest.partition("=")
            args[key] = default
        else:
            stages[-1]["instructions"].append((keyword, rest))
    return args, stages


def dockerfile_exec_form(keyword: str) -> list[str]:
    _, stages = dockerfile_stages()
    values = [rest for kw, rest in stages[-1]["instructions"] if kw == keyword]
    assert len(values) == 1, f"expected one {keyword} in the final stage"
    parsed = json.loads(values[0])  # exec form: a JSON array, so no shell runs as PID 1
    assert isinstance(parsed, list) and all(isinstance(x, str) for x in parsed)
    return parsed


# ---------------------------------------------------------------- files, without kubectl


@pytest.mark.parametrize(
    "directory", [DEPLOY, BASE, COMPONENT, OVERLAY, LOOKUP_COMPONENT, LOOKUP_OVERLAY],
    ids=lambda d: str(d.relative_to(REPO)),
)
def test_every_kustomization_names_existing_files(directory: Path) -> None:
    k = kustomization(directory)
    expected_kind = "Component" if directory in (COMPONENT, LOOKUP_COMPONENT) else "Kustomization"
    assert k["kind"] == expected_kind
    for resource in k.get("resources", []):
        target = directory / resource
        assert target.is_file() or (target / "kustomization.yaml").is_file(), f"{resource} does not exist"
        if target.is_file():
            assert load_docs(target), f"{resource} holds no manifest"
    for component in k.get("components", []):
        assert kustomization(directory / component)["kind"] == "Component"
    for generator in k.get("configMapGenerator", []):
        for name in generator["files"]:
            assert (directory / name).is_file(), f"{name} does not exist"
    for patch in k.get("patches", []):
        assert ("path" in patch and (directory / patch["path"]).is_file()) or "patch" in patch


def test_schema_check_rejects_a_broken_manifest() -> None:
    """The schema check above can fail: an unknown field and a wrong type are refused."""
    daemonset = single(base_objects_without_kustomize(), "DaemonSet")
    broken = json.loads(json.dumps(daemonset))
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = {}
    assert schema_errors(broken)
    broken = json.loads(json.dumps(daemonset))
    broken["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "30s"
    assert schema_errors(broken)


@pytest.mark.parametrize(
    "directory", [BASE, COMPONENT, LOOKUP_COMPONENT], ids=["base", "namespace-fields", "namespace-lookup"]
)
def test_shipped_config_passes_logagent_validate(directory: Path, tmp_path: Path) -> None:
    text = generated_config_map(directory)["data"]["logagent.yaml"]
    container = agent_container(base_objects_without_kustomize())
    result = logagent_validate(text, env_for(container), tmp_path)
    assert result.returncode == 0, result.stderr
    # and the same file is refused without the env the DaemonSet provides
    result = logagent_validate(text, {}, tmp_path)
    assert result.returncode == EXIT_CONFIG, result.stderr
    assert "NODE_NAME" in result.stderr


def test_component_config_is_the_base_config_with_namespace_fields() -> None:
    base = yaml.safe_load((BASE / "logagent.yaml").read_text(encoding="utf-8"))
    variant = yaml.safe_load((COMPONENT / "logagent.yaml").read_text(encoding="utf-8"))
    assert [s["insert_namespace_fields"] for s in base["sources"].values()] == [False] * len(base["sources"])
    assert [s["insert_namespace_fields"] for s in variant["sources"].values()] == [True] * len(variant["sources"])
    for source in variant["sources"].values():
        source["insert_namespace_fields"] = False
    assert variant == base, "the two configs drifted apart beyond insert_namespace_fields"


def test_lookup_component_config_is_the_base_config_with_namespace_fields_by_lookup() -> None:
    base = yaml.safe_load((BASE / "logagent.yaml").read_text(encoding="utf-8"))
    variant = yaml.safe_load((LOOKUP_COMPONENT / "logagent.yaml").read_text(encoding="utf-8"))
    assert variant["kubernetes"].pop("namespace_metadata") == "lookup"
    assert [s["insert_namespace_fields"] for s in variant["sources"].values()] == [True] * len(variant["sources"])
    for source in variant["sources"].values():
        source["insert_namespace_fields"] = False
    assert variant == base, "the two configs drifted apart beyond the namespace settings"


def test_image_tag_is_the_package_version() -> None:
    images = {i["name"]: i for i in kustomization(BASE)["images"]}
    assert images["logagent"]["newTag"] == logagent.__version__
    daemonset = single(base_objects_without_kustomize(), "DaemonSet")
    assert agent_container([daemonset])["image"] == "logagent"


# ---------------------------------------------------------------- rendered by kustomize, or the base files

RENDERS = {"base": DEPLOY, "namespace-fields": OVERLAY, "namespace-lookup": LOOKUP_OVERLAY}
#: "base-files" is the base read straight from its files, so that the checks
#: below also run where kubectl is missing
DEPLOYMENTS = ["base-files", *sorted(RENDERS)]


def deployment_objects(name: str) -> list[dict[str, Any]]:
    return base_objects_without_kustomize() if name == "base-files" else run_kustomize(RENDERS[name])


@pytest.fixture(params=DEPLOYMENTS)
def rendered(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return deployment_objects(request.param)


def test_render_holds_the_expected_objects_and_matches_the_schemas(rendered: list[dict[str, Any]]) -> None:
    kinds = sorted(o["kind"] for o in rendered)
    assert kinds == sorted(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"])
    for obj in rendered:
        if obj["kind"] in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert "namespace" not in obj["metadata"]
        else:
            assert obj["metadata"]["namespace"] == NAMESPACE, obj["kind"]
    errors = [e for obj in rendered for e in schema_errors(obj)]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("name", ["base-files", "base"])
def test_base_grants_read_on_pods_and_nodes_only(name: str) -> None:
    role = single(deployment_objects(name), "ClusterRole")
    assert grants_of(role) == read_grants("pods", "nodes")


def test_component_adds_read_on_namespaces_only() -> None:
    role = single(run_kustomize(OVERLAY), "ClusterRole")
    assert grants_of(role) == read_grants("pods", "nodes", "namespaces")


def test_lookup_component_adds_get_on_namespaces_only() -> None:
    role = single(run_kustomize(LOOKUP_OVERLAY), "ClusterRole")
    assert grants_of(role) == read_grants("pods", "nodes") | {("", "namespaces", "get")}


def test_grants_are_exactly_what_the_mounted_config_needs(rendered: list[dict[str, Any]]) -> None:
    """Least privilege both ways: nothing the config does not use, nothing it uses is missing."""
    env = env_for(agent_container(rendered))
    config = parse_config(mounted_config(rendered), env)
    assert grants_of(single(rendered, "ClusterRole")) == grants_needed_by(config)


def test_binding_gives_the_role_to_the_pods_service_account(rendered: list[dict[str, Any]]) -> None:
    binding = single(rendered, "ClusterRoleBinding")
    role = single(rendered, "ClusterRole")
    account = single(rendered, "ServiceAccount")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]}
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": account["metadata"]["namespace"]}
    ]
    pod = single(rendered, "DaemonSet")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    assert pod.get("automountServiceAccountToken", True) is True
    assert account.get("automountServiceAccountToken", True) is True


def test_mounted_config_passes_logagent_validate(rendered: list[dict[str, Any]], tmp_path: Path) -> None:
    text = mounted_config(rendered)
    container = agent_container(rendered)
    missing = referenced_vars(text) - set(env_for(container))
    assert not missing, f"the config uses env vars the DaemonSet does not set: {missing}"
    result = logagent_validate(text, env_for(container), tmp_path)
    assert result.returncode == 0, result.stderr


def test_overlay_mounts_the_namespace_fields_config() -> None:
    base = parse_config(mounted_config(run_kustomize(DEPLOY)), {"NODE_NAME": DOWNWARD_PLACEHOLDER})
    overlay = parse_config(mounted_config(run_kustomize(OVERLAY)), {"NODE_NAME": DOWNWARD_PLACEHOLDER})
    lookup = parse_config(mounted_config(run_kustomize(LOOKUP_OVERLAY)), {"NODE_NAME": DOWNWARD_PLACEHOLDER})
    assert not any(s.wants_namespaces for s in base.sources.values())
    assert all(s.insert_namespace_fields for s in overlay.sources.values())
    assert overlay.kubernetes.namespace_metadata == "auto"
    assert all(s.insert_namespace_fields for s in lookup.sources.values())
    assert lookup.kubernetes.namespace_metadata == "lookup"


def test_daemonset_pod(rendered: list[dict[str, Any]]) -> None:
    daemonset = single(rendered, "DaemonSet")
    template = daemonset["spec"]["template"]
    pod = template["spec"]
    container = agent_container(rendered)
    config = parse_config(mounted_config(rendered), env_for(container))

    # node name from the downward API, used as kubernetes.node_name
    node_env = [v for v in container["env"] if v["name"] == "NODE_NAME"]
    assert node_env == [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    assert config.kubernetes.node_name == DOWNWARD_PLACEHOLDER
    assert config.kubernetes.snapshot is None and config.kubernetes.kubeconfig is None

    # the agent does not collect itself
    assert template["metadata"]["labels"][EXCLUDE_LABEL] == "true"
    selector = daemonset["spec"]["selector"]["matchLabels"]
    assert selector.items() <= template["metadata"]["labels"].items()

    # hostPath mounts: logs read-only at the same path as on the node, checkpoints writable
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}

    def host_mount_covering(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
        candidates = [m for p, m in mounts.items() if path == p or path.startswith(p.rstrip("/") + "/")]
        assert candidates, f"{path} is not on any volume"
        mount = max(candidates, key=lambda m: len(m["mountPath"]))
        volume = volumes[mount["name"]]
        assert "hostPath" in volume, f"{path} is not on a hostPath volume"
        assert volume["hostPath"]["path"] == mount["mountPath"], "host and container paths differ"
        return mount, volume

    for source in config.sources.values():
        mount, volume = host_mount_covering(source.log_dir)
        assert mount.get("readOnly") is True
        assert "subPath" not in mount
    mount, volume = host_mount_covering(config.data_dir)
    assert not mount.get("readOnly", False)
    assert volume["hostPath"]["type"] == "DirectoryOrCreate"
    for mount in container["volumeMounts"]:
        volume = volumes[mount["name"]]
        if "hostPath" in volume and mount["mountPath"] != config.data_dir:
            assert mount.get("readOnly") is True, f"{mount['mountPath']} is a writable hostPath"
    tmp = mounts["/tmp"]
    assert "emptyDir" in volumes[tmp["name"]] and not tmp.get("readOnly", False)

    # probes on the api port the config serves
    host, _, port = config.api.address.rpartition(":")
    assert config.api.enabled and host in ("0.0.0.0", "", "[::]", "::")
    ports = {p["name"]: p for p in container["ports"]}
    assert ports["api"]["containerPort"] == int(port)
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": "api"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/ready", "port": "api"}
    assert "hostPort" not in ports["api"]
    annotations = template["metadata"].get("annotations", {})
    if annotations.get("prometheus.io/scrape") == "true":
        assert annotations["prometheus.io/port"] == port
        assert annotations["prometheus.io/path"] == "/metrics"
    assert not pod.get("hostNetwork", False) and not pod.get("hostPID", False)

    # time to drain and checkpoint before SIGKILL
    assert pod["terminationGracePeriodSeconds"] > config.shutdown_grace_secs

    # least privilege: uid 0 for root-owned log files, no capabilities, nothing writable but volumes
    security = container["securityContext"]
    assert security["capabilities"].get("drop") == ["ALL"]
    assert not security["capabilities"].get("add")
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security.get("privileged", False) is False
    assert security["runAsUser"] == 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}

    # runs on every node; a rollout replaces a bounded share of agents at a time
    assert {"operator": "Exists"} in pod["tolerations"]
    rolling = daemonset["spec"]["updateStrategy"]
    assert rolling["type"] == "RollingUpdate"
    unavailable = str(rolling["rollingUpdate"]["maxUnavailable"])
    assert unavailable.endswith("%") and 0 < int(unavailable[:-1]) <= 25

    # bounded resources
    for kind in ("requests", "limits"):
        assert set(container["resources"][kind]) == {"cpu", "memory"}


@pytest.mark.parametrize("name", ["base-files", "base"])
def test_namespace_admits_hostpath_pods(name: str) -> None:
    namespace = single(deployment_objects(name), "Namespace")
    assert namespace["metadata"]["name"] == NAMESPACE
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


# ---------------------------------------------------------------- the image


def test_dockerfile_has_a_builder_and_a_final_stage_on_the_same_python() -> None:
    args, stages = dockerfile_stages()
    assert [s["name"] for s in stages] == ["builder", None]
    assert stages[0]["image"] == stages[1]["image"] == "python:3.11-slim"


def test_dockerfile_final_stage_holds_only_the_venv() -> None:
    _, (builder, final) = dockerfile_stages()
    venvs = [
        words[words.index("venv") + 1]
        for kw, rest in builder["instructions"]
        if kw == "RUN" and "venv" in (words := shlex.split(rest))
    ]
    assert len(venvs) == 1, "the builder should create one venv"
    venv = venvs[0]
    installs = [rest for kw, rest in builder["instructions"] if kw == "RUN" and f"{venv}/bin/pip install" in rest]
    assert installs and all(" -e " not in f" {r} " and "--editable" not in r for r in installs)

    final_kinds = [kw for kw, _ in final["instructions"]]
    assert "RUN" not in final_kinds, "the final stage installs nothing"
    assert "ADD" not in final_kinds
    copies = [rest for kw, rest in final["instructions"] if kw == "COPY"]
    assert copies == [f"--from=builder {venv} {venv}"]
    text = " ".join(rest for _, rest in final["instructions"])
    for tool in ("gcc", "build-essential", "apt-get", "pip install"):
        assert tool not in text
    env = " ".join(rest for kw, rest in final["instructions"] if kw == "ENV")
    assert f"PATH={venv}/bin:" in env


def test_dockerfile_runs_the_agent_with_the_mounted_config() -> None:
    assert dockerfile_exec_form("ENTRYPOINT") == ["logagent"]
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^logagent = "logagent\.cli:main"$', pyproject, re.M), "no `logagent` console script"
    cmd = dockerfile_exec_form("CMD")
    assert cmd[0] == "run"
    container = agent_container(base_objects_without_kustomize())
    assert container.get("args", cmd) == cmd
    # the path CMD names is the generated ConfigMap's key, mounted where CMD looks
    path = Path(config_path_of(container))
    assert path.name in generated_config_map(BASE)["data"]
    assert any(Path(m["mountPath"]) == path.parent for m in container["volumeMounts"])


def test_dockerfile_copies_exist_and_pass_its_dockerignore() -> None:
    _, (builder, _) = dockerfile_stages()
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text(encoding="utf-8").splitlines()
    for kw, rest in builder["instructions"]:
        if kw != "COPY" or rest.startswith("--from"):
            continue
        *sources, _dest = rest.split()
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: not in the build context (the repository root)"
            assert f"!{source.rstrip('/')}" in ignore or f"!{source.rstrip('/')}/" in ignore, f"{source} is ignored"


def test_every_agent_module_is_in_a_package_the_image_installs() -> None:
    """setuptools only packages directories with __init__.py; a module elsewhere would be missing in the image."""
    missing = sorted(
        str(d.relative_to(REPO)) for d in {p.parent for p in (REPO / "logagent").rglob("*.py")} if not (d / "__init__.py").is_file()
    )
    assert not missing, f"not packaged: {missing}"
