"""The minimal Python baseline: read CRI files, split lines, msgspec-encode each record.

``python benchmarks/baseline_loop.py LOG_DIR`` reads every ``*.log`` under
LOG_DIR in 1 MiB reads, splits lines and CRI fields, JSON-encodes one small
record per line (timestamp, stream, message, file) with msgspec and writes
the ndjson to stdout. No enrichment, no partial-line merging, no checkpoints,
no asyncio: about as little as Python can do for this work, which makes it the
yardstick the agent's throughput is compared with in the same run.
"""

from __future__ import annotations

import os
import sys

import msgspec

READ_BYTES = 1 << 20


def run(log_dir: str, out_fd: int = 1) -> int:
    encode = msgspec.json.Encoder().encode
    count = 0
    paths = sorted(os.path.join(d, f) for d, _, files in os.walk(log_dir) for f in files if f.endswith(".log"))
    for path in paths:
        pending = b""
        with open(path, "rb", buffering=0) as f:
            while data := f.read(READ_BYTES):
                lines = (pending + data).split(b"\n")
                pending = lines.pop()
                out = []
                for line in lines:
                    ts, stream, _tag, message = line.split(b" ", 3)
                    out.append(encode({"file": path, "message": message.decode("utf-8", "replace"),
                                       "stream": stream.decode(), "timestamp": ts.decode()}))
                count += len(out)
                out.append(b"")
                os.write(out_fd, b"\n".join(out))
    return count


if __name__ == "__main__":
    run(sys.argv[1])
