"""Files holding records are 0600 in 0700 directories, whatever the umask."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from logagent.event import FileContext, LogEvent
from logagent.file_modes import open_private, private_directory
from logagent.files.checkpoints import Checkpoint, CheckpointStore
from logagent.sinks.http.dead_letter import DeadLetterFile, dead_letter_path
from tests.agent_process import AgentProcess, offline_config
from tests.logwriter import LogWriter


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_new_directories_and_files_are_private_under_a_permissive_umask(tmp_path: Path, permissive_umask: None) -> None:
    deep = private_directory(tmp_path / "a" / "b")
    assert mode(tmp_path / "a") == 0o700 and mode(deep) == 0o700
    os.close(open_private(deep / "f", os.O_WRONLY))
    assert mode(deep / "f") == 0o600


def test_existing_wide_directories_and_files_are_narrowed(tmp_path: Path, permissive_umask: None) -> None:
    wide = tmp_path / "wide"
    wide.mkdir(0o755)
    (wide / "old.ndjson").write_text("x")
    os.chmod(wide / "old.ndjson", 0o644)
    private_directory(wide)
    os.close(open_private(wide / "old.ndjson", os.O_WRONLY | os.O_APPEND))
    assert mode(wide) == 0o700 and mode(wide / "old.ndjson") == 0o600
    assert (wide / "old.ndjson").read_text() == "x"


def test_a_restrictive_umask_still_gives_the_agent_write_access(tmp_path: Path) -> None:
    old = os.umask(0o277)
    try:
        os.close(open_private(private_directory(tmp_path / "d") / "f", os.O_WRONLY))
    finally:
        os.umask(old)
    assert mode(tmp_path / "d") == 0o700 and mode(tmp_path / "d" / "f") == 0o600


def test_dead_letter_files_and_their_rotation_are_private(tmp_path: Path, permissive_umask: None) -> None:
    (tmp_path / "dead-letter").mkdir(0o755)  # as an older agent left it
    path = dead_letter_path(tmp_path, "ship")
    dead = DeadLetterFile(path, max_bytes=400)
    ctx = FileContext({"file": "/x.log"})
    for i in range(10):
        dead.write_events([LogEvent(f"secret record {i}", "stdout", None, ctx)], "http_400")
    assert path.with_name("ship.ndjson.1").exists()  # it rotated
    assert mode(tmp_path / "dead-letter") == 0o700
    for written in (tmp_path / "dead-letter").iterdir():
        assert mode(written) == 0o600, written


async def test_checkpoints_are_private_in_a_private_data_dir(tmp_path: Path, permissive_umask: None) -> None:
    data_dir = tmp_path / "data"
    store = CheckpointStore(data_dir)
    async with store.writing():
        store.set("pods", "1:2", Checkpoint(offset=10, fp="", fp_len=0, skip=False, path="/var/log/pods/x/0.log"))
        await asyncio.sleep(0.05)
    store.close()
    assert mode(data_dir) == 0o700
    files = list(data_dir.iterdir())
    assert {f.name for f in files} >= {"checkpoints.json", "checkpoints.synced.json"}
    assert all(mode(f) == 0o600 for f in files)


def test_an_agent_started_with_umask_0_writes_nothing_others_can_read(tmp_path: Path) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    data_dir = tmp_path / "data"
    data_dir.mkdir(0o755)
    os.chmod(data_dir, 0o755)
    config = offline_config(tmp_path, pods)
    writer = LogWriter(pods, "default", "web-0", "uid-1")
    writer.write(20)
    old = os.umask(0)  # the child inherits it
    try:
        agent = AgentProcess(config, subprocess.DEVNULL, once=True)
    finally:
        os.umask(old)
    try:
        assert agent.wait(timeout=60) == 0
    finally:
        writer.close()
    assert mode(data_dir) == 0o700
    for path in data_dir.rglob("*"):
        assert mode(path) == (0o700 if path.is_dir() else 0o600), path
