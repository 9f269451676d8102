"""Pure pieces of the file side: path parsing, globs, line splitting, config, checkpoints."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

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
