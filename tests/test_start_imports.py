"""What a config does not use is not imported: a real agent run in a subprocess, then its sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.agent_process import REPO, offline_config

#: libraries (top-level packages) and modules only some configs need
OPTIONAL = {
    "google": "protobuf (OTLP protobuf encoding)",
    "opentelemetry": "opentelemetry-proto (the opentelemetry sink)",
    "zstandard": "zstd compression",
    "isal": "gzip compression",
    "httptools": "the HTTP sinks' client",
    "re2": "user regexes (match(), multiline patterns)",
    "logagent.parsers.multiline_rules": "the built-in multiline tables",
    "logagent.sinks.http.sink": "the HTTP sinks",
    "rich": "the live view of `logagent top` (structlog imports it when installed)",
    "pygments": "rich's syntax highlighting",
    "multiprocessing": "kubernetes-asyncio's ThreadPool for async_req calls",
}

PROBE = """
import json, sys
from logagent.cli import main
try:
    main(["run", "--config", sys.argv[1], "--once"])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def modules_after_run(config: Path) -> set[str]:
    result = subprocess.run([sys.executable, "-c", PROBE, str(config)], capture_output=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    report = json.loads(result.stdout.decode().splitlines()[-1])
    assert report["code"] in (0, None), result.stderr.decode()[-2000:]
    return set(report["modules"])


def loaded(modules: set[str], name: str) -> bool:
    return any(module == name or module.startswith(name + ".") for module in modules)


def write_lines(log_dir: Path) -> None:
    path = log_dir / "shop_api-1_u1" / "app" / "0.log"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"2026-12-02T10:00:00.000000001Z stdout F hello\n")


def test_a_console_only_config_imports_none_of_the_optional_libraries(tmp_path: Path) -> None:
    log_dir = tmp_path / "pods"
    write_lines(log_dir)
    modules = modules_after_run(offline_config(tmp_path, log_dir))
    assert "logagent.sinks.console" in modules  # the run did happen
    assert [f"{name} ({why})" for name, why in OPTIONAL.items() if loaded(modules, name)] == []


def test_a_filter_without_regexes_loads_no_re2_and_a_match_needing_it_does(tmp_path: Path) -> None:
    log_dir = tmp_path / "pods"
    write_lines(log_dir)
    transforms = "transforms:\n  keep: {{type: filter, inputs: [pods], condition: '{}'}}\n"
    sink = "  out: {type: console, inputs: [keep]}\n"
    plain = offline_config(tmp_path, log_dir, sink=sink, extra="").read_text()
    config = tmp_path / "filter.yaml"
    config.write_text(plain.replace("sinks:\n", transforms.format('.stream == "stdout"') + "sinks:\n"))
    assert not loaded(modules_after_run(config), "re2")
    # a pattern without repetition runs on re for ASCII texts: RE2 only when a search needs it
    config.write_text(plain.replace("sinks:\n", transforms.format("match!(.message, r''^h'')") + "sinks:\n"))
    assert not loaded(modules_after_run(config), "re2")
    config.write_text(plain.replace("sinks:\n", transforms.format("match!(.message, r''^h.*o$'')") + "sinks:\n"))
    assert loaded(modules_after_run(config), "re2")


def test_multiline_auto_loads_the_tables(tmp_path: Path) -> None:
    log_dir = tmp_path / "pods"
    write_lines(log_dir)
    config = offline_config(tmp_path, log_dir, extra="    multiline: {mode: auto}\n")
    assert loaded(modules_after_run(config), "logagent.parsers.multiline_rules")


LIGHT_KUBE = """
import json, sys
from logagent.kube.k8s_import import import_kubernetes_asyncio
config, Configuration, ApiClient = import_kubernetes_asyncio()
before = sorted(sys.modules)
conf = Configuration()
conf.username, conf.password = "a", "b"
token = conf.get_basic_auth_token()  # urllib3 runs now
from kubernetes_asyncio.client.api_client import parse
when = str(parse("2026-12-04T10:00:00Z"))  # dateutil's parser runs now
from multiprocessing.pool import ThreadPool
pool = ThreadPool(1)  # multiprocessing loads now
pooled = pool.apply_async(len, ("abc",)).get(timeout=30)
pool.close()
print(json.dumps({"before": before, "token": token, "when": when, "pooled": pooled}))
"""


def test_kubernetes_asyncio_is_imported_without_its_models_urllib3_dateutil_parser_or_thread_pool() -> None:
    result = subprocess.run([sys.executable, "-c", LIGHT_KUBE], capture_output=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    report = json.loads(result.stdout)
    before = set(report["before"])
    assert not loaded(before, "kubernetes_asyncio.client.models.v1_pod")
    assert "urllib3.util" not in before and "urllib3.poolmanager" not in before
    assert "dateutil.parser._parser" not in before
    assert "multiprocessing" not in before  # (its pool module is registered, deferred)
    assert report["token"] == "Basic YTpi"  # and all still work when used
    assert report["when"] == "2026-12-04 10:00:00+00:00"
    assert report["pooled"] == 3
