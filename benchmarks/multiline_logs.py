"""Ordinary container logs without traces, and the same with real traces mixed in, for ``multiline``.

The ordinary lines are the kinds a node's pods print every day: nginx and
Apache access lines, JSON lines, logfmt, klog, Java logback lines with levels,
lines with ``Error:`` or ``Exception`` mid-sentence, indented YAML and pretty
JSON dumps (several lines, most of them indented). None of them is a stack
trace, so ``mode: auto`` must give every line as its own record.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from benchmarks.pod_tree import PodSpec, cri_timestamp, write_pod_log

#: the real traces of the tests (sources in their SOURCES.md)
REAL_TRACES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "traces" / "real"

_YAML = ["config loaded:", "  server:", "    port: 8080", "    host: 0.0.0.0", "  features:", "    - search",
         "    - export"]
_PRETTY_JSON = ["{", '  "status": "ok",', '  "items": [', "    1,", "    2", "  ],", '  "took_ms": 12', "}"]


def ordinary_record(seq: int) -> list[str]:
    """The ``seq``th ordinary record: one line, or a few for the dumps."""
    kind = seq % 12
    n = seq % 9973
    if kind == 0:
        return [f'10.0.{n % 256}.{seq % 200} - - [02/Dec/2026:10:00:{seq % 60:02d} +0000] "GET /api/items/{n} '
                f'HTTP/1.1" 200 {512 + n} "-" "curl/8.5.0"']
    if kind == 1:
        return [f'{{"level":"info","ts":"2026-12-02T10:00:00Z","msg":"request handled","path":"/items/{n}",'
                f'"status":200,"ms":{seq % 97}}}']
    if kind == 2:
        return [f'level=info msg="handled" path=/api/items/{n} status=200 ms={seq % 97} seq={seq:09d}']
    if kind == 3:
        return [f"I1203 10:00:00.{seq % 1000000:06d}       1 controller.go:{n % 400}] synced pod default/web-{n}"]
    if kind == 4:
        level = ("INFO", "WARN", "ERROR", "DEBUG")[seq // 12 % 4]
        return [f"2026-12-02 10:00:00.{seq % 1000:03d} {level} [http-nio-8080-exec-{seq % 10}] "
                f"c.e.shop.OrderService - order {n} processed in {seq % 97} ms"]
    if kind == 5 and seq // 12 % 4 == 0:
        return [f"retrying upstream call {n} after Error: connection reset by peer"]
    if kind == 6:
        return [f"WARN cache miss for key {n}; the NullPointerException fix from yesterday is live"]
    if kind == 7:
        return [f'127.0.0.1 - frank [02/Dec/2026:10:00:00 +0000] "POST /login HTTP/1.0" 302 {n} '
                '"http://www.example.com/start.html" "Mozilla/5.0"']
    if kind == 8 and seq // 12 % 25 == 0:
        return list(_YAML)
    if kind == 9 and seq // 12 % 25 == 0:
        return list(_PRETTY_JSON)
    if kind == 10 and seq // 12 % 4 == 0:
        return [f"E1203 10:00:00.{seq % 1000000:06d}       1 reflector.go:{n % 300}] Failed to watch *v1.Pod: "
                "Error: the server has asked for the client to try again later"]
    return [f"worker {seq % 8} finished job {n} (Exception count: 0)"]


def real_traces() -> list[list[str]]:
    return [path.read_text().split("\n")[:-1] for path in sorted(REAL_TRACES.glob("*.txt"))]


def records(lines: int, trace_share: float) -> Iterator[tuple[bool, list[str]]]:
    """(is a trace, its lines) until ``lines`` lines: traces make ``trace_share`` of the lines."""
    traces = real_traces() if trace_share else []
    seq = written = in_traces = used = 0
    while written < lines:
        if traces and in_traces < trace_share * written:
            record = traces[used % len(traces)]
            used += 1
            if written + len(record) > lines:
                break
            in_traces += len(record)
            yield True, record
        else:
            record = ordinary_record(seq)[: lines - written]
            seq += 1
            yield False, record
        written += len(record)


def write_log_tree(root: Path, specs: Sequence[PodSpec], lines_per_file: int, trace_share: float) -> int:
    """One CRI file per pod (traces and every 5th ordinary record on stderr); returns the traces written."""
    traces = 0
    for spec in specs:
        out: list[bytes] = []
        for number, (is_trace, record) in enumerate(records(lines_per_file, trace_share)):
            traces += is_trace
            stream = b" stderr F " if is_trace or number % 5 == 0 else b" stdout F "
            for line in record:
                out.append(cri_timestamp(len(out)) + stream + line.encode())
        write_pod_log(root, spec, out)
    return traces
