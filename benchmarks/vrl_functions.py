"""CPU cost per call of the VRL functions on the per-record path, against the bare operation they wrap.

``python -m benchmarks vrl-functions --runs 7``: for each function, rounds of
N calls of ours and of the baseline, interleaved, timed in process CPU time;
prints the median µs per call of each and their ratio (baseline / ours: 1.0
means no overhead over the bare operation).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import msgspec

from logagent.vrl.stdlib import FUNCTIONS
from logagent.vrl.stdlib.regex import Regex

MESSAGE = '{"level":"info","msg":"request served","path":"/api/v1/items","status":200,"took_ms":12.5,"user":{"id":42}}'
PLAIN = "2024-05-01T10:00:00.123Z ERROR request failed: upstream timed out after 30s"
EVENT = {"message": MESSAGE, "stream": "stdout", "timestamp": "2024-05-01T10:00:00Z", "file": "/var/log/pods/x/0.log"}


def _cases() -> list[tuple[str, Callable[[], object], Callable[[], object]]]:
    call = {name: declared.implementation for name, declared in FUNCTIONS.items()}
    parsed = msgspec.json.decode(MESSAGE)
    level = Regex(r"(?P<level>DEBUG|INFO|WARN|ERROR)")
    plain_level = __import__("re").compile(r"(?P<level>DEBUG|INFO|WARN|ERROR)")
    return [
        ("parse_json", lambda: call["parse_json"](MESSAGE, None, None), lambda: msgspec.json.decode(MESSAGE)),
        ("merge", lambda: call["merge"](EVENT, parsed, None), lambda: {**EVENT, **parsed}),
        ("string", lambda: call["string"](MESSAGE), lambda: MESSAGE if type(MESSAGE) is str else None),
        ("to_string", lambda: call["to_string"](12.5), lambda: repr(12.5)),
        ("downcase", lambda: call["downcase"](PLAIN), lambda: PLAIN.lower()),
        ("contains", lambda: call["contains"](PLAIN, "ERROR", None), lambda: "ERROR" in PLAIN),
        ("parse_regex", lambda: call["parse_regex"](PLAIN, level, None), lambda: plain_level.search(PLAIN).groupdict()),
        ("parse_json (not JSON)", lambda: _swallow(call["parse_json"], PLAIN), lambda: _swallow_raw(PLAIN)),
    ]


def _swallow(function: Callable[..., object], text: str) -> None:
    try:
        function(text, None, None)
    except Exception:  # noqa: BLE001 - the error path is what is measured
        pass


def _swallow_raw(text: str) -> None:
    try:
        msgspec.json.decode(text)
    except msgspec.DecodeError:
        pass


def _cpu_per_call(function: Callable[[], object], calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        function()
    return (time.process_time() - start) / calls * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks vrl-functions")
    parser.add_argument("--runs", type=int, default=7, help="interleaved rounds (median reported)")
    parser.add_argument("--calls", type=int, default=20000, help="calls per round")
    args = parser.parse_args(argv)
    print(f"{'function':<24}{'ours µs':>10}{'bare µs':>10}{'bare/ours':>11}")
    for name, ours, bare in _cases():
        ours_times, bare_times = [], []
        for _ in range(args.runs):
            ours_times.append(_cpu_per_call(ours, args.calls))
            bare_times.append(_cpu_per_call(bare, args.calls))
        ours_median, bare_median = statistics.median(ours_times), statistics.median(bare_times)
        print(f"{name:<24}{ours_median:>10.2f}{bare_median:>10.2f}{bare_median / ours_median:>11.2f}")
    return 0
