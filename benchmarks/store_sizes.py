"""Profile of the namespace store: where the bytes of each namespace go.

    python -m benchmarks.store_sizes [--namespaces 200000] [--label-sets shared|unique]

In one process, decodes N watch events shaped exactly like the emulator's
seeded namespaces (~2 KB each) through the agent's decoder into a real
namespace ``Store`` (the same path a streaming watch-list takes), then reports:

- bytes per namespace by tracemalloc (what Python allocated and kept) and by
  RSS growth (what the process really grew, including allocator overhead);
- a ``sys.getsizeof`` walk of one stored object, by component, with objects
  shared between namespaces (interned strings, shared dicts) counted once;
- the tracemalloc top allocation sites still alive.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tracemalloc
from typing import Any

from benchmarks.common import markdown_table
from apiserver_emulator.cluster import Cluster


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024
    return 0


def watch_lines(n: int, label_sets: str = "shared") -> list[bytes]:
    """``ADDED`` watch events of n seeded namespaces, as the emulator streams them."""
    cluster = Cluster()
    cluster.seed_namespaces(n, label_sets=label_sets)
    store = cluster.store("namespaces")
    return [b'{"type":"ADDED","object":' + obj.body + b"}\n" for obj in store.objects.values()]


def _walk(obj: Any, seen: set[int], shared: set[int]) -> tuple[int, int]:
    """(own bytes, bytes of objects shared with other namespaces) reachable from obj."""
    if id(obj) in seen:
        return 0, 0
    seen.add(id(obj))
    size = sys.getsizeof(obj)
    own, common = (0, size) if id(obj) in shared else (size, 0)
    children: list[Any] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            children += [k, v]
    elif isinstance(obj, (tuple, list)):
        children = list(obj)
    elif hasattr(obj, "__slots__") or hasattr(type(obj), "__struct_fields__"):
        names = getattr(type(obj), "__struct_fields__", None) or getattr(type(obj), "__slots__", ())
        children = [getattr(obj, name, None) for name in names]
    for child in children:
        o, c = _walk(child, seen, shared)
        own += o
        common += c
    return own, common


def _component_rows(store: Any) -> list[list[str]]:
    objs = list(store.values())
    first, second = objs[0], objs[1]
    # an object reachable from two different namespaces is shared
    ids_first: set[int] = set()
    _walk(first, ids_first, set())
    ids_second: set[int] = set()
    _walk(second, ids_second, set())
    shared = ids_first & ids_second
    rows = []
    names = getattr(type(first), "__struct_fields__", None) or getattr(type(first), "__slots__", ())
    rows.append([f"the {type(first).__name__} object itself", str(sys.getsizeof(first)), "0"])
    for name in names:
        own, common = _walk(getattr(first, name, None), set(), shared)
        rows.append([f"`.{name}`", str(own), str(common)])
    table_bytes = sys.getsizeof(store._items)  # noqa: SLF001 (profiling the store's own dict)
    rows.append(["store dict slot (table size / count)", f"{table_bytes / len(store):.0f}", "0"])
    return rows


async def _fill(lines: list[bytes]) -> Any:
    from logagent.kube.decode import decode_watch_event
    from logagent.kube.store import namespace_store

    store = namespace_store()
    store.begin_replace()
    for line in lines:
        store.add_replacing(decode_watch_event("namespaces", line).obj)
    store.commit_replace()
    return store


def run(n: int, label_sets: str = "shared") -> str:
    lines = watch_lines(n, label_sets)
    wire = sum(len(line) for line in lines)
    import logagent.kube.decode  # noqa: F401  (import costs out of the measurement)

    gc.collect()
    rss0 = _rss()
    tracemalloc.start(5)
    snap0 = tracemalloc.take_snapshot()
    traced0 = tracemalloc.get_traced_memory()[0]
    store = asyncio.run(_fill(lines))
    gc.collect()
    traced1 = tracemalloc.get_traced_memory()[0]
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    rss1 = _rss()  # the input lines are still alive, as before the fill
    del lines
    out = [f"### Namespace store profile: {n:,} namespaces ({label_sets} label sets), "
           f"{wire / n:,.0f} B each on the wire", ""]
    out.append(markdown_table(["measure", "bytes per namespace"], [
        ["tracemalloc: allocated and still alive", f"{(traced1 - traced0) / n:.0f}"],
        ["RSS growth (includes tracemalloc's own bookkeeping)", f"{(rss1 - rss0) / n:.0f}"],
    ]))
    out.append("")
    out.append(markdown_table(["component (getsizeof walk of one namespace)", "own bytes", "shared bytes"],
                              _component_rows(store)))
    out.append("")
    stats = snap1.compare_to(snap0, "lineno")[:8]
    out.append(markdown_table(["top allocation sites still alive", "KiB", "B/ns"], [
        [f"`{s.traceback[0].filename.rsplit('/', 2)[-1]}:{s.traceback[0].lineno}`", f"{s.size_diff / 1024:,.0f}",
         f"{s.size_diff / n:.0f}"] for s in stats]))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.store_sizes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespaces", type=int, default=200_000)
    parser.add_argument("--label-sets", choices=("shared", "unique"), default="shared",
                        help="unique: each namespace its own label set (a per-namespace cost-center label)")
    args = parser.parse_args(argv)
    print(run(args.namespaces, args.label_sets))
    return 0


if __name__ == "__main__":
    sys.exit(main())
