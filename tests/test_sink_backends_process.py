"""The backend sinks in the agent process: a pod tree delivered whole; bad configs exit 78 naming the key."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_process import offline_config
from receivers.backends import BackendReceiver, bulk_pairs, otlp_request
from tests.logwriter import format_line, pod_dir_name

REPO = Path(__file__).resolve().parent.parent
PODS = [("shop", "web-1"), ("shop", "web-2"), ("data", "db-0")]
LINES = 300

SINKS = {
    "elasticsearch": "    endpoints: ['{base}']\n    bulk: {{index: 'logs-{{{{ kubernetes.pod_namespace }}}}-%Y.%m.%d', action: create}}\n",
    "loki": "    endpoint: '{base}'\n    labels: {{namespace: '{{{{ kubernetes.pod_namespace }}}}', pod: '{{{{ kubernetes.pod_name }}}}'}}\n",
    "opentelemetry": "    uri: '{base}/v1/logs'\n",
}


def write_tree(log_dir: Path) -> dict[str, int]:
    expected = {}
    for namespace, name in PODS:
        directory = log_dir / pod_dir_name(namespace, name, f"uid-{name}") / "app"
        directory.mkdir(parents=True)
        source = f"{namespace}/{name}"
        (directory / "0.log").write_bytes(b"".join(format_line(source, i, 150) for i in range(LINES)))
        expected[source] = LINES
    return expected


def messages(receiver: BackendReceiver) -> list[str]:
    out = []
    for entry in receiver.accepted:
        if receiver.kind == "elasticsearch":
            out += [document["message"] for _, document in bulk_pairs(entry.body)]
        elif receiver.kind == "loki":
            out += [json.loads(v[1])["message"] for s in json.loads(entry.body)["streams"] for v in s["values"]]
        else:
            request = otlp_request(entry)
            out += [r.body.string_value for rl in request.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    return out


@pytest.mark.parametrize("kind", list(SINKS))
async def test_every_record_of_a_pod_tree_arrives(tmp_path: Path, kind: str) -> None:
    receiver = BackendReceiver(kind=kind)
    await receiver.start()
    try:
        log_dir = tmp_path / "pods"
        expected = write_tree(log_dir)
        sink = (f"  out:\n    type: {kind}\n    inputs: [pods]\n    compression: gzip\n"
                "    batch: {max_events: 200, timeout_secs: 0.1}\n"
                + SINKS[kind].format(base=f"http://127.0.0.1:{receiver.port}"))
        config = offline_config(tmp_path, log_dir, sink=sink)
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "logagent", "run", "--config", str(config),
                                                    "--once", cwd=REPO, stdout=subprocess.DEVNULL,
                                                    stderr=subprocess.PIPE)
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, stderr.decode()[-2000:]
        got = messages(receiver)
        per_source: dict[str, list[int]] = {}
        for message in got:
            source, seq = message.split()[:2]
            per_source.setdefault(source, []).append(int(seq))
        assert {s: sorted(v) for s, v in per_source.items()} == {s: list(range(n)) for s, n in expected.items()}
        assert len(got) == sum(expected.values())
    finally:
        await receiver.stop()


BAD = [
    ("elasticsearch", "    endpoints: [http://es:9200]\n    bulk: {index: 'logs-{{ kubernetes.pod_nmespace }}'}\n",
     "sinks.out.bulk.index: no source gives a field kubernetes.pod_nmespace (did you mean kubernetes.pod_namespace?)"),
    ("elasticsearch", "    endpoints: [http://es:9200]\n    bulk: {index: 'Logs-%Y'}\n",
     "sinks.out.bulk.index: index names must be lower case"),
    ("elasticsearch", "    endpoints: [http://es:9200]\n    bulk: {index: 'logs-%Y.%b'}\n",
     "sinks.out.bulk.index: strftime %b gives upper-case letters"),
    ("elasticsearch", "    endpoints: [http://es:9200]\n    bulk: {index: 'logs-{{ kubernetes.pod_name'}\n",
     "sinks.out.bulk.index: an unclosed {{"),
    ("elasticsearch", "    bulk: {index: logs}\n", "sinks.out.endpoints: missing required key"),
    ("elasticsearch", "    endpoints: ['es:9200']\n", "sinks.out.endpoints[0]: scheme must be http or https"),
    ("elasticsearch", "    endpoints: [http://es-1:9200, 'es-2:9200']\n", "sinks.out.endpoints[1]: scheme must be http or https"),
    ("elasticsearch", "    endpoints: [http://es-1:9200, https://es-2:9200]\n",
     "sinks.out.endpoints: all endpoints must use the same scheme"),
    ("elasticsearch", "    endpoints: [http://es-1:9200]\n    distribution: {retry_initial_backoff_secs: 0}\n",
     "sinks.out.distribution.retry_initial_backoff_secs: must be greater than 0"),
    ("loki", "    labels: {ns: x}\n", "sinks.out.endpoint: missing required key"),
    ("loki", "    endpoint: http://loki\n    labels: {app: '{{ kubernetes.pod_labels.app }}', bad-name: x}\n",
     "sinks.out.labels.bad-name: not a Loki label name"),
    ("loki", "    endpoint: http://loki\n    structured_metadata: {trace: '{{ trace_id }}'}\n",
     "sinks.out.structured_metadata.trace: no source gives a field trace_id"),
    ("loki", "    endpoint: http://loki\n    encoding: {codec: logfmt}\n",
     'sinks.out.encoding.codec: logfmt is not supported: records are nested objects; use json'),
    ("opentelemetry", "    encoding: protobuf\n", "sinks.out.uri: missing required key"),
    ("opentelemetry", "    uri: http://c:4318/v1/logs\n    encoding: grpc\n",
     'sinks.out.encoding: expected one of protobuf, json, got "grpc"'),
]


@pytest.mark.parametrize(("kind", "options", "message"), BAD)
def test_bad_config_names_the_key_and_exits_78(tmp_path: Path, kind: str, options: str, message: str) -> None:
    config = offline_config(tmp_path, tmp_path / "pods", sink=f"  out:\n    type: {kind}\n    inputs: [pods]\n{options}")
    result = subprocess.run([sys.executable, "-m", "logagent", "validate", "--config", str(config)],
                            capture_output=True, cwd=REPO, timeout=60)
    assert result.returncode == 78, result.stderr.decode()
    assert message in result.stderr.decode()


def test_a_field_that_no_source_or_transform_gives_is_rejected(tmp_path: Path) -> None:
    from logagent.config import parse_config
    from logagent.graph import check_graph

    text = offline_config(tmp_path, tmp_path / "pods", sink=(
        "  out:\n    type: loki\n    inputs: [pods]\n    endpoint: http://loki\n"
        "    labels: {level: '{{ parsed.level }}'}\n")).read_text()
    with pytest.raises(Exception, match=r"sinks\.out\.labels\.level: no source gives a field parsed\.level"):
        check_graph(parse_config(text, {}))
