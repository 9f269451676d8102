"""Memory (and CPU) of the agent's Kubernetes metadata against the namespace count.

    python -m benchmarks memory [--quick] [--repeats 3] [--idle-secs 30]

One apiserver emulator process holds 110 realistic pods on the agent's node,
1,110 on a second node (for the per-pod growth), 1,000 on other nodes, and a
growing number of ~2 KB namespaces (0, then 50,000, then 200,000; ``--quick``:
0, 5,000, 20,000). At each count the agent runs with
``insert_namespace_fields`` off and on, and the naive baseline
(``benchmarks/naive_watcher.py``: kubernetes-asyncio models in a dict) runs
with the namespace watch on. Each run: start, wait for "metadata synced" and
for the CPU to go quiet, wait 2 s more, read VmRSS/VmHWM and utime+stime from
/proc, stop. At the largest count the flag-on agent is also put through a
relist (the emulator compacts its history and drops the namespace watch, the
resume gets 410) with VmHWM reset just before, to find the relist's peak.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.cluster import BIG_NODE, NODE, add_pods, pod_wire_size, realistic_pod
from benchmarks.common import (
    MIB,
    PYTHON,
    Emulator,
    Process,
    RunDirs,
    agent_config,
    argument_parser,
    cpu_seconds,
    initial_state_requests,
    log,
    machine_line,
    markdown_table,
    median,
    median_field,
    mib,
    read_memory,
    requests_by,
    reset_peak,
    settle,
    start_settled_agent,
    verdict,
)

NODE_PODS = 110
BIG_NODE_PODS = 1_110
OTHER_PODS = 1_000


@dataclass
class Reading:
    rss: int  # bytes
    hwm: int
    cpu: float  # seconds, whole life up to the reading
    sync_secs: float
    namespace_requests: dict[str, int] = field(default_factory=dict)


@dataclass
class Series:
    runs: list[Reading] = field(default_factory=list)

    rss = median_field("rss")
    hwm = median_field("hwm")
    cpu = median_field("cpu")
    sync_secs = median_field("sync_secs")

    def spread(self) -> str:
        values = [r.rss for r in self.runs]
        return f"{mib(min(values))}–{mib(max(values))}" if len(values) > 1 else mib(values[0])


class Bench:
    def __init__(self, root: Path, emu: Emulator) -> None:
        self.emu = emu
        self.dirs = RunDirs(root)

    def start_agent(self, node: str, namespace_flag: bool) -> tuple[Process, float]:
        d = self.dirs.next()
        # the watch store is what this measures (auto would look up beyond 5,000 namespaces;
        # see `namespace-modes` for the modes)
        config = agent_config(d, self.emu.kubeconfig, node, [namespace_flag], {"namespace_metadata": "watch"})
        return start_settled_agent(config, d / "agent.stderr")

    def agent(self, node: str, namespace_flag: bool, idle_secs: float = 0.0) -> tuple[Reading, float | None]:
        self.emu.reset_stats()
        agent, synced = self.start_agent(node, namespace_flag)
        try:
            reading = self._read(agent.pid, synced)
            idle = None
            if idle_secs:
                before = cpu_seconds(agent.pid)
                time.sleep(idle_secs)
                idle = (cpu_seconds(agent.pid) - before) / idle_secs
            reading.namespace_requests = requests_by(self.emu.stats(), "namespaces")
        finally:
            agent.stop()
        return reading, idle

    def naive(self, namespaces: int) -> Reading:
        d = self.dirs.next()
        proc = Process([PYTHON, "-m", "benchmarks.naive_watcher", "--kubeconfig", str(self.emu.kubeconfig),
                        "--node", NODE, "--pods", str(NODE_PODS), "--watch-namespaces", str(namespaces)],
                       d / "naive.stderr")
        try:
            synced = proc.wait_for(lambda line: line.startswith("synced"), 900, "naive watcher sync")
            settle(proc.pid)
            return self._read(proc.pid, synced)
        finally:
            proc.stop()

    def relist(self, namespaces: int) -> dict[str, object]:
        """Steady flag-on agent → compact + drop the namespace watch → 410 → relist; peak and requests."""
        agent, synced = self.start_agent(NODE, True)
        try:
            steady = self._read(agent.pid, synced)
            self.emu.reset_stats()
            exact_peak = reset_peak(agent.pid)
            # Move the resourceVersion past the agent's (with a pod it does not
            # watch), then compact: its resume from the old RV now gets 410.
            self.emu.create("pods", realistic_pod(10**6, "node-elsewhere"))
            self.emu.compact()
            self.emu.drop_watches("namespaces")
            deadline = time.monotonic() + 120  # not seen: reported as 0 relists (MISSED)
            while time.monotonic() < deadline:
                stats = self.emu.stats()
                if (initial_state_requests(stats, "namespaces") >= 1
                        and stats["watch_events_sent"].get("namespaces", 0) >= namespaces):
                    break
                time.sleep(0.05)
            settle(agent.pid)
            after = self._read(agent.pid, synced)
            stats = self.emu.stats()
        finally:
            agent.stop()
        return {
            "steady": steady.rss, "peak": after.hwm if exact_peak else float("nan"), "after": after.rss,
            "initial_requests": initial_state_requests(stats, "namespaces"),
            "namespace_requests": requests_by(stats, "namespaces"),
            "pod_requests": requests_by(stats, "pods"),
        }

    @staticmethod
    def _read(pid: int, synced: float) -> Reading:
        rss, hwm = read_memory(pid)
        return Reading(rss=rss, hwm=hwm, cpu=cpu_seconds(pid), sync_secs=synced)


def run(quick: bool = False, repeats: int = 3, idle_secs: float = 30.0) -> str:
    counts = [0, 5_000, 20_000] if quick else [0, 50_000, 200_000]
    largest = counts[-1]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        root = Path(tmp)
        # no bookmarks during a run: one could move the agent's RV past the compaction below
        emu = Emulator(root, bookmark_interval=3600)
        try:
            bench = Bench(root, emu)
            log(f"seeding {NODE_PODS} + {BIG_NODE_PODS} + {OTHER_PODS} pods")
            add_pods(emu, NODE_PODS, NODE)
            add_pods(emu, BIG_NODE_PODS, BIG_NODE, start=NODE_PODS)
            for i in range(OTHER_PODS):
                add_pods(emu, 1, f"node-{2 + i % 20}", start=NODE_PODS + BIG_NODE_PODS + i)

            off: dict[int, Series] = {n: Series() for n in counts}
            on: dict[int, Series] = {n: Series() for n in counts}
            naive: dict[int, Reading] = {}
            idle_cpu: list[float] = []
            big = Series()
            relist: dict[str, object] = {}
            seeded = 0
            for n in counts:
                log(f"seeding namespaces up to {n:,}")
                emu.seed_namespaces(n - seeded, start=seeded)
                seeded = n
                runs = repeats
                for r in range(runs):
                    log(f"{n:,} namespaces: agent flag off, run {r + 1}/{runs}")
                    reading, idle = bench.agent(NODE, False, idle_secs if (n == 0 and r == 0) else 0.0)
                    off[n].runs.append(reading)
                    if idle is not None:
                        idle_cpu.append(idle)
                    log(f"{n:,} namespaces: agent flag on, run {r + 1}/{runs}")
                    on[n].runs.append(bench.agent(NODE, True)[0])
                if n == 0:
                    for r in range(repeats):
                        log(f"{BIG_NODE_PODS} pods on the node: agent flag off, run {r + 1}/{repeats}")
                        big.runs.append(bench.agent(BIG_NODE, False)[0])
                log(f"{n:,} namespaces: naive baseline")
                naive[n] = bench.naive(n)
                if n == largest:
                    log(f"{n:,} namespaces: relist")
                    relist = bench.relist(n)
            emulator_rss = emu.rss()
        finally:
            emu.stop()
    return report(counts, off, on, naive, big, idle_cpu, relist, emulator_rss, repeats, quick,
                  time.monotonic() - started, idle_secs)


def report(counts: list[int], off: dict[int, Series], on: dict[int, Series], naive: dict[int, Reading],
           big: Series, idle_cpu: list[float], relist: dict[str, object], emulator_rss: int,
           repeats: int, quick: bool, elapsed: float, idle_window: float) -> str:
    largest = counts[-1]
    out = [f"### Memory benchmark ({machine_line()}; {'quick, ' if quick else ''}"
           f"median of {repeats} agent runs per cell, 1 naive run; {elapsed:.0f} s)", ""]
    out.append(f"Pods: {NODE_PODS} on the agent's node ({pod_wire_size():,} B each on the wire), "
               f"{BIG_NODE_PODS:,} on `{BIG_NODE}`, {OTHER_PODS:,} elsewhere. "
               f"Emulator RSS at the end (not counted): {mib(emulator_rss)} MiB.")
    out.append("")
    rows = []
    for n in counts:
        per_ns_on = (on[n].rss - off[n].rss) / n if n else None
        per_ns_naive = (naive[n].rss - naive[0].rss) / n if n else None
        ns_requests = ",".join(f"{v}:{c}" for v, c in sorted(off[n].runs[0].namespace_requests.items())) or "none"
        rows.append([
            f"{n:,}",
            f"{mib(off[n].rss)} ({off[n].spread()})", ns_requests,
            f"{mib(on[n].rss)} ({on[n].spread()})", mib(on[n].hwm),
            f"{on[n].cpu - off[n].cpu:.2f}", f"{on[n].sync_secs:.1f}",
            mib(naive[n].rss), mib(naive[n].hwm), f"{naive[n].sync_secs:.1f}",
            f"{per_ns_on:.0f}" if per_ns_on is not None else "–",
            f"{per_ns_naive:.0f}" if per_ns_naive is not None else "–",
            f"{per_ns_naive / per_ns_on:.0f}×" if per_ns_on and per_ns_naive else "–",
        ])
    out.append(markdown_table(
        ["namespaces", "flag off RSS MiB (range)", "ns requests (flag off)", "flag on RSS MiB (range)",
         "flag on peak MiB", "sync CPU s (on − off)", "on: synced after s", "naive RSS MiB", "naive peak MiB",
         "naive synced after s", "B/ns agent (on − off)", "B/ns naive", "naive / agent"],
        rows))
    out.append("")

    flat = off[largest].rss - off[0].rss
    per_ns_on = (on[largest].rss - off[largest].rss) / largest
    per_ns_naive = (naive[largest].rss - naive[0].rss) / largest
    sync_cpu = on[largest].cpu - off[largest].cpu
    no_ns_requests = all(not r.namespace_requests for n in counts for r in off[n].runs)
    peak_ratio = float(relist["peak"]) / float(relist["steady"])  # type: ignore[arg-type]
    per_pod = (big.rss - off[0].rss) / (BIG_NODE_PODS - NODE_PODS)
    idle = median(idle_cpu) * 100
    idle_rss = off[0].rss
    scale = "200,000" if largest == 200_000 else f"{largest:,} (quick)"
    targets = [
        [f"flag off: RSS flat from 0 to {scale} namespaces", "≤ 3 MiB", f"{flat / MIB:+.1f} MiB",
         verdict(abs(flat) <= 3 * MIB)],
        ["flag off: namespace requests seen by the emulator", "0", "0" if no_ns_requests else "some",
         verdict(no_ns_requests)],
        [f"flag on: RSS per namespace above flag off at {scale}", "≤ 300 B", f"{per_ns_on:.0f} B",
         verdict(per_ns_on <= 300)],
        ["flag on vs naive baseline, per namespace", "≥ 30× less", f"{per_ns_naive / per_ns_on:.0f}× less",
         verdict(per_ns_naive / per_ns_on >= 30)],
        [f"agent CPU for the initial sync of {scale} namespaces (on − off)", "≤ 5 s", f"{sync_cpu:.2f} s",
         verdict(sync_cpu <= 5)],
        ["peak RSS during a relist / steady RSS", "≤ 1.2×", f"{peak_ratio:.2f}× ({mib(float(relist['peak']))} / "  # type: ignore[arg-type]
         f"{mib(float(relist['steady']))} MiB; {mib(float(relist['after']))} MiB after it)",  # type: ignore[arg-type]
         verdict(peak_ratio <= 1.2)],
        ["relist: new lists/watch-lists of namespaces", "exactly 1",
         f"{relist['initial_requests']} (namespaces {relist['namespace_requests']}, pods {relist['pod_requests']})",
         verdict(relist["initial_requests"] == 1)],
        [f"idle RSS, {NODE_PODS} pods, namespace watch off", "≤ 45 MiB", f"{mib(idle_rss)} MiB",
         verdict(idle_rss <= 45 * MIB)],
        [f"RSS per pod on the node ({NODE_PODS} → {BIG_NODE_PODS:,} pods)", "(reported)",
         f"{per_pod / 1024:.2f} KiB ({mib(big.rss)} MiB at {BIG_NODE_PODS:,})", "–"],
        [f"idle CPU, {NODE_PODS} pods, no new lines (over {idle_window:.0f} s)", "< 0.5 % of a core", f"{idle:.3f} %",
         verdict(idle < 0.5)],
    ]
    out.append(markdown_table(["target", "goal", "measured", "verdict"], targets))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser("memory", __doc__)
    parser.add_argument("--quick", action="store_true", help="0 / 5,000 / 20,000 namespaces and a 10 s idle window")
    parser.add_argument("--repeats", type=int, default=3, help="agent runs per cell (median reported)")
    parser.add_argument("--idle-secs", type=float, default=None, help="idle CPU window (default 30, quick 10)")
    args = parser.parse_args(argv)
    idle = args.idle_secs if args.idle_secs is not None else (10.0 if args.quick else 30.0)
    print(run(args.quick, max(1, args.repeats), idle))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
