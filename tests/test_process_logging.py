"""The agent's own logs, from a real process under API faults: one format for every line."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from apiserver_emulator import ApiServerEmulator
from apiserver_emulator.objects import make_pod
from tests.agent_process import REPO

NODE = "node-1"
# what a console line starts with: time, [level], event
CONSOLE_LINE = re.compile(r"^\d{4}-\d\d-\d\dT[0-9:.]+Z \[(debug|info|warning|error|critical) *\] \S")


def agent_config(tmp_path: Path, apiserver: ApiServerEmulator) -> Path:
    kubeconfig = apiserver.write_kubeconfig(tmp_path / "kubeconfig")
    (tmp_path / "pods").mkdir()
    path = tmp_path / "agent.yaml"
    path.write_text(
        f"data_dir: {tmp_path / 'data'}\n"
        "api: {enabled: true, address: '127.0.0.1:0'}\n"
        f"kubernetes: {{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0,"
        " backoff_initial_ms: 20, backoff_max_ms: 100, use_watch_list: false}\n"
        "sources:\n"
        f"  pods: {{type: kubernetes_logs, log_dir: {tmp_path / 'pods'}, insert_node_fields: false}}\n"
        "sinks:\n"
        "  out: {type: console, inputs: [pods]}\n"
    )
    return path


async def wait_until(predicate, what: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def run_agent_under_faults(tmp_path: Path, apiserver: ApiServerEmulator, log_format: str) -> list[str]:
    """Start the agent, answer 401, 500 and drop the pod watch, stop it; its stderr lines."""
    apiserver.create("pods", make_pod("web-1", "shop", node=NODE))
    apiserver.inject_fault("list", "pods", 401, count=2, message="Unauthorized")
    apiserver.inject_fault("list", "pods", 500, count=2, message="etcd is sad")
    stderr_path = tmp_path / "agent.stderr"
    with open(stderr_path, "wb") as stderr:
        args = [sys.executable, "-m", "logagent", "--log-level", "debug", "--log-format", log_format,
                "run", "--config", str(agent_config(tmp_path, apiserver))]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr, cwd=REPO)
        try:
            statuses = apiserver.accounting.statuses
            await wait_until(lambda: statuses[("list", "pods", 500)] == 2, "the 401s and 500s to be answered")
            watches = apiserver.accounting.requests
            await wait_until(lambda: apiserver.open_watches["pods"] >= 1, "a pod watch after the errors")
            apiserver.drop_watches("pods", abort=True)
            await wait_until(lambda: watches[("watch", "pods")] >= 2, "a new pod watch after the dropped one")
            proc.send_signal(signal.SIGTERM)
            await wait_until(lambda: proc.poll() is not None, "the agent to stop")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, stderr_path.read_text()[-3000:]
    return stderr_path.read_text().splitlines()


async def test_every_stderr_line_is_json_under_api_faults(tmp_path: Path, apiserver: ApiServerEmulator) -> None:
    lines = await run_agent_under_faults(tmp_path, apiserver, "json")
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            pytest.fail(f"not a JSON line: {line!r}\nall of stderr:\n" + "\n".join(lines))
    for record in records:
        assert {"event", "level", "logger", "timestamp"} <= record.keys(), record
        assert record["level"] in ("debug", "info", "warning", "error", "critical"), record
    # the watcher's stdlib records went through the same path: 401 and 500 as warnings, with the logger name
    watcher = [r for r in records if r["logger"] == "logagent.kube.watcher" and r["level"] == "warning"]
    assert any("401" in r["event"] for r in watcher), records
    assert any("500" in r["event"] for r in watcher), records
    # and structlog's events, with their fields
    assert any(r["event"] == "metadata synced" and r["logger"] == "logagent.topology" for r in records), records
    assert any(r["event"] == "health and metrics API listening" and "url" in r for r in records), records


async def test_console_format_stays_readable_under_api_faults(tmp_path: Path, apiserver: ApiServerEmulator) -> None:
    lines = await run_agent_under_faults(tmp_path, apiserver, "console")
    # (a traceback would follow its line in console format; none is expected here)
    assert all(CONSOLE_LINE.match(line) for line in lines), lines
    watcher = [line for line in lines if "[logagent.kube.watcher]" in line and "[warning" in line]
    assert any("401" in line for line in watcher), lines
    assert not any(line.lstrip().startswith("{") for line in lines), lines


def test_stdlib_and_structlog_exceptions_are_one_json_line(tmp_path: Path) -> None:
    """In a fresh process: a library's record with a traceback, a warning, an uncaught exception."""
    script = (
        "import logging, warnings, structlog\n"
        "from logagent.observe.logging import configure_logging\n"
        "configure_logging('json', 'debug')\n"
        "structlog.get_logger('logagent.x').debug('agent debug', n=1)\n"
        "logging.getLogger('aiohttp.access').info('library info is below warning: not shown')\n"
        "try:\n"
        "    1 / 0\n"
        "except ZeroDivisionError:\n"
        "    logging.getLogger('asyncio').error('Task exception was never retrieved', exc_info=True)\n"
        "    structlog.get_logger('logagent.x').exception('failed', key='v')\n"
        "logging.getLogger('kubernetes_asyncio.rest').warning('retry %s of %d', 'GET', 3, extra={'url': '/api'})\n"
        "warnings.warn('old API', DeprecationWarning, stacklevel=1)\n"
        "raise RuntimeError('at top level')\n"
    )
    done = subprocess.run([sys.executable, "-W", "always", "-c", script], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stdout == ""
    records = [json.loads(line) for line in done.stderr.splitlines()]
    by_event = {r["event"].split(":")[0] if r["logger"] == "py.warnings" else r["event"]: r for r in records}
    assert by_event["agent debug"]["n"] == 1 and by_event["agent debug"]["level"] == "debug"
    assert "library info is below warning: not shown" not in by_event
    assert "ZeroDivisionError" in by_event["Task exception was never retrieved"]["exception"]
    assert by_event["Task exception was never retrieved"]["logger"] == "asyncio"
    assert by_event["failed"]["key"] == "v" and "ZeroDivisionError" in by_event["failed"]["exception"]
    assert by_event["retry GET of 3"]["url"] == "/api"
    assert by_event["retry GET of 3"]["logger"] == "kubernetes_asyncio.rest"
    assert any(r["logger"] == "py.warnings" and "old API" in r["event"] for r in records)
    assert "RuntimeError: at top level" in by_event["uncaught exception"]["exception"]
    assert len(records) == 6


def test_configure_logging_writes_to_the_given_stream(tmp_path: Path) -> None:
    import io

    import structlog

    from logagent.observe.logging import configure_logging

    stream = io.StringIO()
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    saved_agent_level, saved_hooks = logging.getLogger("logagent").level, (sys.excepthook, threading.excepthook)
    saved_config = structlog.get_config()
    try:
        configure_logging("json", "info", stream=stream)
        logging.getLogger("logagent.kube.hub").info("a stdlib line %d", 1)
        structlog.get_logger("logagent.t").info("a structlog line", x=[1, 2])
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        logging.getLogger("logagent").setLevel(saved_agent_level)
        sys.excepthook, threading.excepthook = saved_hooks
        structlog.configure(**saved_config)
        logging.captureWarnings(False)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["event"], r["logger"]) for r in lines] == [("a stdlib line 1", "logagent.kube.hub"), ("a structlog line", "logagent.t")]
    assert lines[1]["x"] == [1, 2]
