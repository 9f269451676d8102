"""Pure pieces of the file side: path parsing, globs, line splitting, config, checkpoints."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
import msgspec
import structlog.testing

from logagent.files import Checkpoint, CheckpointStore, TailerConfig
from logagent.files.lines import LineSplitter
from logagent.files.paths import PathFilter, parse_pod_path


def test_parse_pod_path() -> None:
    got = parse_pod_path("/var/log/pods", "/var/log/pods/kube-system_coredns-abc_1234-5678/coredns/0.log")
    assert got == ("kube-system_coredns-abc_1234-5678", "kube-system", "coredns-abc", "1234-5678", "coredns")
    odd = parse_pod_path("/var/log/pods", "/var/log/pods/weird/c/0.log")
    assert odd == ("weird", None, None, None, "c")
    assert parse_pod_path("/var/log/pods", "/elsewhere/a_b_c/c/0.log").pod_dir is None


@pytest.mark.parametrize(
    ("path", "accepted"),
    [
        ("ns_p_u/c/0.log", True),
        ("ns_p_u/c/0.log.20261202-101010", True),  # matched, then recognised by identity
        ("ns_p_u/c/0.log.20261202-101010.gz", False),
        ("ns_p_u/c/0.log.20261202-101010.tmp", False),
    ],
)
def test_default_patterns_mirror_vector(path: str, accepted: bool) -> None:
    config = TailerConfig(log_dir="/var/log/pods")
    path_filter = PathFilter(config.log_dir, config.include_paths_glob_patterns, config.exclude_paths_glob_patterns)
    assert path_filter.accepts(os.path.join("/var/log/pods", path)) is accepted


def test_glob_semantics() -> None:
    f = PathFilter("/logs", ["**/*.log", "/logs/special_*/[a-c]?/*"], ["**/skip/**", "kube-system_*/**"])
    assert f.accepts("/logs/ns_p_u/c/0.log")
    assert not f.accepts("/logs/ns_p_u/c/0.log.1")
    assert f.accepts("/logs/special_x/b1/anything")
    assert not f.accepts("/logs/special_x/d1/anything")
    assert not f.accepts("/logs/special_x/bcd/anything")  # ? is one character
    assert not f.accepts("/logs/ns_p_u/skip/0.log")
    assert not f.accepts("/logs/kube-system_dns_u/c/0.log")


def test_line_splitter_keeps_partial_and_cuts_long_lines() -> None:
    s = LineSplitter(max_line_bytes=5)
    assert s.feed(b"ab\ncd") == ([b"ab"], None)
    assert s.feed(b"e\n\nxyz123456789\nq") == ([b"cde", b"", b"xyz12"], [2])
    assert s.pending == b"q"
    # a long line without its newline yet: cut now, the rest skipped as it arrives
    assert s.feed(b"rstuvw") == ([b"qrstu"], [0])
    assert s.skipping and s.pending == b""
    assert s.feed(b"more of the same") == ([], None)
    assert s.feed(b"end\nok\n") == ([b"ok"], None)
    assert not s.skipping


def test_config_validation_names_the_key() -> None:
    with pytest.raises(ValueError, match="read_from"):
        TailerConfig(read_from="middle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_read_bytes"):
        TailerConfig(max_read_bytes=0)
    with pytest.raises(ValueError, match="exclude_paths_glob_patterns"):
        TailerConfig(exclude_paths_glob_patterns="**/*.gz")  # type: ignore[arg-type]


def test_checkpoint_store_round_trip_and_atomic_file(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "data")
    store.set("a", "1:2", Checkpoint(offset=10, fp="ff", fp_len=3, skip=True, path="/x"))
    store.set("b", "1:2", Checkpoint(offset=20, fp="ee", fp_len=4))
    store.flush()
    # no temp files left; the main file and its fsync'ed copy
    assert sorted(os.listdir(tmp_path / "data")) == ["checkpoints.json", "checkpoints.synced.json"]
    again = CheckpointStore(tmp_path / "data")
    assert again.get("a", "1:2") == Checkpoint(offset=10, fp="ff", fp_len=3, skip=True, path="/x")
    assert again.get("b", "1:2").offset == 20
    again.remove("a", "1:2")
    again.flush()
    assert CheckpointStore(tmp_path / "data").keys("a") == []
    writes = again.writes
    again.flush()  # nothing changed: nothing written
    assert again.writes == writes


def test_corrupt_checkpoint_file_is_set_aside(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "checkpoints.json").write_bytes(b"{not json")
    store = CheckpointStore(data)
    assert store.keys("a") == []
    assert any(name.startswith("checkpoints.json.") and name.endswith(".corrupt") for name in os.listdir(data))


async def test_background_flush_while_in_use(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "data")
    async with store.writing():
        store.set("a", "1:1", Checkpoint(offset=1, fp="", fp_len=0))
        for _ in range(100):
            if (tmp_path / "data" / "checkpoints.json").exists():
                break
            await asyncio.sleep(0.02)
    assert CheckpointStore(tmp_path / "data").get("a", "1:1").offset == 1


async def test_changes_are_written_soon_one_write_at_a_time_newest_state_last(tmp_path: Path) -> None:
    store = CheckpointStore(tmp_path / "data", write_spacing_secs=0.0, sync_interval_secs=0.05)
    in_flight = peak = 0
    write_synced = store._write_synced

    def slow_sync(generation: int, payload: bytes) -> None:  # the fsync'ed copy, in a thread
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            time.sleep(0.03)
            write_synced(generation, payload)
        finally:
            in_flight -= 1

    store._write_synced = slow_sync  # type: ignore[method-assign]
    newest = Checkpoint(offset=50, fp="", fp_len=0)
    async with store.writing():
        for offset in range(1, 51):
            store.set("a", "1:1", Checkpoint(offset=offset, fp="", fp_len=0))
            await asyncio.sleep(0.002)
        for _ in range(500):  # both files written while running, without a flush
            main = CheckpointStore(tmp_path / "data").get("a", "1:1")
            synced = msgspec.json.decode((tmp_path / "data" / "checkpoints.synced.json").read_bytes()
                                         if (tmp_path / "data" / "checkpoints.synced.json").exists() else b"{}")
            if main == newest and synced.get("sources", {}).get("a", {}).get("1:1", {}).get("offset") == 50:
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the newest state was not written")
    assert peak == 1  # one fsync'ed write at a time
    assert 1 <= store.syncs <= store.writes <= 50


def test_the_newer_of_the_main_and_the_synced_file_wins(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = CheckpointStore(data)
    store.set("a", "1:1", Checkpoint(offset=10, fp="", fp_len=0))
    store.flush()  # both files hold offset 10
    store.set("a", "1:1", Checkpoint(offset=20, fp="", fp_len=0))
    store._write_main(store._snapshot())  # only the main file: 20
    assert CheckpointStore(data).get("a", "1:1").offset == 20
    # a machine crash left the unsynced main file empty: the synced copy is used
    (data / "checkpoints.json").write_bytes(b"")
    again = CheckpointStore(data)
    assert again.get("a", "1:1").offset == 10
    assert [n for n in os.listdir(data) if n.endswith(".corrupt")][0].startswith("checkpoints.json.")


@pytest.mark.parametrize("content", [
    b'{"version": 1, "sources": {"a": {"1:1": {"offset": 10, "fp": "", "fp_len": 0}',  # cut short
    b'{"version": 1, "sources": {"a": {"1:1": {"offset": -5, "fp": "", "fp_len": 0}}}}',  # hand-edited
    b'{"version": 7, "sources": {}}',
    b"\x00\x00\x00\x00",
], ids=["truncated", "negative-offset", "unknown-version", "zeros"])
def test_bad_checkpoint_files_are_logged_and_set_aside(tmp_path: Path, content: bytes) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "checkpoints.json").write_bytes(content)
    with structlog.testing.capture_logs() as logs:
        store = CheckpointStore(data)
    assert store.keys("a") == []
    aside = [n for n in os.listdir(data) if n.endswith(".corrupt")]
    assert len(aside) == 1 and (data / aside[0]).read_bytes() == content
    errors = [e for e in logs if e["log_level"] == "error"]
    assert errors and errors[0]["path"] == str(data / "checkpoints.json")
    assert errors[0]["moved_to"] == str(data / aside[0])


async def test_failing_writes_are_retried_counted_and_logged_once(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("logagent.files.checkpoints.RETRY_SECS", 0.05)
    data = tmp_path / "data"
    data.write_bytes(b"")  # a file where the directory should be: every write fails
    store = CheckpointStore(data)
    with structlog.testing.capture_logs() as logs:
        async with store.writing():
            store.set("a", "1:1", Checkpoint(offset=1, fp="", fp_len=0))
            for _ in range(300):
                if store.write_errors >= 3:
                    break
                await asyncio.sleep(0.02)
            assert store.write_errors >= 3
            assert not store.try_flush()
            data.unlink()  # the disk has room again
            for _ in range(300):
                if any(e["event"] == "checkpoint writes work again" for e in logs):
                    break
                await asyncio.sleep(0.02)
    assert CheckpointStore(data).get("a", "1:1").offset == 1
    failures = [e for e in logs if e["event"].startswith("cannot write checkpoints")]
    assert len(failures) == 1  # rate-limited
    assert failures[0]["path"] == str(data / "checkpoints.json")
    assert any(e["event"] == "checkpoint writes work again" for e in logs)


async def test_small_progress_is_held_back_and_enough_progress_is_written_at_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = CheckpointStore(data, hold_secs=3600.0, hold_bytes=1000)
    store.set("a", "1:1", Checkpoint(offset=0, fp="", fp_len=0))
    store.flush()
    writes = store.writes
    async with store.writing():
        store.set("a", "1:1", Checkpoint(offset=999, fp="", fp_len=0))  # less than hold_bytes: held
        await asyncio.sleep(0.2)
        assert store.writes == writes
        assert CheckpointStore(data).get("a", "1:1").offset == 0
        store.set("a", "1:1", Checkpoint(offset=1000, fp="", fp_len=0))  # now hold_bytes moved
        for _ in range(500):
            if store.writes > writes:
                break
            await asyncio.sleep(0.01)
    assert CheckpointStore(data).get("a", "1:1").offset == 1000
    store.set("a", "1:1", Checkpoint(offset=1001, fp="", fp_len=0))
    store.close()  # the final write takes what was held back
    assert CheckpointStore(data).get("a", "1:1").offset == 1001


async def test_a_change_is_written_after_hold_secs_without_more_progress(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = CheckpointStore(data, hold_secs=0.05, hold_bytes=1 << 30)
    async with store.writing():
        store.set("a", "1:1", Checkpoint(offset=5, fp="", fp_len=0))
        for _ in range(500):
            if store.writes:
                break
            await asyncio.sleep(0.01)
    assert CheckpointStore(data).get("a", "1:1").offset == 5  # written while running: no final flush here
