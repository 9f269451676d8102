"""Measured ``logagent run --once`` runs of the pipeline benchmarks, and the figures made of them.

A run is a child process waited for with ``os.wait4``: its wall time, its own
utime+stime (every thread) and its peak RSS. Start-up (imports, the metadata
sync that ``--once`` waits for) is measured by a run on a tiny tree of the
same shape and subtracted to give a steady rate; variants of one benchmark run
interleaved, so drift of the machine's speed hits them alike, and figures are
medians of per-run values or of per-run ratios.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from benchmarks.common import PYTHON, REPO, median
from benchmarks.pod_tree import NODE

#: the metadata-only filter of the pipeline: half of the pods are "frontend"
FILTER = '.kubernetes.pod_labels.tier == "frontend"'

#: the throughput pipeline after the source: filter, route on the stream, console
PIPELINE = (
    "transforms:\n"
    f"  keep: {{type: filter, inputs: [pods], condition: '{FILTER}'}}\n"
    "  by_stream:\n"
    "    type: route\n"
    "    inputs: [keep]\n"
    "    route:\n"
    "      out: '.stream == \"stdout\"'\n"
    "      err: '.stream == \"stderr\"'\n"
    "sinks:\n"
    "  console: {type: console, inputs: [by_stream.out, by_stream.err]}\n"
)

T = TypeVar("T")

CONSOLE = "sinks:\n  out: {type: console, inputs: [pods]}\n"


@dataclass
class Measured:
    wall: float
    cpu: float
    returncode: int
    #: the child's peak resident set (ru_maxrss)
    peak_rss_kib: int = 0


def run_measured(args: Sequence[str], *, stdout: int | None = None, stderr_path: Path | None = None,
                 env: dict[str, str] | None = None, timeout: float = 600.0, cwd: Path = REPO) -> Measured:
    """Run a child to its end; wall time and the child's own utime+stime (os.wait4)."""
    err = open(stderr_path, "wb") if stderr_path else subprocess.DEVNULL
    try:
        start = time.perf_counter()
        proc = subprocess.Popen(list(args), cwd=cwd, stdout=stdout, stderr=err, env=env)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.005)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if stderr_path:
            err.close()  # type: ignore[union-attr]
    return Measured(wall, usage.ru_utime + usage.ru_stime, proc.returncode, usage.ru_maxrss)


def agent_config(path: Path, *, log_dir: Path, data_dir: Path, kubernetes: str, pipeline: str,
                 source_options: str = "") -> Path:
    """One kubernetes_logs source ``pods`` (``source_options``: ``, key: value`` more) and ``pipeline``."""
    path.write_text(
        f"data_dir: {data_dir}\n"
        "api: {enabled: false}\n"
        f"kubernetes: {kubernetes}\n"
        "sources:\n"
        f"  pods: {{type: kubernetes_logs, log_dir: {log_dir}{source_options}}}\n"
        f"{pipeline}"
    )
    return path


def emulator_kubernetes(kubeconfig: Path) -> str:
    """The ``kubernetes`` section for metadata from the emulator."""
    return f"{{node_name: {NODE}, kubeconfig: {kubeconfig}, initial_delay_ms: 0}}"


def snapshot_kubernetes(snapshot: Path) -> str:
    """The ``kubernetes`` section for metadata from an offline snapshot."""
    return f"{{node_name: {NODE}, snapshot: {snapshot}}}"


def agent_args(config: Path, once: bool = True) -> list[str]:
    return [PYTHON, "-m", "logagent", "run", "--config", str(config)] + (["--once"] if once else [])


_COLLECTED = re.compile(r"Collected : (\d+)")


def callgrind_instructions(config: Path, log: Path, tag: str, *, cwd: Path = REPO,
                           env: dict[str, str] | None = None) -> int:
    """Instructions (every thread) of one ``logagent run --once`` of ``config`` under valgrind's callgrind.

    ``PYTHONHASHSEED=0``: the same dict and set orders in every run, so before and after compare.
    """
    env = dict(os.environ if env is None else env, PYTHONHASHSEED="0")
    args = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", f"--log-file={log}"]
    done = subprocess.run(args + agent_args(config), cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise RuntimeError(f"agent run {tag} exited {done.returncode}: {done.stderr[-2000:]!r}")
    found = _COLLECTED.search(log.read_text())
    if found is None:
        raise RuntimeError(f"no callgrind total in {log}")
    return int(found.group(1))


def py_spy(args: list[str], profile: Path, rate: int, *options: str) -> list[str]:
    """``args`` recorded by py-spy (raw collapsed stacks into ``profile``)."""
    pyspy = Path(PYTHON).with_name("py-spy")
    return [str(pyspy), "record", "-r", str(rate), "-f", "raw", *options, "-o", str(profile), "--"] + args


def run_once(workdir: Path, log_dir: Path, tag: str, *, kubernetes: str, pipeline: str, source_options: str = "",
             stdout_path: Path | None = None, profile: tuple[Path, int, tuple[str, ...]] | None = None,
             env: dict[str, str] | None = None, code: Path = REPO) -> Measured:
    """One ``logagent run --once`` with a fresh data_dir; raises if it fails.

    ``profile``: (output, samples per second, more py-spy options); ``code``: the
    checkout whose ``logagent`` runs (``python -m`` from there).
    """
    data_dir = workdir / f"data-{tag}"
    shutil.rmtree(data_dir, ignore_errors=True)
    config = agent_config(workdir / f"agent-{tag}.yaml", log_dir=log_dir, data_dir=data_dir,
                          kubernetes=kubernetes, pipeline=pipeline, source_options=source_options)
    args = agent_args(config)
    if profile is not None:
        args = py_spy(args, profile[0], profile[1], *profile[2])
    stderr_path = workdir / f"agent-{tag}.stderr"
    with open(stdout_path or os.devnull, "wb") as out:
        result = run_measured(args, stdout=out.fileno(), stderr_path=stderr_path, env=env, cwd=code)
    if result.returncode != 0:
        tail = stderr_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"agent run {tag} exited {result.returncode}:\n{tail}")
    return result


def run_enriched(workdir: Path, log_dir: Path, kubeconfig: Path, tag: str, *, pipeline: str = PIPELINE,
                 source_options: str = "", stdout_path: Path | None = None,
                 profile: tuple[Path, int, tuple[str, ...]] | None = None, env: dict[str, str] | None = None,
                 code: Path = REPO) -> Measured:
    """``run_once`` with metadata from the emulator (default pipeline: the throughput one)."""
    return run_once(workdir, log_dir, tag, kubernetes=emulator_kubernetes(kubeconfig), pipeline=pipeline,
                    source_options=source_options, stdout_path=stdout_path, profile=profile, env=env, code=code)


# -- figures --------------------------------------------------------------------------------


def steady_rate(lines: int, run: Measured, startup_cpu: float) -> float:
    """Lines per CPU-second once the start-up's CPU is subtracted."""
    return lines / max(run.cpu - startup_cpu, 1e-9)


def median_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the per-run ratios (runs paired in order)."""
    return median(n / d for n, d in zip(numerators, denominators))


def alternated(items: Sequence[T], run: int) -> list[T]:
    """``items`` in order on even runs and reversed on odd ones (neither variant always goes first)."""
    return list(items) if run % 2 == 0 else list(items)[::-1]


# -- the work directory ------------------------------------------------------------------------


@contextlib.contextmanager
def work_directory(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A fresh temporary directory, removed at the end unless ``keep``."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield workdir
    finally:
        if keep:
            print(f"work directory kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
