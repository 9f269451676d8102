"""Conditions: ``match(.message, r'...')`` on RE2 against Python's ``re``, in one process.

The baseline is the evaluator the agent used before RE2: the same closure
shape (read the field, check it is a string, search), with the pattern compiled
by Python's ``re`` (for these patterns the old Rust-to-``re`` translation was
the identity). Each round times both on the same records, interleaved; the
figures are medians over the rounds and the ratio is taken within each round.
A last table shows why RE2 is worth it: a pattern that backtracks
exponentially in ``re``.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import machine_line, markdown_table, median
from logagent.conditions import compile_condition

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


def baseline_condition(pattern: str) -> Callable[[dict[str, Any]], bool]:
    search = re.compile(pattern).search

    def match(record: dict[str, Any]) -> bool:
        text = record.get("message")
        if type(text) is not str:
            raise TypeError(text)
        return search(text) is not None

    return match


def time_over(condition: Callable[[Any], bool], records: list[dict[str, Any]]) -> tuple[float, int]:
    start = time.perf_counter()
    hits = sum(1 for record in records if condition(record))
    return time.perf_counter() - start, hits


def compare(records: list[dict[str, Any]], rounds: int) -> list[list[str]]:
    rows = []
    for pattern in PATTERNS:
        ours = compile_condition(f"match(.message, r'{pattern}')")
        baseline = baseline_condition(pattern)
        ratios, ours_ns, base_ns = [], [], []
        for _ in range(rounds):
            base_s, base_hits = time_over(baseline, records)
            ours_s, our_hits = time_over(ours, records)
            assert base_hits == our_hits, (pattern, base_hits, our_hits)
            ratios.append(ours_s / base_s)
            ours_ns.append(ours_s / len(records) * 1e9)
            base_ns.append(base_s / len(records) * 1e9)
        rows.append([f"`{pattern}`", f"{median(base_ns):.0f}", f"{median(ours_ns):.0f}", f"{median(ratios):.2f}"])
    return rows


def pathological(lengths: list[int]) -> list[list[str]]:
    rows = []
    ours = compile_condition("match(.message, r'^(a+)+$')")
    baseline = baseline_condition(r"^(a+)+\Z")
    for n in lengths:
        record = {"message": "a" * n + "b"}
        base_s, _ = time_over(baseline, [record])
        ours_s, _ = time_over(ours, [record])
        rows.append([str(n), f"{base_s * 1e3:.1f}", f"{ours_s * 1e3:.3f}"])
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks conditions", description=__doc__)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    records = make_records(args.records)
    print(f"({machine_line()}; {args.records:,} records, medians of {args.rounds} interleaved rounds)\n")
    headers = ["pattern", "re ns/record", "RE2 ns/record", "RE2 / re"]
    print(markdown_table(headers, compare(records, args.rounds)))
    print()
    headers = ["`^(a+)+$` on n × 'a' + 'b': n", "re ms", "RE2 ms"]
    print(markdown_table(headers, pathological([16, 20, 22, 24])))
    return 0
