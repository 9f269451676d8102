"""The noisy-neighbour benchmark's HTTP receiver: when each record arrived, in its own process.

``python -m benchmarks.stamp_receiver --port P`` accepts the ``http`` sink's
ndjson posts on 127.0.0.1 and answers 200 at once. For every request it prints
one line ``r <arrival ns> <records> <w1> <w2> ...``: the wall clock when the
body was read, the body's record count and the write stamps (``lat <ns>``) of
the quiet pods' records in it. The benchmark reads these lines from a pipe;
doing the work here keeps the parsing of a flood of noisy records out of the
benchmark's own process, which writes the quiet lines.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from aiohttp import web

MARK = b'"message":"lat '


def stamps(body: bytes) -> list[bytes]:
    """The write stamps of the quiet records in an ndjson body."""
    found = []
    start = body.find(MARK)
    while start >= 0:
        start += len(MARK)
        end = body.index(b" ", start)
        found.append(body[start:end])
        start = body.find(MARK, end)
    return found


async def handle(request: web.Request) -> web.Response:
    body = await request.read()
    arrival = time.time_ns()
    line = b"r %d %d %s\n" % (arrival, body.count(b"\n"), b" ".join(stamps(body)))
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
    return web.Response(status=200, text="ok")


async def serve(port: int) -> None:
    app = web.Application(client_max_size=256 << 20)
    app.router.add_route("POST", "/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None, handle_signals=True)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print(f"listening on {port}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    try:
        asyncio.run(serve(parser.parse_args().port))
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass


if __name__ == "__main__":
    main()
