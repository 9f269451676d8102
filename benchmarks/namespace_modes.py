"""Namespace fields per ``kubernetes.namespace_metadata`` mode: agent memory, apiserver requests and bytes.

    python -m benchmarks namespace-modes [--quick] [--repeats 3] [--agents 6] [--window-secs 30]
                                         [--before PATH]

One apiserver emulator process holds 110 realistic pods on the agent's node
(in 50 namespaces, as ``benchmarks/cluster.py`` spreads them) and 0, 2,000,
10,000, then 100,000 namespaces (``--quick``: 0 / 2,000 / 10,000) with unique
label sets (team of 1,000, environment, a per-namespace cost-center,
managed-by; ~1.8 KB each on the wire).

1. **Start, per mode** (interleaved, ``--repeats`` runs each, medians): the
   agent with namespace fields off, then on with ``namespace_metadata`` watch,
   lookup and auto. Each run waits for "metadata synced", a quiet CPU and 2 s,
   then reads VmHWM (peak) and VmRSS (steady) from /proc and the emulator's
   namespace requests and response bytes (bodies) since the agent started.
2. **Per hour, steady state** (largest count, watch and lookup): the agent
   runs with its timers 60x faster (watch timeouts 4-8 s instead of 240-480,
   bookmarks every 1 s instead of 60, lookup TTL 5 s instead of 300) for
   ``--window-secs``, which thus stands for 60 x window seconds at the real
   timers; its namespace requests and bytes are scaled to one hour
   (x 3600 / (60 x window)). No namespace
   changes during the window: churn adds events in watch mode only.
   With ``--before PATH`` (a checkout of an earlier commit, e.g. ``git
   worktree add /tmp/before <commit>``), that commit's agent runs too, with
   namespace fields on (its only mode, a watch), interleaved with the others:
   the same-run baseline of the watch store's size.
3. **Rollout** (largest count): ``--agents`` agent processes started at once
   (default start jitter, ``initial_delay_ms`` 1 s) against the one emulator,
   per mode: total response bytes of the emulator until every agent is synced,
   and the emulator's peak RSS above its RSS before (VmHWM reset first).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.cluster import NODE, add_pods
from benchmarks.common import (
    MIB,
    Emulator,
    Process,
    RunDirs,
    agent_config,
    argument_parser,
    hwm_bytes,
    log,
    machine_line,
    markdown_table,
    median_field,
    mib,
    read_memory,
    requests_by,
    reset_peak,
    rss_bytes,
    settle,
    start_agent,
    verdict,
    wait_agent_synced,
    wait_cpu_quiet,
)

NODE_PODS = 110
POD_NAMESPACES = 50  # benchmarks.cluster.realistic_pod spreads pods over ns-000000..ns-000049
#: the steady-state window runs every timer this much faster than the defaults
SPEEDUP = 60
MODES = ("off", "watch", "lookup", "auto")


@dataclass
class Run:
    hwm: int
    rss: int
    requests: dict[str, int]
    bytes: int


@dataclass
class Cell:
    runs: list[Run] = field(default_factory=list)

    hwm = median_field("hwm")
    rss = median_field("rss")
    bytes = median_field("bytes")

    def requests(self) -> str:
        last = self.runs[-1].requests
        return ", ".join(f"{verb} {n}" for verb, n in sorted(last.items())) or "none"


def write_config(root: Path, kubeconfig: Path, mode: str, kube_extra: dict[str, object]) -> Path:
    kube: dict[str, object] = {} if mode in ("off", "auto", "before") else {"namespace_metadata": mode}
    return agent_config(root, kubeconfig, NODE, [mode != "off"], {**kube, **kube_extra})


def namespace_bytes(stats: dict) -> int:  # type: ignore[type-arg]
    return sum(n for key, n in stats["bytes_sent"].items() if key.endswith("/namespaces"))


class Bench:
    def __init__(self, root: Path, emu: Emulator, before: Path | None = None) -> None:
        self.emu = emu
        self.dirs = RunDirs(root)
        self.before = before

    def agent(self, mode: str, kube_extra: dict[str, object] | None = None) -> Process:
        d = self.dirs.next()
        config = write_config(d, self.emu.kubeconfig, mode, kube_extra or {})
        if mode == "before":
            assert self.before is not None
            return start_agent(config, d / "agent.stderr", cwd=self.before)
        return start_agent(config, d / "agent.stderr")

    def start(self, mode: str) -> Run:
        self.emu.reset_stats()
        agent = self.agent(mode)
        try:
            wait_agent_synced(agent)
            settle(agent.pid)
            rss, hwm = read_memory(agent.pid)
            stats = self.emu.stats()
        finally:
            agent.stop()
        return Run(hwm, rss, requests_by(stats, "namespaces"), namespace_bytes(stats))

    def per_hour(self, mode: str, window: float) -> tuple[dict[str, float], float]:
        """Namespace requests and bytes per hour at the real timers, from a window at 60x speed."""
        fast: dict[str, object] = {"watch_timeout_min_secs": 4, "watch_timeout_max_secs": 8,
                                   "namespace_lookup_ttl_secs": 300 / SPEEDUP}
        self.emu.call("POST", "/_emulator/settings", {"bookmark_interval": 60 / SPEEDUP})
        agent = self.agent(mode, fast)
        try:
            wait_agent_synced(agent)
            wait_cpu_quiet(agent.pid)
            self.emu.reset_stats()
            time.sleep(window)
            stats = self.emu.stats()
        finally:
            agent.stop()
            self.emu.call("POST", "/_emulator/settings", {"bookmark_interval": 3600})
        scale = 3600 / (window * SPEEDUP)  # the window stood for window x SPEEDUP seconds at the real timers
        requests = {verb: n * scale for verb, n in requests_by(stats, "namespaces").items()}
        return requests, namespace_bytes(stats) * scale

    def rollout(self, mode: str, agents: int) -> dict[str, float]:
        self.emu.reset_stats()
        before = rss_bytes(self.emu.proc.pid)
        exact = reset_peak(self.emu.proc.pid)
        started = time.monotonic()
        procs = [self.agent(mode, {"initial_delay_ms": 1000}) for _ in range(agents)]
        try:
            for proc in procs:
                wait_agent_synced(proc, timeout=900)
            elapsed = time.monotonic() - started
            stats = self.emu.stats()
            peak = hwm_bytes(self.emu.proc.pid) if exact else float("nan")
        finally:
            for proc in procs:
                proc.stop()
        total = sum(stats["bytes_sent"].values())
        return {"total": total, "namespaces": namespace_bytes(stats), "peak_above": peak - before,
                "before": before, "secs": elapsed}


def run(quick: bool, repeats: int, agents: int, window: float, before: Path | None = None) -> str:
    counts = [0, 2_000, 10_000] if quick else [0, 2_000, 10_000, 100_000]
    largest = counts[-1]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-nsmodes-") as tmp:
        root = Path(tmp)
        emu = Emulator(root, bookmark_interval=3600)
        try:
            bench = Bench(root, emu, before)
            modes = (*MODES, "before") if before is not None else MODES
            log(f"seeding {NODE_PODS} pods on {NODE}")
            add_pods(emu, NODE_PODS, NODE)
            cells: dict[tuple[int, str], Cell] = {(n, m): Cell() for n in counts for m in modes}
            seeded = 0
            for n in counts:
                if n > seeded:
                    log(f"seeding namespaces up to {n:,} (unique label sets)")
                    emu.call("POST", "/_emulator/seed", {"namespaces": n - seeded, "start": seeded,
                                                         "label_sets": "unique"})
                    seeded = n
                for r in range(repeats):
                    for mode in modes:
                        log(f"{n:,} namespaces, {mode}, run {r + 1}/{repeats}")
                        cells[(n, mode)].runs.append(bench.start(mode))
            hourly = {}
            for mode in ("watch", "lookup"):
                log(f"{largest:,} namespaces, {mode}: steady state over {window:.0f} s at {SPEEDUP}x timers")
                hourly[mode] = bench.per_hour(mode, window)
            rollouts = {}
            for mode in ("watch", "lookup", "auto"):
                log(f"{largest:,} namespaces: rollout of {agents} agents, {mode}")
                rollouts[mode] = bench.rollout(mode, agents)
        finally:
            emu.stop()
    return report(counts, cells, hourly, rollouts, agents, repeats, window, quick, time.monotonic() - started,
                  modes)


def report(counts: list[int], cells: dict[tuple[int, str], Cell], hourly: dict, rollouts: dict,  # type: ignore[type-arg]
           agents: int, repeats: int, window: float, quick: bool, elapsed: float,
           modes: tuple[str, ...] = MODES) -> str:
    largest = counts[-1]
    out = [f"### Namespace modes ({machine_line()}; {'quick, ' if quick else ''}median of {repeats} runs per cell; "
           f"{elapsed:.0f} s; shared, noisy machine)", ""]
    rows = []
    for n in counts:
        for mode in modes:
            cell, base = cells[(n, mode)], _base(cells, n, mode)
            per_ns = f"{(cell.hwm - base.hwm) / n:.0f}" if n and mode != "off" else "–"
            rows.append([f"{n:,}", mode, mib(cell.hwm), mib(cell.rss), f"{(cell.hwm - base.hwm) / MIB:+.1f}",
                         per_ns, cell.requests(), f"{cell.bytes / 1024:,.0f}"])
    out.append(markdown_table(["namespaces", "mode", "peak RSS MiB", "steady RSS MiB", "peak − base MiB",
                               "peak B/ns above base", "namespace requests at start", "namespace KiB sent at start"],
                              rows))
    out.append("")
    out.append("Base: the same count's `off` run; for `before`, its own run at 0 namespaces "
               "(the earlier agent has no `off` here, and its start-up RSS differs).")
    out.append("")
    out.append(markdown_table(
        ["mode (at " + f"{largest:,}" + " namespaces)", "namespace requests per hour", "namespace KiB per hour"],
        [[mode, ", ".join(f"{v} {n:,.0f}" for v, n in sorted(req.items())) or "none", f"{nbytes / 1024:,.0f}"]
         for mode, (req, nbytes) in hourly.items()]))
    out.append("")
    out.append(markdown_table(
        [f"rollout: {agents} agents at once, {largest:,} namespaces", "apiserver MiB sent (all)",
         "of which namespaces MiB", "per agent MiB", "emulator peak above before MiB", "all synced after s"],
        [[mode, mib(r["total"]), mib(r["namespaces"]), mib(r["total"] / agents), mib(r["peak_above"]),
          f"{r['secs']:.1f}"] for mode, r in rollouts.items()]))
    out.append("")
    off, lookup, watch = cells[(largest, "off")], cells[(largest, "lookup")], cells[(largest, "watch")]
    auto_small = cells[(2_000, "auto")].runs[-1].requests
    auto_large = cells[(largest, "auto")].runs[-1].requests
    gets = max(r.requests.get("get", 0) for r in lookup.runs)
    lists_watches = max(r.requests.get("list", 0) + r.requests.get("watch", 0) for r in lookup.runs)
    per_ns_watch = (watch.hwm - off.hwm) / largest
    targets = [
        [f"lookup peak RSS − off at {largest:,}", "≤ 3 MiB", f"{(lookup.hwm - off.hwm) / MIB:+.1f} MiB",
         verdict(lookup.hwm - off.hwm <= 3 * MIB)],
        [f"lookup namespace GETs at start ({POD_NAMESPACES} namespaces in use)", f"≤ {2 * POD_NAMESPACES + 5}",
         str(gets), verdict(gets <= 2 * POD_NAMESPACES + 5)],
        ["lookup namespace LIST/WATCH", "0", str(lists_watches), verdict(lists_watches == 0)],
        [f"lookup KiB sent per agent start at {largest:,}", "≤ 1 MiB", f"{lookup.bytes / 1024:,.0f} KiB",
         verdict(lookup.bytes <= MIB)],
        [f"watch peak B per namespace at {largest:,}", "≤ 250 (goal 180)", f"{per_ns_watch:.0f}",
         verdict(per_ns_watch <= 250)],
        ["auto at 2,000: watches", "watch", "watch" if auto_small.get("watch") else "lookup",
         verdict(bool(auto_small.get("watch")) and not auto_small.get("get"))],
        [f"auto at {largest:,}: looks up", "lookup", "lookup" if auto_large.get("get") else "watch",
         verdict(bool(auto_large.get("get")) and not auto_large.get("watch"))],
    ]
    if "before" in modes:
        before = cells[(largest, "before")]
        per_ns_before = (before.hwm - _base(cells, largest, "before").hwm) / largest
        targets.append(["watch peak B per namespace: before / now (same run)", "(reported)",
                        f"{per_ns_before:.0f} / {per_ns_watch:.0f} = {per_ns_before / per_ns_watch:.2f}×", "–"])
    out.append(markdown_table(["target", "goal", "measured", "verdict"], targets))
    return "\n".join(out)


def _base(cells: dict[tuple[int, str], Cell], count: int, mode: str) -> Cell:
    """What a cell's growth is measured from: the same count's ``off``, or, for the
    earlier agent, its own run at the smallest count (its start-up RSS is not ours)."""
    if mode == "before":
        return cells[(min(n for n, _ in cells), "before")]
    return cells[(count, "off")]


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser("namespace-modes", __doc__)
    parser.add_argument("--quick", action="store_true", help="0 / 2,000 / 10,000 namespaces")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--agents", type=int, default=6, help="agent processes in the rollout")
    parser.add_argument("--window-secs", type=float, default=30.0, help="steady-state window (at 60x timers)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of an earlier commit whose agent (namespace watch) runs as a baseline")
    args = parser.parse_args(argv)
    print(run(args.quick, max(1, args.repeats), max(1, args.agents), args.window_secs, args.before))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
