"""Conditions: ``match!(.message, r'...')`` per record, RE2 now against Python's ``re`` before.

The baseline is the agent's own condition code at ``--baseline-ref`` (by
default the last commit before RE2, whose ``match()`` translated the pattern
to Python ``re``), taken with ``git archive`` into a temporary directory. Each
round runs one worker process per side, alternating, on the same generated
records; the figures are medians over the rounds and the ratio is taken within
each round. A last table shows why RE2 is worth it: a pattern that backtracks
exponentially in ``re``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from benchmarks.common import log, machine_line, markdown_table, median

REPO = Path(__file__).resolve().parent.parent
#: the last commit whose match() used Python's re
BEFORE_RE2 = "0664a36"

PATTERNS = [
    r"^level=error",
    r"status=5\d\d",
    r"(?i)timeout|refused",
    r"ms=[0-9]+ seq=0+1",
    r"panic: .*goroutine",
]


def make_records(count: int) -> list[dict[str, Any]]:
    rng = random.Random(1)
    levels = ["info"] * 8 + ["warn", "error"]
    return [
        {
            "message": f'level={rng.choice(levels)} msg="handled" path=/api/items/{seq % 9973} '
            f"status={rng.choice([200, 200, 200, 404, 503])} ms={seq % 97} seq={seq:09d}"
        }
        for seq in range(count)
    ]


def worker(records_count: int) -> dict[str, Any]:
    """Time each pattern's compiled condition over the records, in this process's ``logagent``."""
    import logagent

    try:
        from logagent.vrl.condition import compile_condition
    except ImportError:  # a baseline from before conditions compiled through logagent.vrl
        from logagent.conditions import compile_condition  # type: ignore[no-redef]

    records = make_records(records_count)
    result: dict[str, Any] = {"ns": {}, "hits": {}, "code": logagent.__file__}
    for pattern in PATTERNS:
        condition = compile_condition(f"match!(.message, r'{pattern}')")
        start = time.perf_counter()
        hits = sum(1 for record in records if condition(record))
        result["ns"][pattern] = (time.perf_counter() - start) / records_count * 1e9
        result["hits"][pattern] = hits
    record = {"message": "a" * 22 + "b"}
    condition = compile_condition("match!(.message, r'^(a+)+$')")
    start = time.perf_counter()
    condition(record)
    result["pathological_ms"] = (time.perf_counter() - start) * 1e3
    return result


def run_worker(code: Path, records_count: int) -> dict[str, Any]:
    """A worker whose ``logagent`` is the one in ``code`` (its directory comes first on sys.path)."""
    env = dict(os.environ, PYTHONPATH=f"{code}{os.pathsep}{REPO}")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.conditions", "--worker", "--records", str(records_count)],
        cwd=code, env=env, capture_output=True, text=True, check=True,
    )
    result = json.loads(done.stdout)
    assert Path(result["code"]).is_relative_to(code), result["code"]
    return result


def extract(ref: str, into: Path) -> None:
    archive = subprocess.run(["git", "archive", ref, "logagent"], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks conditions", description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline-ref", default=BEFORE_RE2, help="git ref of the code to compare with")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.records)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        extract(args.baseline_ref, Path(tmp))
        rounds: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for index in range(args.rounds):
            log(f"round {index + 1}/{args.rounds}")
            before = run_worker(Path(tmp), args.records)
            after = run_worker(REPO, args.records)
            assert before["hits"] == after["hits"], (before["hits"], after["hits"])
            rounds.append((before, after))
    print(f"({machine_line()}; {args.records:,} records, baseline {args.baseline_ref}, "
          f"medians of {args.rounds} alternating rounds, shared machine)\n")
    rows = []
    for pattern in PATTERNS:
        before_ns = median(b["ns"][pattern] for b, _ in rounds)
        after_ns = median(a["ns"][pattern] for _, a in rounds)
        ratio = median(a["ns"][pattern] / b["ns"][pattern] for b, a in rounds)
        share = rounds[0][1]["hits"][pattern] / args.records
        rows.append([f"`{pattern}`", f"{share:.0%}", f"{before_ns:.0f}", f"{after_ns:.0f}", f"{ratio:.2f}"])
    print(markdown_table(["pattern", "records matching", "before (re) ns/record", "RE2 ns/record", "RE2 / before"], rows))
    before_ms = median(b["pathological_ms"] for b, _ in rounds)
    after_ms = median(a["pathological_ms"] for _, a in rounds)
    print(f"\n`^(a+)+$` on 22 × 'a' + 'b': before {before_ms:.1f} ms, RE2 {after_ms:.3f} ms "
          "(each further 'a' doubles the time before).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
