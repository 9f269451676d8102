"""``logagent top``: every component of a running agent, refreshed every second.

The live view needs ``rich`` (the optional extra ``logagent[top]``); ``--once``
prints one screen as plain text (two scrapes an interval apart, so rates are
there) and needs nothing more. Data: the agent's ``/metrics``, see
:mod:`.top_model`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
MISSING_RICH = ("logagent top: the live view needs the rich library: pip install 'logagent[top]' "
                "(or use --once for one plain-text screen)")


def add_parser(commands: Any) -> None:
    top = commands.add_parser("top", help="a live view of every component of a running agent (rates, queues, lag)")
    where = top.add_mutually_exclusive_group()
    where.add_argument("--config", "-c", help="the running agent's config: finds its API")
    where.add_argument("--url", "-u", help="the agent's API: http://host:port or unix:///path/api.sock "
                                           "(default http://127.0.0.1:8686)")
    top.add_argument("--once", action="store_true", help="print one screen as plain text and exit")
    top.add_argument("--interval", "-i", type=int, default=1000, metavar="MS", help="refresh interval (default 1000)")


def run(args: argparse.Namespace) -> int:
    from logagent.observe.api_client import EndpointError, locate

    try:
        endpoint = locate(args.url, args.config)
    except EndpointError as exc:
        print(f"logagent top: {exc}", file=sys.stderr)
        return exc.status
    if not args.once:
        try:
            import rich  # noqa: F401
        except ImportError:
            print(MISSING_RICH, file=sys.stderr)
            return EXIT_FAILED
    try:
        return asyncio.run(_top(endpoint, args.interval / 1000, args.once))
    except KeyboardInterrupt:
        return EXIT_OK


async def _top(endpoint: Any, interval: float, once: bool) -> int:
    import aiohttp

    from logagent.observe import top_model

    async with endpoint.session(aiohttp.ClientTimeout(total=10)) as http:
        async def scrape() -> top_model.Scrape:
            async with http.get(endpoint.url("/metrics")) as response:
                response.raise_for_status()
                return top_model.parse(await response.text(), time.monotonic())

        try:
            previous = await scrape()
            if once:
                await asyncio.sleep(interval)
                print(screen_text(endpoint.describe(), previous, await scrape()))
                return EXIT_OK
            from logagent.observe.top_view import live

            await live(endpoint.describe(), previous, scrape, interval)
        except (aiohttp.ClientError, OSError) as exc:
            print(f"logagent top: cannot read {endpoint.describe()}/metrics: {exc}", file=sys.stderr)
            return EXIT_FAILED
    return EXIT_OK


def screen_text(where: str, previous: Any, current: Any) -> str:
    from logagent.observe.top_model import cells, header, rows, text_table

    return header(where, current) + "\n\n" + text_table(cells(row) for row in rows(previous, current))
