"""A time limit on one backtracking regex match (grok's), so a runaway pattern cannot stall the agent.

Python's ``re`` has no retry limit, and grok patterns such as
``%{DATA:a} %{DATA:b} %{DATA:c} end`` backtrack cubically on a line they do
not match (a 3 KB line took 22 s). VRL's Oniguruma ends such a match with an
error; here a one-shot ``ITIMER_REAL`` is armed around the match, and its
SIGALRM handler raises inside ``re``'s matching loop (which checks for
signals every few thousand steps). The match then fails with a
:class:`FunctionError`, as a VRL runtime error: the record goes on as the
remap's ``drop_on_error`` says, and the error is counted.

Signals reach only the main thread, where the agent's event loop runs
programs; elsewhere (a test's thread), or where SIGALRM has a handler of
someone else's, the match runs without a limit.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import TypeVar

from ..function import FunctionError

#: seconds one match may take
MATCH_SECONDS = 0.1

Result = TypeVar("Result")


class _Runaway(Exception):
    """Raised by the SIGALRM handler while a limited match runs."""


_state = {"armed": False}


def _on_alarm(signum: int, frame: object) -> None:
    if _state["armed"]:
        _state["armed"] = False
        raise _Runaway


def within_deadline(match: Callable[[str], Result], value: str) -> Result:
    """``match(value)``, ended with a FunctionError if it runs longer than ``MATCH_SECONDS``."""
    if threading.current_thread() is not threading.main_thread():
        return match(value)
    handler = signal.getsignal(signal.SIGALRM)
    if handler is not _on_alarm:
        if handler not in (signal.SIG_DFL, None):
            return match(value)  # someone else's alarm: never taken over or cancelled
        signal.signal(signal.SIGALRM, _on_alarm)
    try:
        _state["armed"] = True
        signal.setitimer(signal.ITIMER_REAL, MATCH_SECONDS)
        try:
            return match(value)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _state["armed"] = False
    except _Runaway:
        raise FunctionError(
            f"grok pattern match took longer than {MATCH_SECONDS * 1000:.0f} ms (a pattern that backtracks "
            f"too much for this value)"
        ) from None
