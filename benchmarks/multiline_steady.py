"""multiline in-process, in instructions: the parser and the grouper alone, for steering work on them.

Run from the repository root::

    .venv/bin/python -m benchmarks.multiline_steady [--lines 20000] [--trace-share 0.05] [--modes none,marks,auto]

One CRI file of ``benchmarks/multiline.py``'s trees (``--trace-share`` of its
lines in the real traces, on stderr; every 5th ordinary record on stderr),
cut into blocks of 256 KiB (``kubernetes_logs``' default ``max_read_bytes``), fed to
``LineParser.feed_block`` and, in ``auto``, to a ``MultilineGrouper`` with the
built-in ``auto`` machine. Modes: ``none``
(the parser as ``mode: none`` runs it), ``marks`` (the parser listing the
marked records, as ``auto`` runs it, no grouper), ``auto`` (both). Each mode
is counted by valgrind's callgrind (``PYTHONHASHSEED=0``) over one pass and
over three passes of the blocks; the difference over two passes' lines is the
steady cost per line (imports, the machine's build and the first pass's
one-time work cancel out). About a minute and a half per mode at 20,000
lines; the whole agent's figure is ``benchmarks.multiline_instructions``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

from benchmarks.common import PYTHON, REPO
from benchmarks.multiline_logs import records
from benchmarks.pod_tree import cri_timestamp

MODES = ("none", "marks", "auto")
_COLLECTED = re.compile(r"Collected : (\d+)")


def blocks(lines: int, trace_share: float, size: int = 1 << 18) -> list[bytes]:
    """The file's lines in blocks of about ``size`` bytes, as the tailer hands them on (no last newline)."""
    out: list[bytes] = []
    for number, (is_trace, record) in enumerate(records(lines, trace_share)):
        stream = b" stderr F " if is_trace or number % 5 == 0 else b" stdout F "
        out += [cri_timestamp(len(out)) + stream + line.encode() for line in record]
    cut: list[bytes] = []
    start = taken = 0
    for index, line in enumerate(out):
        taken += len(line) + 1
        if taken >= size:
            cut.append(b"\n".join(out[start:index + 1]))
            start, taken = index + 1, 0
    if start < len(out):
        cut.append(b"\n".join(out[start:]))
    return cut


def run(mode: str, lines: int, trace_share: float, passes: int) -> int:
    """``passes`` passes of ``mode`` over the blocks; the records they gave (a check that work was done)."""
    from logagent.event import FileContext
    from logagent.parsers.line_parser import LineParser
    from logagent.parsers.multiline import MultilineGrouper, MultilineStats
    from logagent.parsers.multiline_rules import AUTO, language_machine

    cut = blocks(lines, trace_share)
    machine = language_machine(AUTO)
    ctx = FileContext({})
    records = 0
    for _ in range(passes):
        parser = LineParser()
        parser.format = "cri"
        if mode != "none":
            parser.count_indented, parser.marks = True, machine.marks
        grouper = MultilineGrouper(machine, MultilineStats()) if mode == "auto" else None
        for block in cut:
            events = parser.feed_block(block, ctx)
            if events is None:
                raise RuntimeError("a block left the fast path")
            if grouper is not None:
                events = grouper.feed(events, ctx, 0.0, indented=parser.indented)
            records += len(events)
        if grouper is not None:
            records += len(grouper.flush(ctx))
    return records


def counted(mode: str, lines: int, trace_share: float, passes: int) -> int:
    """Instructions of a child process making ``passes`` passes of ``mode``."""
    args = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", PYTHON, "-m",
            "benchmarks.multiline_steady", "--child", mode, "--lines", str(lines), "--trace-share",
            str(trace_share), "--passes", str(passes)]
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"callgrind run of {mode} failed: {done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=20_000, help="CRI lines of the file")
    parser.add_argument("--trace-share", type=float, default=0.05, help="share of the lines in traces")
    parser.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    parser.add_argument("--child", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--passes", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run(args.child, args.lines, args.trace_share, args.passes)
        return 0
    modes = args.modes.split(",")
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown:
        parser.error(f"unknown modes: {', '.join(unknown)}")
    for mode in modes:
        one = counted(mode, args.lines, args.trace_share, 1)
        three = counted(mode, args.lines, args.trace_share, 3)
        print(f"{mode}: {(three - one) / (2 * args.lines):,.0f} Ir/line (steady, {args.lines:,} lines, "
              f"traces {args.trace_share:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
