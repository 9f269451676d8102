"""Requests the agent makes to the apiserver: start, steady state, watch restarts, process restart.

    python -m benchmarks control-plane [--quick] [--steady-secs 60]

The apiserver emulator (its own process) counts every request by verb and
resource and logs each one's query. The agent runs with THREE
kubernetes_logs sources. Scenarios:

1. start, all three sources with ``insert_namespace_fields: false``;
2. start, one of the three with ``insert_namespace_fields: true``;
3. steady state: scenario 2 with ``watch_timeout_min/max_secs`` 2–3 s for
   ``--steady-secs`` while a pod on the node and a namespace change every 2 s,
   then scaled to one hour at the default 240–480 s timeouts;
4. every watch dropped by the server (as on an apiserver restart);
5. the agent process stopped and started again.

The per-source-watcher design is computed, not run: it would open one watch
per source per kind.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.cluster import NODE, add_pods, realistic_pod
from benchmarks.common import (
    Emulator,
    Process,
    agent_config,
    argument_parser,
    initial_state_requests,
    log,
    machine_line,
    markdown_table,
    requests_by,
    start_agent,
    verdict,
    wait_agent_synced,
)

NODE_PODS = 110
OTHER_PODS = 200
NAMESPACES = 2_000
SOURCES = 3
#: watch timeouts used to simulate many watch cycles in a short run
SHORT_TIMEOUTS = (2, 3)
#: the agent's defaults (KubernetesConfig.watch_timeout_min/max_secs)
DEFAULT_TIMEOUTS = (240, 480)
CHANGE_EVERY_SECS = 2.0


def _fmt(requests: dict[str, int]) -> str:
    return ", ".join(f"{verb} {n}" for verb, n in sorted(requests.items())) or "none"


def _summary(stats: dict[str, Any]) -> dict[str, dict[str, int]]:
    return {res: requests_by(stats, res) for res in ("pods", "namespaces", "nodes")}


def _resume_rvs(stats: dict[str, Any], resource: str) -> list[int]:
    """resourceVersion of each plain (resuming) watch of a resource, in request order."""
    return [int(rec["query"].get("resourceVersion", "0") or 0) for rec in stats["log"]
            if rec["resource"] == resource and rec["verb"] == "watch"
            and rec["query"].get("sendInitialEvents") != "true"]


class Run:
    def __init__(self, root: Path, emu: Emulator) -> None:
        self.root = root
        self.emu = emu
        self.n = 0

    def start(self, flags: list[bool], kube_extra: dict[str, object] | None = None,
              directory: Path | None = None) -> Process:
        if directory is None:
            self.n += 1
            directory = self.root / f"agent-{self.n}"
            directory.mkdir()
        # the watch protocol is what this measures (auto would add one counting list)
        config = agent_config(directory, self.emu.kubeconfig, NODE, flags,
                              {"namespace_metadata": "watch", **(kube_extra or {})})
        agent = start_agent(config, directory / f"agent-{time.monotonic_ns()}.stderr")
        wait_agent_synced(agent)
        time.sleep(1.0)
        return agent


def run(steady_secs: float) -> str:
    started = time.monotonic()
    rows: list[list[str]] = []
    checks: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-control-plane-") as tmp:
        root = Path(tmp)
        emu = Emulator(root, bookmark_interval=60.0)
        try:
            r = Run(root, emu)
            log("seeding")
            add_pods(emu, NODE_PODS, NODE)
            for i in range(OTHER_PODS):
                add_pods(emu, 1, f"node-{2 + i % 10}", start=NODE_PODS + i)
            emu.seed_namespaces(NAMESPACES)

            # 1. start, no source wants namespace fields
            log("start: 3 sources, insert_namespace_fields false")
            emu.reset_stats()
            agent = r.start([False] * SOURCES)
            s1 = _summary(emu.stats())
            agent.stop()
            rows.append(["start, 3 sources, all `insert_namespace_fields: false`", _fmt(s1["pods"]),
                         _fmt(s1["namespaces"]), _fmt(s1["nodes"])])
            checks.append(["3 sources share one pod watch (start, flags off)", "pods: 1 watch-list, nothing else",
                           _fmt(s1["pods"]) + f"; namespaces: {_fmt(s1['namespaces'])}",
                           verdict(s1["pods"] == {"watch": 1} and not s1["namespaces"] and not s1["nodes"])])

            # 2. start, one source wants namespace fields
            log("start: 3 sources, one with insert_namespace_fields true")
            emu.reset_stats()
            agent = r.start([True, False, False])
            s2 = _summary(emu.stats())
            agent.stop()
            rows.append(["start, 3 sources, one `insert_namespace_fields: true`", _fmt(s2["pods"]),
                         _fmt(s2["namespaces"]), _fmt(s2["nodes"])])
            checks.append(["one namespace watch for the one source that asks", "pods 1, namespaces 1 watch-list",
                           f"pods: {_fmt(s2['pods'])}; namespaces: {_fmt(s2['namespaces'])}",
                           verdict(s2["pods"] == {"watch": 1} and s2["namespaces"] == {"watch": 1})])

            # 3. steady state with short watch timeouts and some churn
            log(f"steady state: {steady_secs:.0f} s with {SHORT_TIMEOUTS[0]}-{SHORT_TIMEOUTS[1]} s watch timeouts")
            extra = {"watch_timeout_min_secs": SHORT_TIMEOUTS[0], "watch_timeout_max_secs": SHORT_TIMEOUTS[1]}
            steady_dir = root / "steady"
            steady_dir.mkdir()
            agent = r.start([True, False, False], extra, steady_dir)
            emu.reset_stats()
            t0 = time.monotonic()
            last_rv = {"pods": 0, "namespaces": 0}
            changes = 0
            while time.monotonic() - t0 < steady_secs:
                time.sleep(CHANGE_EVERY_SECS)
                changes += 1
                pod = realistic_pod(changes % NODE_PODS, NODE)
                pod["metadata"]["labels"]["revision"] = str(changes)
                last_rv["pods"] = int(emu.create("pods", pod)["metadata"]["resourceVersion"])
                ns = emu.call("PATCH", f"/_emulator/objects/namespaces/ns-{changes % NAMESPACES:06d}",
                              {"metadata": {"labels": {"revision": str(changes)}}})
                last_rv["namespaces"] = int(ns["metadata"]["resourceVersion"])
            time.sleep(SHORT_TIMEOUTS[1] + 1.0)  # one more full cycle: every watch resumed past the last change
            elapsed = time.monotonic() - t0
            stats = emu.stats()
            s3 = _summary(stats)
            rows.append([f"steady state, {elapsed:.0f} s at {SHORT_TIMEOUTS[0]}–{SHORT_TIMEOUTS[1]} s timeouts, "
                         f"{changes} pod + {changes} namespace changes", _fmt(s3["pods"]), _fmt(s3["namespaces"]),
                         _fmt(s3["nodes"])])
            initial = initial_state_requests(stats, "pods") + initial_state_requests(stats, "namespaces")
            resumed_ok = True
            resume_notes = []
            for res in ("pods", "namespaces"):
                rvs = _resume_rvs(stats, res)
                monotonic = all(a <= b for a, b in zip(rvs, rvs[1:]))
                caught_up = bool(rvs) and rvs[-1] >= last_rv[res]
                resumed_ok &= monotonic and caught_up and all(rv > 0 for rv in rvs)
                resume_notes.append(f"{res}: {len(rvs)} resumes, last RV {rvs[-1] if rvs else '-'} "
                                    f"≥ last change {last_rv[res]}")
            checks.append(["steady state: no lists or watch-lists", "0", str(initial), verdict(initial == 0)])
            checks.append(["every watch resumes from the last resourceVersion seen",
                           "RVs non-decreasing, last ≥ last change", "; ".join(resume_notes), verdict(resumed_ok)])
            # a cycle is one watch request; any other request (list, retry) shows up as > 1 per cycle
            cycles = {res: max(1, s3[res].get("watch", 0)) for res in ("pods", "namespaces")}
            per_cycle = {res: sum(s3[res].values()) / cycles[res] for res in cycles}
            cycle_secs = {res: elapsed / cycles[res] for res in cycles}

            # 4. the server drops every watch (apiserver restart, LB idle timeout)
            log("watches dropped by the server")
            emu.reset_stats()
            emu.drop_watches()
            time.sleep(2.0)
            stats = emu.stats()
            s4 = _summary(stats)
            rows.append(["server drops every watch", _fmt(s4["pods"]), _fmt(s4["namespaces"]), _fmt(s4["nodes"])])
            dropped_initial = initial_state_requests(stats, "pods") + initial_state_requests(stats, "namespaces")
            checks.append(["dropped watches resume without a list", "0 lists/watch-lists",
                           f"{dropped_initial}; resumed: pods {_fmt(s4['pods'])}, namespaces {_fmt(s4['namespaces'])}",
                           verdict(dropped_initial == 0 and s4["pods"].get("watch", 0) >= 1)])
            agent.stop()

            # 5. process restart
            log("agent process restart")
            emu.reset_stats()
            agent = r.start([True, False, False], extra, steady_dir)
            stats = emu.stats()
            agent.stop()
            s5 = _summary(stats)
            rows.append(["agent process stopped and started again", _fmt(s5["pods"]), _fmt(s5["namespaces"]),
                         _fmt(s5["nodes"])])
            rv0 = all(rec["query"].get("resourceVersion") == "0" for rec in stats["log"]
                      if rec["query"].get("sendInitialEvents") == "true")
            checks.append(["process restart: one initial watch-list per kind, from the watch cache (RV 0)",
                           "pods 1, namespaces 1", f"pods {_fmt(s5['pods'])}, namespaces {_fmt(s5['namespaces'])}; "
                           f"RV=0: {rv0}", verdict(s5["pods"] == {"watch": 1} and s5["namespaces"] == {"watch": 1}
                                                   and rv0)])
        finally:
            emu.stop()

    mean_default = sum(DEFAULT_TIMEOUTS) / 2
    per_hour = 3600 / mean_default
    out = [f"### Control-plane benchmark ({machine_line()}; {time.monotonic() - started:.0f} s)", "",
           f"Cluster: {NODE_PODS} pods on the agent's node, {OTHER_PODS} elsewhere, {NAMESPACES:,} namespaces. "
           f"The agent has {SOURCES} kubernetes_logs sources. Requests counted by the emulator.", ""]
    out.append(markdown_table(["scenario", "pods", "namespaces", "nodes"], rows))
    out.append("")
    out.append(markdown_table(
        ["steady state, per kind", "mean watch cycle s (measured)", "requests per watch cycle (measured)",
         f"requests per hour at {DEFAULT_TIMEOUTS[0]}–{DEFAULT_TIMEOUTS[1]} s (mean {mean_default:.0f} s)",
         "per-source-watcher design, 3 sources (computed)"],
        [["pods", f"{cycle_secs['pods']:.2f}", f"{per_cycle['pods']:.2f}", f"{per_cycle['pods'] * per_hour:.0f}",
          f"{SOURCES * per_cycle['pods'] * per_hour:.0f}"],
         ["namespaces (only while a source wants them)", f"{cycle_secs['namespaces']:.2f}",
          f"{per_cycle['namespaces']:.2f}",
          f"{per_cycle['namespaces'] * per_hour:.0f}",
          f"{per_cycle['namespaces'] * per_hour:.0f}–{SOURCES * per_cycle['namespaces'] * per_hour:.0f}"],
         ["lists / watch-lists", "–", "0", "0 (only after a 410)", "0"]]))
    out.append("")
    out.append(markdown_table(
        ["design, 3 sources", "watches open per agent", "initial watch-lists per agent start",
         "namespace objects streamed per start (200,000-namespace cluster)"],
        [["this agent, flags off", "1 (pods)", "1", "0"],
         ["this agent, one source with namespace fields", "2 (pods, namespaces)", "2", "200,000"],
         ["a watcher set per source, namespace flag only on one (computed)", "4 (3 pods, 1 namespaces)", "4",
          "200,000"],
         ["a watcher set per source, namespace fields on by default (computed)", "6 (3 pods, 3 namespaces)", "6",
          "600,000"]]))
    out.append("")
    out.append(markdown_table(["check", "expected", "measured", "verdict"], checks))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argument_parser("control-plane", __doc__)
    parser.add_argument("--quick", action="store_true", help="20 s of steady state instead of 60")
    parser.add_argument("--steady-secs", type=float, default=None)
    args = parser.parse_args(argv)
    steady = args.steady_secs if args.steady_secs is not None else (20.0 if args.quick else 60.0)
    print(run(steady))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
