"""The agent's own logs: structlog to stderr, JSON by default, never on stdout."""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog

LEVELS = ("debug", "info", "warning", "error")


def configure_logging(fmt: Literal["json", "console"] = "json", level: str = "info") -> None:
    numeric = logging.getLevelName(level.upper())
    renderer: structlog.typing.Processor
    if fmt == "console":
        renderer = structlog.dev.ConsoleRenderer(colors=False)
    else:
        renderer = structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    # libraries that use the standard logging module also go to stderr
    logging.basicConfig(stream=sys.stderr, level=max(numeric, logging.WARNING), format="%(levelname)s %(name)s: %(message)s")
