"""``logagent tap``: print a sample of the records passing components of a running agent.

As ``vector tap``: component id globs (positional, or ``--outputs-of``) name
sources and transforms whose output to watch, ``--inputs-of`` transforms and
sinks whose input to watch; at most ``--limit`` records per ``--interval``
milliseconds; records on stdout (``--format`` json, yaml or logfmt),
notifications (``[tap] ...``) on stderr unless ``--quiet``. ``--count`` and
``--duration-ms`` end it; a dropped connection is opened again unless
``--no-reconnect``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1


def add_parser(commands: Any) -> None:
    tap = commands.add_parser("tap", help="print a sample of the records passing components of a running agent")
    tap.add_argument("patterns", nargs="*", metavar="COMPONENT_ID",
                     help="components (sources, transforms) whose outputs to watch; globs, comma-separated")
    where = tap.add_mutually_exclusive_group()
    where.add_argument("--config", "-c", help="the running agent's config: finds its API (loopback or data_dir/api.sock)")
    where.add_argument("--url", "-u", help="the agent's API: http://host:port or unix:///path/api.sock "
                                           "(default http://127.0.0.1:8686)")
    tap.add_argument("--outputs-of", action="append", default=[], metavar="ID",
                     help="components (sources, transforms) whose outputs to watch; globs, comma-separated")
    tap.add_argument("--inputs-of", action="append", default=[], metavar="ID",
                     help="components (transforms, sinks) whose inputs to watch; globs, comma-separated")
    tap.add_argument("--limit", "-l", type=int, default=100, help="at most this many records each interval (default 100)")
    tap.add_argument("--interval", "-i", type=int, default=500, metavar="MS",
                     help="the sampling interval in milliseconds (default 500)")
    tap.add_argument("--format", "-f", choices=("json", "yaml", "logfmt"), default="json")
    tap.add_argument("--meta", "-m", action="store_true", help="print each record with the component it was seen at")
    tap.add_argument("--quiet", "-q", action="store_true", help="print records only, no notifications")
    tap.add_argument("--count", "-n", type=int, metavar="N", help="exit after N records (not in vector tap)")
    tap.add_argument("--duration-ms", type=int, metavar="MS", help="exit after this many milliseconds")
    tap.add_argument("--no-reconnect", action="store_true", help="exit when the connection drops")
    tap.add_argument("--token-file", help="a file holding the bearer token (api.tap_token_file of the agent)")


def _split(values: list[str]) -> list[str]:
    return [p.strip() for value in values for p in value.split(",") if p.strip()]


def run(args: argparse.Namespace) -> int:
    from logagent.observe.api_client import EndpointError, locate

    outputs_of = _split(args.patterns) + _split(args.outputs_of)
    inputs_of = _split(args.inputs_of)
    if not outputs_of and not inputs_of:
        outputs_of = ["*"]
    try:
        endpoint = locate(args.url, args.config)
    except EndpointError as exc:
        print(f"logagent tap: {exc}", file=sys.stderr)
        return exc.status
    token = None
    if args.token_file:
        try:
            with open(args.token_file, "rb") as f:
                token = f.read().strip().decode()
        except OSError as exc:
            print(f"logagent tap: cannot read --token-file: {exc.strerror}", file=sys.stderr)
            return EXIT_FAILED
    params = [("outputs_of", ",".join(outputs_of)), ("inputs_of", ",".join(inputs_of)),
              ("limit", str(args.limit)), ("interval_ms", str(args.interval))]
    printer = Printer(args.format, meta=args.meta, quiet=args.quiet, count=args.count)
    try:
        return asyncio.run(_tap(endpoint, [p for p in params if p[1]], token, printer, args))
    except KeyboardInterrupt:
        return EXIT_OK


class Printer:
    """Writes records to stdout and notifications to stderr; knows when ``--count`` is reached."""

    def __init__(self, fmt: str, *, meta: bool, quiet: bool, count: int | None) -> None:
        from logagent.observe.tap_format import FORMATS

        self.render = FORMATS[fmt]
        self.meta = meta
        self.quiet = quiet
        self.left = count

    @property
    def done(self) -> bool:
        return self.left is not None and self.left <= 0

    def note(self, message: str) -> None:
        if not self.quiet:
            print(f"[tap] {message}", file=sys.stderr, flush=True)

    def message(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "notification":
            self.note(str(message.get("message")))
        elif kind == "missed":
            self.note(f"{message.get('count')} sampled records missed: this client reads too slowly")
        elif kind == "event" and not self.done:
            record = message.get("event")
            if self.meta:
                meta = {k: message.get(k) for k in ("component_id", "component_kind", "component_type", "direction", "port")}
                record = {"meta": meta, "event": record}
            sys.stdout.write(self.render(record) + "\n")
            sys.stdout.flush()
            if self.left is not None:
                self.left -= 1


async def _tap(endpoint: Any, params: list[tuple[str, str]], token: str | None, printer: Printer,
               args: argparse.Namespace) -> int:
    deadline = None if args.duration_ms is None else time.monotonic() + args.duration_ms / 1000
    try:
        async with asyncio.timeout_at(None if deadline is None else asyncio.get_running_loop().time()
                                      + (deadline - time.monotonic())):
            return await _connect_loop(endpoint, params, token, printer, args.no_reconnect)
    except TimeoutError:
        return EXIT_OK


async def _connect_loop(endpoint: Any, params: list[tuple[str, str]], token: str | None, printer: Printer,
                        no_reconnect: bool) -> int:
    import aiohttp
    import msgspec

    decode = msgspec.json.Decoder().decode
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    while True:
        try:
            async with endpoint.session(aiohttp.ClientTimeout(total=None, connect=10)) as http:
                async with http.get(endpoint.url("/tap"), params=params, headers=headers) as response:
                    if response.status != 200:
                        body = await response.text()
                        printer.note(f"refused by {endpoint.describe()} ({response.status}): {_reason(body)}")
                        return EXIT_FAILED
                    printer.note(f"connected to {endpoint.describe()}")
                    async for line in response.content:
                        if line.strip():
                            printer.message(decode(line))
                        if printer.done:
                            return EXIT_OK
            printer.note("the agent closed the connection")
        except (aiohttp.ClientError, OSError) as exc:
            printer.note(f"cannot reach {endpoint.describe()}: {exc}")
        if no_reconnect:
            return EXIT_FAILED
        await asyncio.sleep(1.0)
        printer.note("reconnecting")


def _reason(body: str) -> str:
    import msgspec

    try:
        return str(msgspec.json.decode(body)["error"])
    except (msgspec.DecodeError, KeyError, TypeError):
        return body.strip()
