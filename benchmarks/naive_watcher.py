"""The naive baseline: what a typical Python agent does to keep pod and namespace metadata.

It watches through kubernetes-asyncio's generated ``CoreV1Api`` and
``watch.Watch``, which turn every event into a full model object (``V1Pod``,
``V1Namespace`` with managedFields, annotations, spec and status), and keeps
those models in a dict by name, the way an informer cache does. The memory
benchmark runs it against the same emulator as the agent.

    python -m benchmarks.naive_watcher --kubeconfig KC --node NODE --pods 110 [--watch-namespaces N]

Prints ``synced pods=P namespaces=N`` on stderr once it holds the expected
counts, then keeps watching until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from typing import Any


async def _watch_into(cache: dict[str, Any], func: Any, **kwargs: Any) -> None:
    from kubernetes_asyncio import watch

    while True:
        w = watch.Watch()
        async with w.stream(func, **kwargs) as stream:
            async for event in stream:
                obj = event["object"]
                if event["type"] == "DELETED":
                    cache.pop(f"{obj.metadata.namespace}/{obj.metadata.name}", None)
                elif event["type"] in ("ADDED", "MODIFIED"):
                    cache[f"{obj.metadata.namespace}/{obj.metadata.name}"] = obj


async def _run(args: argparse.Namespace) -> None:
    from kubernetes_asyncio import client, config

    await config.load_kube_config(config_file=args.kubeconfig)
    api = client.CoreV1Api()
    pods: dict[str, Any] = {}
    namespaces: dict[str, Any] = {}
    tasks = [asyncio.create_task(_watch_into(pods, api.list_pod_for_all_namespaces,
                                             field_selector=f"spec.nodeName={args.node}"))]
    if args.watch_namespaces is not None:
        tasks.append(asyncio.create_task(_watch_into(namespaces, api.list_namespace)))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    expected_namespaces = args.watch_namespaces or 0
    while len(pods) < args.pods or len(namespaces) < expected_namespaces:
        for task in tasks:
            if task.done():
                task.result()  # raises the watch's error
        await asyncio.sleep(0.05)
    print(f"synced pods={len(pods)} namespaces={len(namespaces)}", file=sys.stderr, flush=True)
    await stop.wait()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await api.api_client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.naive_watcher", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--node", required=True)
    parser.add_argument("--pods", type=int, default=0, help="pods expected on the node")
    parser.add_argument("--watch-namespaces", type=int, metavar="N",
                        help="also watch namespaces, expecting N of them (default: no namespace watch)")
    asyncio.run(_run(parser.parse_args(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
