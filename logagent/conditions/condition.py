"""The compiled condition object used by the filter and route transforms."""

from __future__ import annotations

from typing import Any

from .compiler import Compiler
from .parser import parse_condition
from .paths import Evaluator
from .syntax import Binary, Literal, Node, Path


class Condition:
    """A compiled condition: call it with a record to get True or False.

    A runtime error (a type error in a function or comparison, a failed
    ``string!``, a result that is not a boolean) makes the result False and
    is counted in ``runtime_errors``; ``last_error`` keeps the latest reason.
    """

    __slots__ = ("source", "paths", "field_equals", "runtime_errors", "last_error", "_evaluate")

    def __init__(
        self,
        source: str,
        evaluate: Evaluator,
        paths: frozenset[tuple[str | int, ...]],
        field_equals: tuple[str, str] | None = None,
    ) -> None:
        self.source = source
        #: every field path the condition reads; () is the whole record
        self.paths = paths
        #: (key, text) when the whole condition is ``.key == "text"`` on a
        #: top-level key: batches can then be split without calling it per record
        self.field_equals = field_equals
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
    tree = parse_condition(text)
    evaluate = compiler.compile(tree)
    return Condition(text, evaluate, frozenset(compiler.paths), _field_equals(tree))


def _field_equals(node: Node) -> tuple[str, str] | None:
    """(key, text) for ``.key == "text"`` / ``"text" == .key`` (a str literal, a top-level key)."""
    if not isinstance(node, Binary) or node.op != "==":
        return None
    for path, literal in ((node.left, node.right), (node.right, node.left)):
        if (
            isinstance(path, Path)
            and isinstance(literal, Literal)
            and len(path.segments) == 1
            and type(path.segments[0]) is str
            and type(literal.value) is str
        ):
            return path.segments[0], literal.value
    return None
