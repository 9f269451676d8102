"""``python -m benchmarks NAME [options]``: run one benchmark by hand (never part of the tests).

Each benchmark is a module of this package with a ``main(argv) -> int``; it is
imported only when asked for, so one that is missing or broken does not stop
the others. ``python -m benchmarks NAME --help`` shows a benchmark's options.
"""

from __future__ import annotations

import importlib
import sys

#: command name -> (module, what it measures)
BENCHMARKS: dict[str, tuple[str, str]] = {
    "memory": ("benchmarks.memory", "RSS/CPU of the metadata stores vs namespace count; naive baseline"),
    "namespace-modes": ("benchmarks.namespace_modes", "namespace_metadata watch/lookup/auto: RSS, apiserver requests and bytes, rollout"),
    "control-plane": ("benchmarks.control_plane", "apiserver requests by verb and resource: start, steady state, restart"),
    "throughput": ("benchmarks.throughput", "lines per second through the pipeline"),
    "latency": ("benchmarks.latency", "time from a line written to the line delivered"),
    "http": ("benchmarks.http_ship", "shipping to an HTTP endpoint"),
    "compression-levels": ("benchmarks.compression_levels", "the http sink's compressors alone: size and CPU per codec and level"),
    "conditions": ("benchmarks.conditions", "match() on RE2 against Python re, per record"),
    "checkpoints": ("benchmarks.checkpoints", "checkpoint writes per second under load; throughput new vs old cadence"),
    "crash": ("benchmarks.crash", "lines lost/duplicated when the agent is killed and restarted under rotation"),
    "backends": ("benchmarks.backends", "elasticsearch, loki, opentelemetry sinks vs the http sink"),
    "multiline": ("benchmarks.multiline", "cost of multiline mode auto on lines without traces vs mode none"),
    "parse_json": ("benchmarks.parse_json", "throughput with parse_json on 300 B JSON messages vs without"),
    "tap": ("benchmarks.tap", "throughput with a stalled or a reading tap client vs none"),
    "vrl-functions": ("benchmarks.vrl_functions", "CPU per call of the hot VRL functions vs the bare operation"),
    "remap": ("benchmarks.remap", "throughput with a remap program (context-only, JSON merge, deepflow) vs without"),
    "remap-import": ("benchmarks.remap_import", "memory of importing the remap transform and compiling a program"),
    "remap-instructions": ("benchmarks.remap_instructions", "the remap benchmark's pipelines in callgrind instructions per line"),
    "noisy-neighbour": ("benchmarks.noisy_neighbour", "a quiet pod's write-to-sink delay beside a pod writing flat out; throttle"),
    "rate-transforms": ("benchmarks.rate_transforms", "throughput with throttle, sample, dedupe vs without, per CPU-second"),
}


def _usage() -> str:
    lines = ["usage: python -m benchmarks NAME [options]", "", "benchmarks:"]
    lines += [f"  {name:<14} {what}" for name, (_, what) in BENCHMARKS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(_usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in BENCHMARKS:
        print(f"unknown benchmark {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name = BENCHMARKS[name][0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # the benchmark exists but one of its imports is missing
        print(f"benchmark {name!r} is not available yet: {module_name.replace('.', '/')}.py does not exist",
              file=sys.stderr)
        return 2
    main_fn = getattr(module, "main", None)
    if main_fn is None:
        print(f"benchmark {name!r}: {module_name} has no main(argv) function", file=sys.stderr)
        return 2
    return int(main_fn(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
