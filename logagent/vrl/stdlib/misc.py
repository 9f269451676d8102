"""now, get_env_var, get_hostname, log (rate-limited into the agent's own logs), assert, assert_eq."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import Any

import structlog

from ...observe.ratelimit import RateLimiter
from ..function import ArgumentError, FunctionError
from ..value import Timestamp
from .declare import ANY, BOOL, NULL, TS, Args, B, I, always, function, opt, req
from .display import display
from .objects import vrl_equal

_logger = structlog.get_logger("logagent.vrl")
LOG_LEVELS = ("trace", "debug", "info", "warn", "error")
_STRUCTLOG_LEVEL = {"trace": "debug", "debug": "debug", "info": "info", "warn": "warning", "error": "error"}


def now() -> Timestamp:
    return Timestamp(time.time_ns())


def get_env_var(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise FunctionError("environment variable not found")
    return value


def get_hostname() -> str:
    """The machine's host name, as VRL's (gethostname)."""
    try:
        return socket.gethostname()
    except OSError as exc:
        raise FunctionError(f"unable to get hostname: {exc.strerror}") from None


def _log_text(value: Any) -> str:
    return value if type(value) is str else display(value)


def log(value: Any, level: str | None, rate_limit_secs: int | None) -> None:
    """The unspecialised form (used when the compiler does not specialise): one shared limiter."""
    _emit(_SHARED, "log", value, level, rate_limit_secs)


def _emit(limiter: RateLimiter, key: Any, value: Any, level: str | None, rate_limit_secs: int | None) -> None:
    interval = 1 if rate_limit_secs is None else rate_limit_secs
    suppressed = limiter.admit(key, interval)
    if suppressed is None:
        return
    fields: dict[str, Any] = {"suppressed": suppressed} if suppressed else {}
    getattr(_logger, _STRUCTLOG_LEVEL[level or "info"])(_log_text(value), vrl_level=level or "info", **fields)


_SHARED = RateLimiter()


def _specialize_log(args: Args) -> Callable[..., None]:
    """Each ``log`` call site gets its own limiter, as VRL rate-limits per call site."""
    limiter = RateLimiter(max_keys=1)

    def log_here(value: Any, level: str | None, rate_limit_secs: int | None) -> None:
        _emit(limiter, "site", value, level, rate_limit_secs)

    return log_here


def _check_level(args: Args) -> None:
    arg = args[1]
    if arg is not None and (not arg.constant or arg.value not in LOG_LEVELS):
        names = ", ".join(f'"{name}"' for name in LOG_LEVELS)
        raise ArgumentError(f'invalid enum variant for argument "level"; expected one of: {names}')


def assert_(condition: bool, message: str | None) -> bool:
    if condition:
        return True
    raise FunctionError("assertion failed" if message is None else message)


def assert_eq(left: Any, right: Any, message: str | None) -> bool:
    if vrl_equal(left, right):
        return True
    raise FunctionError(message if message is not None else f"assertion failed: {display(left)} == {display(right)}")


FUNCTIONS = [
    function("now", (), always(TS), now, pure=False),
    function("get_env_var", (req("name", B),), always(B, True), get_env_var, pure=False),
    function("get_hostname", (), always(B, True), get_hostname, pure=False),
    function(
        "log",
        (req("value", ANY), opt("level", B), opt("rate_limit_secs", I)),
        always(NULL),
        log,
        check=_check_level,
        pure=False,
        specialize=_specialize_log,
    ),
    function("assert", (req("condition", BOOL), opt("message", B)), always(BOOL, True), assert_),
    function("assert_eq", (req("left", ANY), req("right", ANY), opt("message", B)), always(BOOL, True), assert_eq),
]
