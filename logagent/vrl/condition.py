"""Conditions: VRL programs whose result decides (filter, route, ``exclude`` of throttle and sample).

``compile_condition(source) -> Condition``, as Vector builds a ``vrl``
condition: the source is a VRL program (any statements, local variables,
every function remap has) compiled with the event read-only
(``condition_compiler``), with VRL's compile-time checks (``VrlError``: code,
line, column, fix), and it must resolve to a boolean (Vector: "VRL
conditions must return a boolean"). A runtime error or ``abort`` makes the
condition false and is counted.

The program runs on the record itself (``record_reads``): a ``LogEvent``, a
``FileContext`` or a plain dict, read through ``get``, with no dict made per
record.
"""

from __future__ import annotations

from typing import Any

from .ast import EVENT, Binary, Call, Group, Literal, Query, Variable
from .compile_cache import CompileCache
from .condition_compiler import ConditionCompiler
from .diagnostic import VrlError
from .parser import parse_program
from .runtime import Frame, Returned
from .value import Kind, kind_names

Paths = frozenset[tuple[str | int, ...]]

#: the metadata and the variables of a program that has none: shared, never written (the event is read-only)
_NO_METADATA: dict[str, Any] = {}
_NO_VARIABLES: list[Any] = []


class ConditionError(VrlError):
    """A program that compiles but cannot be a condition: its result is not a boolean."""

    @property
    def reason(self) -> str:
        return self.title


class Condition:
    """A compiled condition: call it with a record to get True or False.

    A runtime error (or ``abort``) makes the result False and is counted in
    ``runtime_errors``; ``last_error`` keeps the latest reason. A result
    that is not a boolean cannot happen after the compile-time check; it
    would be counted the same way.
    """

    __slots__ = ("source", "paths", "field_equals", "pure", "runtime_errors", "last_error", "_run")

    def __init__(self, source: str, run: Any, slots: int, paths: Paths, pure: bool = True,
                 field_equals: tuple[str, str] | None = None) -> None:
        self.source = source
        #: every field path of the record the condition reads; () is the whole record
        self.paths = paths
        #: (key, text) when the whole condition is ``.key == "text"`` on a top-level key: batches can
        #: then be split without calling it per record
        self.field_equals = field_equals
        #: False when it calls a function whose result is not a function of the record (``now()``, ``random_*``)
        self.pure = pure
        self.runtime_errors = 0
        self.last_error: str | None = None
        #: the compiled program, a function of the record (``condition_compiler``: direct)
        self._run = run

    def __call__(self, record: Any) -> bool:
        try:
            result = self._run(record)
        except Returned as returned:
            result = returned.value
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
        """True when no path read starts with one of ``keys``, the whole record is not read, and it is pure.

        Such a condition has one answer per ``FileContext`` (the topology memoises it).
        """
        return self.pure and all(path and path[0] not in keys for path in self.paths)

    # name used in ARCHITECTURE.md
    reads_only = reads_only_outside

    def __repr__(self) -> str:
        return f"Condition({self.source!r})"


class _FramedCondition(Condition):
    """A condition whose program has local variables or reads the metadata: it runs on a frame.

    One frame, reused: a condition runs on one thread (the topology's event loop), never within
    itself; each run starts with no variable set.
    """

    __slots__ = ("_frame",)

    def __init__(self, source: str, run: Any, slots: int, paths: Paths, pure: bool = True,
                 field_equals: tuple[str, str] | None = None) -> None:
        self._frame = Frame(None, _NO_METADATA, _NO_VARIABLES)
        frame = self._frame

        def run_framed(record: Any) -> Any:
            frame.event = record
            frame.variables = [None] * slots
            return run(frame)

        super().__init__(source, run_framed, slots, paths, pure, field_equals)


def compile_condition(source: str) -> Condition:
    """Compile condition ``source`` once; raises ``VrlError`` (VRL's code, line, column and fix)."""
    compiled = _compiled(source)
    return (_FramedCondition if compiled[1] >= 0 else Condition)(source, *compiled)


def _compile(source: str) -> tuple[Any, int, Paths, bool, tuple[str, str] | None]:
    """(run, variable slots or -1 when it runs on the record itself, paths, pure, field_equals)."""
    compiler = ConditionCompiler(source, direct=True)
    tree = parse_program(source, compiler.diagnostics)
    compiled = compiler.compile_statements(tree.statements)
    if compiler.needs_frame:
        compiler = ConditionCompiler(source, direct=False)
        compiled = compiler.compile_statements(tree.statements)
    kinds = compiled.type.kinds
    if kinds != Kind.BOOLEAN:
        last = tree.statements[-1] if tree.statements else None
        offset, end = (last.offset, last.end) if last is not None else (0, len(source))
        text = source[offset:end]
        if not isinstance(last, (Query, Variable, Call)):
            text = f"({text})"
        fix = f"{text} == true" if kinds & Kind.BOOLEAN else None
        raise ConditionError("", "VRL conditions must return a boolean", source, offset, end,
                             (f"this condition resolves to {kind_names(kinds) if kinds else 'nothing'}",), fix)
    paths = frozenset(segments for root, segments in compiler.reads if root == EVENT)
    field_equals = _field_equals(_ungrouped(tree.statements[0])) if len(tree.statements) == 1 else None
    slots = compiler.types.slots if not compiler.direct else -1
    return compiled.run, slots, paths, not compiler.impure, field_equals


#: validate and the transform compile the same text; each gets its own Condition (its own counters)
_compiled: CompileCache[tuple[Any, int, Paths, bool, tuple[str, str] | None]] = CompileCache(_compile, 64)


def _field_equals(node: Any) -> tuple[str, str] | None:
    """(key, text) for ``.key == "text"`` / ``"text" == .key`` (a string literal, a top-level key)."""
    if not isinstance(node, Binary) or node.op != "==":
        return None
    for path, literal in ((_ungrouped(node.left), _ungrouped(node.right)), (_ungrouped(node.right),
                                                                            _ungrouped(node.left))):
        if (isinstance(path, Query) and path.base == EVENT and len(path.segments) == 1
                and type(path.segments[0]) is str and path.segments[0] != "timestamp"  # a timestamp, never text
                and isinstance(literal, Literal) and type(literal.value) is str):
            return path.segments[0], literal.value
    return None


def _ungrouped(node: Any) -> Any:
    while isinstance(node, Group) and len(node.statements) == 1:
        node = node.statements[0]
    return node


__all__ = ["Condition", "ConditionError", "VrlError", "compile_condition"]
