"""The compiled condition object used by the filter and route transforms."""

from __future__ import annotations

from typing import Any

from .compiler import Compiler
from .parser import parse_condition
from .paths import Evaluator


class Condition:
    """A compiled condition: call it with a record to get True or False.

    A runtime error (a type error in a function or comparison, a failed
    ``string!``, a result that is not a boolean) makes the result False and
    is counted in ``runtime_errors``; ``last_error`` keeps the latest reason.
    """

    __slots__ = ("source", "paths", "runtime_errors", "last_error", "_evaluate")

    def __init__(self, source: str, evaluate: Evaluator, paths: frozenset[tuple[str | int, ...]]) -> None:
        self.source = source
        #: every field path the condition reads; () is the whole record
        self.paths = paths
        self.runtime_errors = 0
        self.last_error: str | None = None
        self._evaluate = evaluate

    def __call__(self, record: Any) -> bool:
        try:
            result = self._evaluate(record)
        except Exception as exc:  # any failure inside makes the condition false, never the agent crash
            self.runtime_errors += 1
            self.last_error = str(exc) or type(exc).__name__
            return False
        if result is True:
            return True
        if result is False:
            return False
        self.runtime_errors += 1
        self.last_error = f"the condition resolved to {type(result).__name__} {result!r:.60}, not a boolean"
        return False

    def reads_only_outside(self, keys: frozenset[str]) -> bool:
        """True when no path read starts with one of ``keys`` (and the whole record is not read)."""
        return all(path and path[0] not in keys for path in self.paths)

    # name used in ARCHITECTURE.md
    reads_only = reads_only_outside

    def __repr__(self) -> str:
        return f"Condition({self.source!r})"


def compile_condition(text: str) -> Condition:
    """Compile VRL condition ``text`` once; raises ConditionSyntaxError with line/column."""
    compiler = Compiler(text)
    evaluate = compiler.compile(parse_condition(text))
    return Condition(text, evaluate, frozenset(compiler.paths))
