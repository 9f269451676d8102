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


#: below this many columns the short titles are used
WIDE = 150


def table(previous: top_model.Scrape | None, current: top_model.Scrape, width: int = WIDE) -> Table:
    view = Table(expand=False, header_style="bold", box=None, pad_edge=False, padding=(0, 1, 0, 0))
    titles = [title for title, _ in top_model.COLUMNS] if width >= WIDE else top_model.SHORT_TITLES
    for index, title in enumerate(titles):
        view.add_column(title, justify="left" if index < 2 else "right", no_wrap=True)
    for row in top_model.rows(previous, current):
        style = "red" if (row.values.get("errors") or 0) > 0 or (row.values.get("dead_lettered") or 0) > 0 else None
        view.add_row(*top_model.cells(row), style=style)
    return view


def screen(where: str, previous: top_model.Scrape | None, current: top_model.Scrape, width: int = WIDE) -> Group:
    return Group(Text(top_model.header(where, current), style="bold"), Text(""), table(previous, current, width),
                 Text("\nrates per second over the last interval; ctrl-c quits", style="dim"))


async def live(where: str, first: top_model.Scrape, scrape: Callable[[], Awaitable[top_model.Scrape]],
               interval: float) -> None:
    previous: Any = first
    with Live(auto_refresh=False, screen=False) as view:
        view.update(screen(where, None, first, view.console.width), refresh=True)
        while True:
            await asyncio.sleep(interval)
            current = await scrape()
            view.update(screen(where, previous, current, view.console.width), refresh=True)
            previous = current
