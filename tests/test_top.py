"""logagent top: rows from two scrapes, --once against a running agent, the live view in tmux."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from logagent.observe import top_cli, top_model
from tests.agent_process import REPO
from tests.logwriter import LogWriter
from tests.test_tap import TIMEOUT, ErrWriter, agent_with_api, api_url

EXPOSITION = """\
# TYPE logagent_component_received_events counter
logagent_component_received_events_total{{component_id="pods",component_kind="kubernetes_logs"}} {pods}
logagent_component_received_events_total{{component_id="ship",component_kind="http"}} {ship}
# TYPE logagent_component_sent_events counter
logagent_component_sent_events_total{{component_id="pods",component_kind="kubernetes_logs"}} {pods}
logagent_component_sent_events_total{{component_id="ship",component_kind="http"}} {ship}
# TYPE logagent_files_open gauge
logagent_files_open{{component_id="pods"}} 3
# TYPE logagent_source_behind_bytes gauge
logagent_source_behind_bytes{{component_id="pods"}} 2048
# TYPE logagent_oldest_unacked_age_seconds gauge
logagent_oldest_unacked_age_seconds{{component_id="pods"}} 1.5
# TYPE logagent_sink_queue_events gauge
logagent_sink_queue_events{{component_id="ship"}} 10
# TYPE logagent_sink_queue_fill_ratio gauge
logagent_sink_queue_fill_ratio{{component_id="ship"}} 0.25
# TYPE logagent_sink_requests counter
logagent_sink_requests_total{{component_id="ship",component_kind="http",status="2xx"}} 40
logagent_sink_requests_total{{component_id="ship",component_kind="http",status="5xx"}} 2
logagent_sink_requests_total{{component_id="ship",component_kind="http",status="error"}} 1
# TYPE logagent_sink_dead_lettered_events counter
logagent_sink_dead_lettered_events_total{{component_id="ship",component_kind="http",reason="http_400"}} 4
# TYPE logagent_sink_requests_in_flight gauge
logagent_sink_requests_in_flight{{component_id="ship",component_kind="http"}} 2
"""


def test_rows_give_rates_between_two_scrapes_and_current_values() -> None:
    first = top_model.parse(EXPOSITION.format(pods=1000, ship=900), at=10.0)
    second = top_model.parse(EXPOSITION.format(pods=3000, ship=1900), at=12.0)
    pods, ship = top_model.rows(first, second)
    assert (pods.component_id, pods.role, pods.kind) == ("pods", "source", "kubernetes_logs")
    assert pods.rates["events_in"] == 1000.0 and ship.rates["events_out"] == 500.0
    assert pods.values["files_open"] == 3 and pods.values["behind_bytes"] == 2048
    assert ship.role == "sink" and ship.values["errors"] == 3 and ship.values["dead_lettered"] == 4
    assert top_model.cells(ship)[top_model.COLUMNS.index(("QUEUE", "queue_fill"))] == "25%"
    assert top_model.cells(pods)[top_model.COLUMNS.index(("BEHIND", "behind_bytes"))] == "2.05kB"
    # without a previous scrape there are no rates, only values
    assert top_model.rows(None, second)[0].rates["events_in"] is None


def test_the_live_view_without_rich_says_what_to_install(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "rich", None)
    args = argparse.Namespace(url="http://127.0.0.1:9", config=None, once=False, interval=1000)
    assert top_cli.run(args) == 1
    assert "pip install 'logagent[top]'" in capsys.readouterr().err


def keep_writing(proc: subprocess.Popen[str], writers: list[LogWriter | ErrWriter]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while proc.poll() is None and time.monotonic() < deadline:
        for writer in writers:
            writer.write(20)
        time.sleep(0.01)


def test_top_once_shows_every_component_of_a_running_agent(tmp_path: Path) -> None:
    agent, _ = agent_with_api(tmp_path, "127.0.0.1:0")
    writer = LogWriter(tmp_path / "pods", "default", "web-0", "uid-1")
    errors = ErrWriter(LogWriter(tmp_path / "pods", "default", "web-0", "uid-1", container="side"))
    try:
        url = api_url(agent)
        proc = subprocess.Popen([sys.executable, "-m", "logagent", "top", "--once", "--url", url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        keep_writing(proc, [writer, errors])
        out, err = proc.communicate(timeout=30)
    finally:
        agent.stop()
        writer.close()
        errors.writer.close()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"logagent top  {url}") and "ready yes" in lines[0]
    table = {line.split()[0]: line.split() for line in lines[2:]}
    assert set(table) == {"ID", "pods", "errs", "out"}
    assert table["pods"][1] == "source/kubernetes_logs" and table["errs"][1] == "transform/filter"
    assert table["out"][1] == "sink/console"
    assert table["pods"][-3] == "2", table["pods"]  # FILES (third from the end): two log files open


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_live_view_in_a_terminal(tmp_path: Path) -> None:
    pytest.importorskip("rich")
    agent, _ = agent_with_api(tmp_path, "127.0.0.1:0")
    writer = LogWriter(tmp_path / "pods", "default", "web-0", "uid-1")
    server = f"logagent-top-{uuid.uuid4().hex[:8]}"  # a tmux server of its own: nobody else's sessions or sizes
    tmux = ["tmux", "-L", server]
    try:
        url = api_url(agent)
        # the terminal's own size, not one a parent's COLUMNS would impose
        command = f"env -u COLUMNS -u LINES {sys.executable} -m logagent top --url {url} --interval 200"
        subprocess.run([*tmux, "new-session", "-d", "-s", "top", "-x", "200", "-y", "30", "-c", str(REPO), command],
                       check=True, timeout=30)
        deadline = time.monotonic() + TIMEOUT
        screen = ""
        while time.monotonic() < deadline:
            writer.write(20)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "top"], capture_output=True, text=True,
                                    timeout=30).stdout
            if all(word in screen for word in ("EVENTS IN/s", "pods", "errs", "out", "ctrl-c quits")):
                break
            time.sleep(0.05)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=30)
        agent.stop()
        writer.close()
    assert "source/kubernetes_logs" in screen and "sink/console" in screen, screen


def test_the_live_view_fits_a_narrow_terminal() -> None:
    rich_console = pytest.importorskip("rich.console")
    from logagent.observe import top_view

    first = top_model.parse(EXPOSITION.format(pods=1000, ship=900), at=10.0)
    second = top_model.parse(EXPOSITION.format(pods=3000, ship=1900), at=12.0)
    console = rich_console.Console(width=110, record=True, force_terminal=False)
    console.print(top_view.screen("http://x", first, second, console.width))
    text = console.export_text()
    assert "pods" in text and "ship" in text and "source/kubernetes_logs" in text and "…" not in text
