"""The live ``logagent top`` screen, drawn with rich (imported only here)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from logagent.observe import top_model


def table(previous: top_model.Scrape | None, current: top_model.Scrape) -> Table:
    view = Table(expand=False, header_style="bold", box=None, pad_edge=False)
    for index, (title, _) in enumerate(top_model.COLUMNS):
        view.add_column(title, justify="left" if index < 2 else "right", no_wrap=True)
    for row in top_model.rows(previous, current):
        style = "red" if (row.values.get("errors") or 0) > 0 or (row.values.get("dead_lettered") or 0) > 0 else None
        view.add_row(*top_model.cells(row), style=style)
    return view


def screen(where: str, previous: top_model.Scrape | None, current: top_model.Scrape) -> Group:
    return Group(Text(top_model.header(where, current), style="bold"), Text(""), table(previous, current),
                 Text("\nrates per second over the last interval; ctrl-c quits", style="dim"))


async def live(where: str, first: top_model.Scrape, scrape: Callable[[], Awaitable[top_model.Scrape]],
               interval: float) -> None:
    previous: Any = first
    with Live(screen(where, None, first), auto_refresh=False, screen=False) as view:
        while True:
            await asyncio.sleep(interval)
            current = await scrape()
            view.update(screen(where, previous, current), refresh=True)
            previous = current
