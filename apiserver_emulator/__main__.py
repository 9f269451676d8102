"""Run the emulator standalone: `python -m apiserver_emulator --port 0 --token T [--tls]`.

Prints the URL (first line) and, with --kubeconfig, writes a kubeconfig. Stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from .server import ApiServerEmulator
from .settings import WATCH_LIST_MODES


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m apiserver_emulator", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--token", default="emulator-token")
    p.add_argument("--tls", action="store_true", help="serve HTTPS with a generated self-signed cert")
    p.add_argument("--kubeconfig", type=Path, help="write a kubeconfig for the emulator here")
    p.add_argument("--history-size", type=int, default=10_000)
    p.add_argument("--bookmark-interval", type=float, default=60.0)
    p.add_argument("--watch-list", choices=WATCH_LIST_MODES, default="enabled")
    p.add_argument("--seed-namespaces", type=int, default=0)
    return p.parse_args(argv)


async def _run(args: argparse.Namespace) -> None:
    emu = ApiServerEmulator(token=args.token, host=args.host, port=args.port, tls=args.tls,
                            history_size=args.history_size, bookmark_interval=args.bookmark_interval,
                            watch_list=args.watch_list)
    if args.seed_namespaces:
        emu.seed_namespaces(args.seed_namespaces)
    await emu.start()
    if args.kubeconfig:
        emu.write_kubeconfig(args.kubeconfig)
    print(emu.url, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await emu.stop()


def main(argv: list[str] | None = None) -> int:
    asyncio.run(_run(_parse(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
