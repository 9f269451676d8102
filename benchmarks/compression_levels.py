"""The http sink's compressors alone, per codec and level, on the benchmark records.

Run from the repository root::

    .venv/bin/python -m benchmarks compression-levels [--lines 200000] [--rounds 5] [--gzip 1 3 6] [--zstd -3 1 3 6]

The records are the ``http`` benchmark's: the tree of ``pod_tree.py`` (20 pod
files, enriched from an offline snapshot of the same pods) written by one
``logagent run --once`` with the console sink into a file, so they are byte
for byte what the http sink's ndjson encoding sends. They are cut into bodies
of ``batch.max_events`` records (the sink's default) and each body is given
to the sink's own compressor (``make_compressor``) in pieces of
``PIECE_RECORDS`` records with the body's size, as ``BodyBuilder`` does for
ndjson. Per codec and level, in
every round, interleaved: the CPU time of compressing every body
(``time.process_time``, one thread), the bytes out. Reported: bytes per line,
the ratio (uncompressed / compressed), lines per CPU-second of compression
alone and CPU per line (medians over the rounds). What a level costs the
whole agent is the ``http`` benchmark's (``--levels``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.agent_runs import run_once, snapshot_kubernetes
from benchmarks.common import median, table
from benchmarks.pod_tree import pod_specs, write_snapshot, write_tree
from logagent.sinks.http.compression import DEFAULT_LEVELS, PIECE_RECORDS, make_compressor
from logagent.sinks.http.config import BatchConfig

CONSOLE_TO_FILE = "sinks:\n  out: {type: console, inputs: [pods]}\n"


def records_of_the_http_benchmark(lines: int) -> list[bytes]:
    """The ndjson lines (each with its newline) the http benchmark's agent sends."""
    workdir = Path(tempfile.mkdtemp(prefix="logagent-compression-"))
    try:
        specs = pod_specs()
        tree = workdir / "pods"
        write_tree(tree, specs, lines // len(specs))
        snapshot = write_snapshot(workdir / "cluster.json", specs)
        out = workdir / "records.ndjson"
        run_once(workdir, tree, "records", kubernetes=snapshot_kubernetes(snapshot), pipeline=CONSOLE_TO_FILE,
                 stdout_path=out)
        return out.read_bytes().splitlines(keepends=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def bodies_in_pieces(records: list[bytes], per_body: int) -> list[list[bytes]]:
    """Each body as the pieces ``BodyBuilder`` feeds a compressor."""
    return [
        [b"".join(records[p : p + PIECE_RECORDS]) for p in range(start, min(start + per_body, len(records)),
                                                               PIECE_RECORDS)]
        for start in range(0, len(records), per_body)
    ]


def measure(bodies: list[list[bytes]], variants: list[tuple[str, int]], rounds: int,
            ) -> dict[tuple[str, int], tuple[list[float], int]]:
    """CPU seconds per round and compressed bytes, per (codec, level)."""
    compressors = {variant: make_compressor(variant[0], variant[1]) for variant in variants}  # type: ignore[arg-type]
    cpu: dict[tuple[str, int], list[float]] = {variant: [] for variant in variants}
    out_bytes: dict[tuple[str, int], int] = {}
    for round_index in range(rounds):
        order = variants if round_index % 2 == 0 else variants[::-1]
        for variant in order:
            compress = compressors[variant]
            assert compress is not None
            start = time.process_time()
            size = sum(len(compress(iter(pieces), sum(map(len, pieces)))) for pieces in bodies)
            cpu[variant].append(time.process_time() - start)
            out_bytes[variant] = size
        print(f"round {round_index + 1} done", file=sys.stderr)
    return {variant: (cpu[variant], out_bytes[variant]) for variant in variants}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gzip", type=int, nargs="*", default=[1, 3, 6])
    parser.add_argument("--zstd", type=int, nargs="*", default=[-3, 1, 3, 6])
    args = parser.parse_args(argv)

    records = records_of_the_http_benchmark(args.lines)
    raw = sum(map(len, records))
    bodies = bodies_in_pieces(records, BatchConfig().max_events)
    variants = [("gzip", level) for level in args.gzip] + [("zstd", level) for level in args.zstd]
    results = measure(bodies, variants, args.rounds)
    count = len(records)
    rows: list[list[object]] = [["none", "-", f"{raw / count:.1f}", "1.0", "-", "-"]]
    for (codec, level), (cpu, size) in results.items():
        per_line = median(cpu) / count
        default = " (default)" if DEFAULT_LEVELS[codec] == level else ""
        rows.append([codec, f"{level}{default}", f"{size / count:.1f}", f"{raw / size:.1f}",
                     count / median(cpu), f"{per_line * 1e6:.2f}"])
    print(f"## Compression alone: {count:,} records ({raw / 1e6:.0f} MB, {raw / count:.0f} B each), "
          f"bodies of {BatchConfig().max_events} records; medians of {args.rounds} interleaved rounds\n")
    print(table(["codec", "level", "bytes/line", "ratio", "lines/CPU-s (compression alone)", "CPU µs/line"],
                rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
