"""A grok pattern that backtracks without end is stopped with a runtime error, not left to stall the agent."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from logagent.vrl.function import FunctionError
from logagent.vrl.stdlib import regex_deadline
from tests.vrl_function_oracle import outcome_of_ours

RUNAWAY = "%{DATA:a} %{DATA:b} %{DATA:c} end"  # cubic backtracking on a line of many spaces without "end"


def test_a_runaway_match_ends_with_an_error_within_its_limit() -> None:
    kind, message = outcome_of_ours("parse_groks", "a " * 1600, [RUNAWAY])  # unbounded: about 20 s here
    assert kind == "error" and "took longer than 100 ms" in message
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # nothing left armed


def test_matches_within_the_limit_are_unchanged_and_leave_no_timer() -> None:
    assert outcome_of_ours("parse_groks", "a b c end", [RUNAWAY]) == ("ok", {"a": "a", "b": "b", "c": "c"})
    assert outcome_of_ours("parse_grok", "x 42 y", "%{INT:n}") == ("ok", {"n": "42"})
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is regex_deadline._on_alarm


def test_an_alarm_of_someone_elses_is_neither_taken_over_nor_cancelled() -> None:
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        assert outcome_of_ours("parse_groks", "a b c end", [RUNAWAY])[0] == "ok"
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0  # still armed
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not fired


def test_outside_the_main_thread_the_match_runs_without_a_limit() -> None:
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(regex_deadline.within_deadline(str.upper, "x")))
    worker.start()
    worker.join()
    assert seen == ["X"]


def test_the_limit_raises_a_vrl_runtime_error() -> None:
    def slow(value: str) -> str:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # Python code: the handler's exception lands here
            pass
        return value

    with pytest.raises(FunctionError):
        regex_deadline.within_deadline(slow, "x")
