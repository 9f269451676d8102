"""``compile_program(source) -> Program``: a VRL program compiled once, run per record."""

from __future__ import annotations

from typing import Any

from .batch_compiler import BatchProgram, compile_batch
from .compile_cache import CompileCache
from .compiler import Compiler
from .parser import parse_program
from .runtime import Aborted, Frame, Returned

Paths = frozenset[tuple[str, tuple[str | int, ...]]]


class Program:
    """A compiled program. ``run(event, metadata)`` returns (result, event, metadata).

    Raises ``VrlRuntimeError`` (a runtime error) or ``Aborted`` (``abort``).
    ``reads``/``writes``: (root, segments) of the event (``.``) and metadata
    (``%``) paths the program reads and writes; ``pure``: it calls no
    function that reads or writes outside its arguments.
    """

    __slots__ = ("source", "reads", "writes", "pure", "result_kinds", "batch", "_run", "_slots")

    def __init__(self, source: str, run: Any, slots: int, reads: Paths, writes: Paths, pure: bool,
                 result_kinds: Any, batch: BatchProgram | None = None) -> None:
        self.source = source
        self._run = run
        self._slots = slots
        self.reads = reads
        self.writes = writes
        self.pure = pure
        self.result_kinds = result_kinds
        #: the same program over a batch of records at once (``batch_compiler.py``); None when it
        #: uses a form only the per-record closures take
        self.batch = batch

    def run(self, event: dict[str, Any], metadata: dict[str, Any] | None = None) -> tuple[Any, Any, Any]:
        frame = Frame(event, {} if metadata is None else metadata, [None] * self._slots)
        try:
            result = self._run(frame)
        except Returned as returned:
            result = returned.value
        return result, frame.event, frame.metadata

    def __repr__(self) -> str:
        return f"Program({self.source!r})"


def compile_program(source: str) -> Program:
    """Parse, check and compile ``source``; raises VrlError (VRL's code, line and column).

    The last programs compiled are kept (validate and the transform compile the
    same text; a reload compiles it again): a Program is never changed by a run
    (two transforms with the same text share their `log` calls' rate limits).
    """
    return _compiled(source)


def _compile(source: str) -> Program:
    compiler = Compiler(source)
    tree = parse_program(source, compiler.diagnostics)
    compiled = compiler.compile_statements(tree.statements)
    return Program(source, compiled.run, compiler.types.slots, frozenset(compiler.reads),
                   frozenset(compiler.writes), not compiler.impure, compiled.type.kinds,
                   compile_batch(tree.statements, compiler))


_compiled: CompileCache[Program] = CompileCache(_compile, 32)

__all__ = ["Aborted", "Program", "compile_program"]
