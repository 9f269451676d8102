"""What loading the remap transform and compiling a program costs, in one fresh process per checkout.

    .venv/bin/python -m benchmarks remap-import [--runs 3] [--only context,merge,deepflow] [--before-ref main]

Each run is a new Python process (run from this checkout, or from ``--before-ref``
extracted with ``git archive``) that first imports what the agent has without
remap (``logagent.cli``, ``topology``, ``builders``, ``transforms.parse_json``),
then imports ``logagent.transforms.remap`` and compiles the program, and reports
the modules that added, the growth of VmRSS after ``gc.collect()``, and, in a
second process with ``tracemalloc`` on, the bytes still allocated and the peak.
Only the memory of the package and one program: the agent's peak RSS with a
program is measured by ``remap`` (records in flight set it, not this).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from benchmarks.common import PYTHON, REPO, machine_line, table
from benchmarks.remap import PROGRAMS, extract

_PROBE = r"""
import gc, json, sys
sys.path.insert(0, ".")
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key))
import logagent.builders, logagent.cli, logagent.topology, logagent.transforms.parse_json
source, trace = sys.argv[1], sys.argv[2] == "trace"
gc.collect()
if trace:
    import tracemalloc
    tracemalloc.start()
before, rss = set(sys.modules), status("VmRSS")
import logagent.transforms.remap
from logagent.vrl.program import compile_program
compile_program(source)
gc.collect()
out = {"modules": len(set(sys.modules) - before), "rss_kib": status("VmRSS") - rss}
if trace:
    out["traced_kib"], out["traced_peak_kib"] = (size // 1024 for size in tracemalloc.get_traced_memory())
print(json.dumps(out))
"""


def probe(code: Path, source: str, trace: bool) -> dict[str, int]:
    done = subprocess.run([PYTHON, "-c", _PROBE, source, "trace" if trace else "rss"], cwd=code,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default=",".join(PROGRAMS), help="comma-separated programs")
    parser.add_argument("--before-ref", help="git ref measured the same way, interleaved")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="logagent-bench-remap-import-"))
    try:
        checkouts = {"this tree": REPO}
        if args.before_ref:
            extract(args.before_ref, workdir / "before")
            checkouts[args.before_ref] = workdir / "before"
        rows = []
        for name in [name for name in args.only.split(",") if name]:
            source = PROGRAMS[name][0]
            rss: dict[str, list[int]] = {label: [] for label in checkouts}
            for _ in range(args.runs):
                for label, code in checkouts.items():
                    rss[label].append(probe(code, source, False)["rss_kib"])
            for label, code in checkouts.items():
                traced = probe(code, source, True)
                rows.append([name, label, traced["modules"], f"{median(rss[label]) / 1024:.2f}",
                             ", ".join(f"{kib / 1024:.2f}" for kib in rss[label]),
                             f"{traced['traced_kib'] / 1024:.2f}", f"{traced['traced_peak_kib'] / 1024:.2f}"])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"## remap-import: import the remap transform and compile the program ({machine_line()})\n")
    print(table(["program", "code", "modules added", "VmRSS + MiB (median)", "runs", "tracemalloc MiB",
                 "tracemalloc peak MiB"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
