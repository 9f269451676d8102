"""The agent's own logs: one path to stderr, JSON by default, never on stdout.

structlog events and standard ``logging`` records (the agent's kube modules,
aiohttp, asyncio, kubernetes-asyncio, Python warnings) go through the same
processors and the same handler, so every line on stderr has the chosen
format with ``level``, ``logger``, ``timestamp``, ``event`` and the fields
(a stdlib record's ``extra=`` become fields). An exception is a field
(``exception``, the formatted traceback as one string), never raw lines.

structlog hands its events to the standard library (``LoggerFactory``), and
one ``StreamHandler`` on the root logger renders both kinds with structlog's
``ProcessorFormatter``; records from libraries are first given what structlog
adds to its own events (``foreign_pre_chain``).

Levels: the agent's loggers (``logagent.*``) log at ``--log-level``; other
libraries at that level but never below warning, so ``--log-level debug``
shows the agent's debug lines without every HTTP request of the libraries.
"""

from __future__ import annotations

import logging
import sys
import threading
from types import TracebackType
from typing import Literal, TextIO

import structlog
from structlog.stdlib import ProcessorFormatter

LEVELS = ("debug", "info", "warning", "error")

#: the loggers that follow ``--log-level`` down to debug; libraries stop at warning
AGENT_LOGGER = "logagent"

#: what structlog's own events and foreign records both get before rendering
_SHARED: list[structlog.typing.Processor] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def configure_logging(
    fmt: Literal["json", "console"] = "json", level: str = "info", stream: TextIO | None = None
) -> None:
    """Route structlog and stdlib ``logging`` to ``stream`` (stderr) in ``fmt``."""
    numeric = logging.getLevelName(level.upper())
    structlog.configure(
        processors=[
            *_SHARED,
            structlog.stdlib.PositionalArgumentsFormatter(),
            ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(
        ProcessorFormatter(
            foreign_pre_chain=[*_SHARED, structlog.stdlib.ExtraAdder()],
            processors=[ProcessorFormatter.remove_processors_meta, *_renderers(fmt)],
        )
    )
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(max(numeric, logging.WARNING))
    logging.getLogger(AGENT_LOGGER).setLevel(numeric)
    logging.captureWarnings(True)  # warnings.warn() becomes a record of logger "py.warnings"
    sys.excepthook = _log_uncaught
    threading.excepthook = _log_uncaught_in_thread


def _renderers(fmt: str) -> list[structlog.typing.Processor]:
    if fmt == "console":
        return [structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)]
    return [structlog.processors.format_exc_info, _head_keys_first, structlog.processors.JSONRenderer()]


_HEAD_KEYS = ("timestamp", "level", "logger", "event")


def _head_keys_first(logger: object, method: str, event_dict: structlog.typing.EventDict) -> structlog.typing.EventDict:
    """Put time, level, logger and event at the start of a JSON line, where a reader looks first."""
    head = {key: event_dict.pop(key) for key in _HEAD_KEYS if key in event_dict}
    head.update(event_dict)
    return head


def _log_uncaught(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, exc, tb)
        return
    logging.getLogger(AGENT_LOGGER).critical("uncaught exception", exc_info=(kind, exc, tb))


def _log_uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is not None:
        thread = args.thread.name if args.thread is not None else None
        logging.getLogger(AGENT_LOGGER).error(
            "uncaught exception in a thread", exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
            extra={"thread": thread},
        )
