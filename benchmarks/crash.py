"""Crash and restart: lines lost and delivered twice when the agent is killed again and again.

Run from the repository root::

    .venv/bin/python -m benchmarks crash [--secs 20] [--runs 1] [--files 5] [--rate 1000]

Five container log files get about 1,000 sequence-numbered CRI lines a second
each, rotated kubelet-style every 256 KiB (rename, new file, older rotations
gzipped). The agent (a real ``logagent run`` process, console sink into a file
per instance) is stopped every 1.5–3 s (uniform; the same seeded schedule for
every variant) with SIGKILL or SIGTERM and started again at once, for
``--secs``. Then the writers stop and a final ``--once`` run drains what is
left. Every delivered line is matched against what was written: a sequence
number never delivered is lost, one delivered more than once is a duplicate.

Variants, interleaved within each run: SIGKILL and SIGTERM, each with the
current checkpoint cadence and with the old one (one fsync'ed write a second,
selected through the internal environment variable of
``logagent/files/checkpoints.py``). For SIGKILL, the duplicates are also
attributed to the kill that caused them (the lines instance n+1 delivered that
an earlier instance had delivered already), with the number of instances that
were still reading their start-up backlog when killed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.agent_runs import agent_args, work_directory
from benchmarks.common import REPO, checkpoints_saved, median, table
from logagent.files.checkpoints import CADENCE_ENV

LINE_BYTES = 120
ROTATE_BYTES = 256 << 10
SNAPSHOT = '{"apiVersion": "v1", "kind": "List", "items": []}'


class RotatingWriter:
    """``<root>/<ns>_<pod>_<uid>/app/0.log``: CRI lines ``<ts> stdout F <pod> <seq> x…``."""

    def __init__(self, root: Path, index: int) -> None:
        self.pod = f"pod-{index}"
        self.dir = root / f"bench_{self.pod}_uid-{index:04d}" / "app"
        self.dir.mkdir(parents=True)
        self.path = self.dir / "0.log"
        self.seq = 0
        self.rotations = 0
        self._rotated: list[Path] = []
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = 0

    def write(self, n: int) -> None:
        if self._size >= ROTATE_BYTES:
            self._rotate()
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        lines = []
        for seq in range(self.seq, self.seq + n):
            body = f"{stamp} stdout F {self.pod} {seq:010d} "
            lines.append(body + "x" * (LINE_BYTES - len(body) - 1) + "\n")
        data = "".join(lines).encode()
        os.write(self._fd, data)
        self.seq += n
        self._size += len(data)

    def _rotate(self) -> None:
        rotated = self.path.with_name(f"0.log.{dt.datetime.now():%Y%m%d-%H%M%S.%f}")
        os.rename(self.path, rotated)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = 0
        self.rotations += 1
        for older in self._rotated:  # every rotation but the newest is compressed
            tmp = older.with_name(older.name + ".tmp")
            with open(older, "rb") as src, gzip.open(tmp, "wb", compresslevel=1) as dst:
                shutil.copyfileobj(src, dst)
            os.rename(tmp, older.with_name(older.name + ".gz"))
            os.unlink(older)
        self._rotated = [rotated]

    def close(self) -> None:
        os.close(self._fd)


class Writers:
    """The writers on a thread, ``rate`` lines/s each, in writes of 10 ms worth."""

    def __init__(self, root: Path, files: int, rate: float) -> None:
        self.writers = [RotatingWriter(root, i) for i in range(files)]
        self.rate = rate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        started = time.monotonic()
        written = 0
        while not self._stop.is_set():
            due = int((time.monotonic() - started) * self.rate)
            if due > written:
                for writer in self.writers:
                    writer.write(due - written)
                written = due
            time.sleep(0.01)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> dict[str, int]:
        self._stop.set()
        self._thread.join()
        for writer in self.writers:
            writer.close()
        return {w.pod: w.seq for w in self.writers}


@dataclass
class Outcome:
    variant: str
    written: int = 0
    delivered: int = 0
    lost: int = 0
    duplicated: int = 0
    restarts: int = 0
    rotations: int = 0
    per_kill: list[int] = field(default_factory=list)
    checkpoint_writes: int = 0
    lag_means: list[float] = field(default_factory=list)
    lag_max: float = 0.0

    @property
    def dup_pct(self) -> float:
        return 100.0 * self.duplicated / max(1, self.written)


def write_config(workdir: Path, log_dir: Path) -> Path:
    (workdir / "cluster.json").write_text(SNAPSHOT)
    config = workdir / "agent.yaml"
    config.write_text(
        f"data_dir: {workdir / 'data'}\n"
        "api: {enabled: false}\n"
        "shutdown_grace_secs: 10\n"
        f"kubernetes: {{node_name: bench-node, snapshot: {workdir / 'cluster.json'}}}\n"
        f"sources: {{pods: {{type: kubernetes_logs, log_dir: {log_dir}, insert_node_fields: false}}}}\n"
        "sinks: {out: {type: console, inputs: [pods]}}\n"
    )
    return config


def start_agent(config: Path, out: Path, env: dict[str, str], *, once: bool = False) -> subprocess.Popen[bytes]:
    with open(out, "wb") as stdout, open(out.with_suffix(".stderr"), "wb") as stderr:
        return subprocess.Popen(agent_args(config, once), cwd=REPO, stdout=stdout, stderr=stderr, env=env)


def delivered_seqs(out: Path) -> list[tuple[str, int]]:
    seqs = []
    for line in out.read_bytes().splitlines():
        try:
            pod, seq = json.loads(line)["message"].split(" ", 2)[:2]
            seqs.append((pod, int(seq)))
        except (ValueError, KeyError):
            continue  # a record cut by the kill
    return seqs


def run_variant(workdir: Path, name: str, signum: int, legacy: bool, schedule: list[float],
                files: int, rate: float) -> Outcome:
    root = workdir / name
    log_dir = root / "pods"
    log_dir.mkdir(parents=True)
    config = write_config(root, log_dir)
    env = dict(os.environ)
    env.pop(CADENCE_ENV, None)
    if legacy:
        env[CADENCE_ENV] = "legacy"
    writers = Writers(log_dir, files, rate)
    outs: list[Path] = []
    writers.start()
    for instance, wait in enumerate(schedule):
        outs.append(root / f"out-{instance:03d}.ndjson")
        agent = start_agent(config, outs[-1], env)
        time.sleep(wait)
        agent.send_signal(signum)
        agent.wait(timeout=60)
    expected = writers.stop()
    outs.append(root / "out-final.ndjson")
    final = start_agent(config, outs[-1], env, once=True)
    if final.wait(timeout=300) != 0:
        raise RuntimeError(f"final --once run failed: {outs[-1].with_suffix('.stderr').read_text()[-2000:]}")
    outcome = Outcome(name, restarts=len(schedule), rotations=sum(w.rotations for w in writers.writers))
    seen: dict[tuple[str, int], int] = {}
    for out in outs:
        again = 0
        for key in delivered_seqs(out):
            count = seen.get(key, 0)
            again += count > 0
            seen[key] = count + 1
        outcome.per_kill.append(again)
        if signum == signal.SIGTERM:
            saved = checkpoints_saved(out.with_suffix(".stderr"))
            outcome.checkpoint_writes += int(saved.get("writes", 0))
            if saved.get("writes"):
                outcome.lag_means.append(float(saved["persist_lag_ms_mean"]))
                outcome.lag_max = max(outcome.lag_max, float(saved["persist_lag_ms_max"]))
    outcome.per_kill = outcome.per_kill[1:]  # instance n+1's duplicates come from kill n
    outcome.written = sum(expected.values())
    outcome.delivered = sum(seen.values())
    outcome.duplicated = outcome.delivered - len(seen)
    outcome.lost = sum(1 for pod, count in expected.items() for seq in range(count) if (pod, seq) not in seen)
    return outcome


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--secs", type=float, default=20.0, help="how long the writers run and the agent is stopped")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--rate", type=float, default=1000.0, help="lines per second per file")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--only", choices=["kill", "term"], help="run only the SIGKILL or the SIGTERM variants")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    variants = [("kill", signal.SIGKILL), ("term", signal.SIGTERM)]
    if args.only:
        variants = [v for v in variants if v[0] == args.only]
    results: dict[str, list[Outcome]] = {}
    with work_directory("logagent-crash-", args.keep) as workdir:
        for run in range(args.runs):
            schedule: list[float] = []
            while sum(schedule) < args.secs:
                schedule.append(rng.uniform(1.5, 3.0))
            for label, signum in variants:
                for legacy in (False, True):
                    name = f"{label}-{'1s-fsync' if legacy else 'new'}-{run}"
                    outcome = run_variant(workdir, name, signum, legacy, schedule, args.files, args.rate)
                    results.setdefault(name.rsplit("-", 1)[0], []).append(outcome)
                    print(f"{name}: written {outcome.written:,}, lost {outcome.lost}, duplicated "
                          f"{outcome.duplicated:,} ({outcome.dup_pct:.2f} %), per stop {outcome.per_kill}",
                          file=sys.stderr)
    print_results(results, args)
    return 0


def print_results(results: dict[str, list[Outcome]], args: argparse.Namespace) -> None:
    print(f"## Crash/restart: {args.files} files x {args.rate:,.0f} lines/s, rotation every 256 KiB with gzip, "
          f"stopped every 1.5-3 s for {args.secs:.0f} s ({args.runs} run(s))\n")
    rows = []
    for variant, outcomes in results.items():
        for o in outcomes:
            kills = o.per_kill
            rows.append([variant, o.restarts, o.rotations, o.written, o.lost, o.duplicated, f"{o.dup_pct:.2f} %",
                         f"{median(kills) if kills else 0:.0f} / {max(kills) if kills else 0}",
                         o.checkpoint_writes or "-",
                         f"{median(o.lag_means):.1f} / {o.lag_max:.1f}" if o.lag_means else "-"])
    print(table(["variant", "stops", "rotations", "lines written", "lost", "duplicated", "dup %",
                 "dup per stop (median / max)", "checkpoint writes (SIGTERM runs)",
                 "ack-to-file ms, mean / max (SIGTERM runs)"], rows))
