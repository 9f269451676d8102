"""The compiler of conditions: VRL's compiler with the event read-only and read where it lives.

As Vector compiles a condition (``CompileConfig::set_read_only``): assigning
to a path of the event or the metadata is E315 ("mutation of read-only
value"), ``del`` of one is E610 wrapping E315; everything else (local
variables, every function, ``if``, closures) is the language of remap, with
the same compile-time checks. Queries on the event compile to reads of the
record itself (``record_reads``): ``target.get(first)``, never a dict copy.
"""

from __future__ import annotations

from typing import Any

from .ast import EVENT, METADATA, Assign, Call, Noop, Query
from .compiler import Compiler
from .expressions import Compiled
from .record_reads import event_reader, has_top_level
from .types import BOOLEAN, Type


class ConditionCompiler(Compiler):
    def __init__(self, source: str) -> None:
        super().__init__(source)
        #: the assignments being compiled, innermost last (E315 points at the one whose target is refused)
        self._assigning: list[Assign] = []

    def compile(self, node: Any) -> Compiled:
        if type(node) is Query and node.base == EVENT:
            segments = node.segments
            self.reads.add((EVENT, segments))
            return Compiled(event_reader(segments), self.types.path_type(EVENT, segments))
        if type(node) is Assign:  # the base class dispatches to its own method
            return self.compile_assign(node)
        return super().compile(node)

    def compile_exists(self, target: Any, root: str, segments: tuple[str | int, ...]) -> Compiled:
        if root == EVENT and len(segments) == 1 and type(segments[0]) is str:
            self.reads.add((root, segments))
            key = segments[0]
            return Compiled(lambda frame: has_top_level(frame.event, key), BOOLEAN)
        return super().compile_exists(target, root, segments)

    def compile_assign(self, node: Assign) -> Compiled:
        self._assigning.append(node)
        try:
            return super().compile_assign(node)
        finally:
            self._assigning.pop()

    def store(self, node: Any, kind: Type) -> Any:
        if not isinstance(node, Noop) and self.target_of(node)[0] in (EVENT, METADATA):
            assignment = self._assigning[-1]
            end = max(assignment.value.offset - 1, node.end)
            raise self.diagnostics.error("E315", "mutation of read-only value", node.offset, end,
                                         ("mutation of read-only value",
                                          "a condition reads the record; use a remap transform to change it"))
        return super().store(node, kind)

    def compile_path_function(self, node: Call) -> Compiled:
        arguments = [a for a in node.arguments if a.name not in ("compact",)]
        if node.name == "del" and len(arguments) == 1:
            target = arguments[0].value
            if isinstance(target, Query) and target.base in (EVENT, METADATA):
                raise self.diagnostics.error(
                    "E610", "function compilation error: error[E315] mutation of read-only value",
                    node.offset, node.end,
                    ("mutation of read-only value", f"{self.text(target)} is read-only, and cannot be deleted"))
        return super().compile_path_function(node)
