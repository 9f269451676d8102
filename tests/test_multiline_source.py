"""The kubernetes_logs source with multiline grouping: acknowledgements, the timer, annotation changes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from logagent.acks import AckGroup, Batch
from logagent.files import CheckpointStore
from logagent.files.model import Chunk, TailedFile
from logagent.kube.model import PodMeta
from logagent.sources.kubernetes_logs import KubernetesLogsSource
from logagent.sources.kubernetes_logs_config import KubernetesLogsConfig, MultilineConfig
from tests.test_multiline import trace_lines

FILE = TailedFile(1, "/var/log/pods/shop_api-0_u1/app/0.log", "/var/log/pods/shop_api-0_u1", "shop", "api-0", "u1",
                  "app", "dev:1")


def source(tmp_path: Path, **multiline: object) -> KubernetesLogsSource:
    config = KubernetesLogsConfig(log_dir=str(tmp_path), multiline=MultilineConfig(**multiline))  # type: ignore[arg-type]
    return KubernetesLogsSource("pods", config, None, CheckpointStore(tmp_path / "data"))


class Acks:
    """The acks of the chunks fed so far, and which completed."""

    def __init__(self) -> None:
        self.done: list[int] = []
        self.count = 0

    def new(self) -> AckGroup:
        number = self.count
        self.count += 1
        return AckGroup(lambda: self.done.append(number))


def cri(stream: str, message: str, tag: str = "F", seq: int = 0) -> bytes:
    return f"2026-12-02T10:00:00.{seq:09d}Z {stream} {tag} {message}".encode()


def chunk(acks: Acks, lines: list[bytes], *, eof: bool = False) -> Chunk:
    block = b"\n".join(lines) if lines else None
    return Chunk(FILE, None if block else [], None, acks.new(), sum(len(x) + 1 for x in lines), 0, eof, block)


def deliver(batch: Batch | None) -> list[str]:
    if batch is None:
        return []
    batch.release()
    return [event.message for event in batch.events]


def test_checkpoint_waits_for_the_batch_with_the_group(tmp_path: Path) -> None:
    src = source(tmp_path, mode="auto")
    acks = Acks()
    lines = trace_lines("python_chained.txt")
    first = [cri("stdout", "hello"), *(cri("stderr", line) for line in lines[:4]), cri("stdout", "world")]
    assert deliver(src._process(chunk(acks, first))) == ["hello", "world"]
    assert acks.done == []  # delivered, but the chunk holds the group's first line
    second = [cri("stderr", line) for line in lines[4:]]
    assert deliver(src._process(chunk(acks, second))) == []
    assert acks.done == []
    out = deliver(src._process(chunk(acks, [cri("stderr", "next request")])))
    assert out == ["\n".join(lines), "next request"]
    assert sorted(acks.done) == [0, 1, 2]


def test_a_batch_before_the_group_still_holds_its_chunk_until_delivered(tmp_path: Path) -> None:
    """The held reference is an extra one: the chunk completes only when both batches are delivered."""
    src = source(tmp_path, mode="auto")
    acks = Acks()
    lines = trace_lines("ruby.txt")
    early = src._process(chunk(acks, [cri("stdout", "before"), cri("stderr", lines[0])]))
    assert early is not None and [e.message for e in early.events] == ["before"]
    group = src._process(chunk(acks, [cri("stderr", line) for line in lines[1:]] + [cri("stderr", "done")]))
    assert deliver(group) == ["\n".join(lines), "done"]
    assert acks.done == [1]
    deliver(early)
    assert sorted(acks.done) == [0, 1]


def test_partial_line_fragments_inside_a_trace(tmp_path: Path) -> None:
    src = source(tmp_path, mode="auto")
    acks = Acks()
    lines = trace_lines("dotnet.txt")
    third = lines[2]
    written = [cri("stderr", line) for line in lines[:2]]
    written += [cri("stderr", third[:7], "P"), cri("stdout", "between fragments"), cri("stderr", third[7:])]
    written += [cri("stderr", line) for line in lines[3:]] + [cri("stderr", "ok")]
    assert deliver(src._process(chunk(acks, written))) == ["between fragments", "\n".join(lines), "ok"]
    assert src.multiline_records == 1 and src.multiline_lines == len(lines)


def test_end_of_file_emits_the_open_group(tmp_path: Path) -> None:
    src = source(tmp_path, mode="auto")
    acks = Acks()
    lines = trace_lines("go.txt")
    assert deliver(src._process(chunk(acks, [cri("stderr", line) for line in lines]))) == []
    assert deliver(src._process(chunk(acks, [], eof=True))) == ["\n".join(lines)]
    assert sorted(acks.done) == [0, 1]


async def test_timer_emits_an_idle_group_with_the_held_acks(tmp_path: Path) -> None:
    src = source(tmp_path, mode="auto", timeout_ms=50)
    acks = Acks()
    lines = trace_lines("java.txt")[:10]
    emitted: list[Batch] = []

    async def emit(batch: Batch) -> None:
        emitted.append(batch)

    assert src._process(chunk(acks, [cri("stderr", line) for line in lines])) is None
    timer = asyncio.create_task(src._expire_groups(emit))
    try:
        for _ in range(200):
            if emitted:
                break
            await asyncio.sleep(0.02)
    finally:
        timer.cancel()
    assert [deliver(batch) for batch in emitted] == [["\n".join(lines)]]
    assert acks.done == [0] and src.multiline_timeouts == 1


def test_pod_annotation_chooses_and_changes_the_grouping(tmp_path: Path) -> None:
    src = source(tmp_path)  # mode none
    acks = Acks()
    lines = trace_lines("python_chained.txt")
    state_pod = {"pod": None}

    class Pods:
        def get(self, uid: str) -> PodMeta | None:
            return state_pod["pod"]

    class Hub:
        pods = Pods()
        namespaces = None
        node = None

    src.hub = Hub()  # type: ignore[assignment]
    assert deliver(src._process(chunk(acks, [cri("stderr", line) for line in lines[:3]]))) == lines[:3]
    state_pod["pod"] = PodMeta(uid="u1", name="api-0", namespace="shop", resource_version="1", labels={},
                               annotations={"logagent.dev/multiline": "python"})
    assert deliver(src._process(chunk(acks, [cri("stderr", line) for line in lines]))) == []
    # the annotation is removed while a group is open: the group goes out with the next batch
    state_pod["pod"] = PodMeta(uid="u1", name="api-0", namespace="shop", resource_version="1", labels={}, annotations={})
    assert deliver(src._process(chunk(acks, [cri("stderr", "plain again")]))) == ["\n".join(lines), "plain again"]
    assert sorted(acks.done) == [0, 1, 2]


def test_a_group_open_past_the_held_bytes_cap_goes_out_with_its_acks(tmp_path: Path, monkeypatch) -> None:
    """Reading must not stall behind an open group: past MAX_HELD_BYTES it is emitted as it is."""
    import logagent.sources.kubernetes_logs as module

    monkeypatch.setattr(module, "MAX_HELD_BYTES", 2000)
    src = source(tmp_path, mode="auto")
    acks = Acks()
    lines = trace_lines("java.txt")[:10]
    assert deliver(src._process(chunk(acks, [cri("stderr", line) for line in lines[:3]]))) == []
    chatter = [cri("stdout", f"stdout line {i:04d} " + "x" * 60) for i in range(30)]
    out = deliver(src._process(chunk(acks, chatter)))
    assert out[-1] == "\n".join(lines[:3]) and len(out) == 31
    assert sorted(acks.done) == [0, 1] and src.multiline_splits == 1
    rest = [cri("stderr", line) for line in lines[3:]] + [cri("stderr", "x")]
    assert deliver(src._process(chunk(acks, rest))) == ["\n".join(lines[3:]), "x"]  # the rest, as one record
    assert sorted(acks.done) == [0, 1, 2]


def test_docker_json_files_are_grouped_too(tmp_path: Path) -> None:
    import json

    src = source(tmp_path, mode="auto")
    acks = Acks()
    lines = trace_lines("python_chained.txt")

    def docker(stream: str, log: str) -> bytes:
        return json.dumps({"log": log, "stream": stream, "time": "2026-12-02T10:00:00.000000001Z"}).encode()

    written = [docker("stdout", "booting\n")]
    for i, line in enumerate(lines):
        if i == 2:  # a line the runtime wrote in two pieces
            written += [docker("stderr", line[:5]), docker("stdout", "tick\n"), docker("stderr", line[5:] + "\n")]
        else:
            written.append(docker("stderr", line + "\n"))
    written.append(docker("stderr", "recovered\n"))
    batch = src._process(Chunk(FILE, written, None, acks.new(), 1, 0, False, None))
    assert deliver(batch) == ["booting", "tick", "\n".join(lines), "recovered"]
