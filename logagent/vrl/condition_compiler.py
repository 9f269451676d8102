"""The compiler of conditions: VRL's compiler with the event read-only and read where it lives.

As Vector compiles a condition (``CompileConfig::set_read_only``): assigning
to a path of the event or the metadata is E315 ("mutation of read-only
value"), ``del`` of one is E610 wrapping E315; everything else (local
variables, every function, ``if``, closures) is the language of remap, with
the same compile-time checks. Queries on the event compile to reads of the
record itself (``record_reads``): ``target.get(first)``, never a dict copy.

``direct``: the compiled closures get the record itself where they would get
a frame. Only the event's reads look at the frame, so a program without
local variables and without metadata reads (``needs_frame`` False after
compiling) can run so, one attribute and one object fewer per read and per
run; any other is compiled again with ``direct`` False (reads of
``frame.event``).
"""

from __future__ import annotations

from typing import Any

from .ast import EVENT, METADATA, Assign, Binary, Call, Literal, Noop, Query
from .compiler import Compiler
from .deletion import path_arguments
from .expressions import Compiled, Evaluator
from .record_reads import record_reader
from .types import BOOLEAN, Type


class ConditionCompiler(Compiler):
    def __init__(self, source: str, direct: bool) -> None:
        super().__init__(source)
        self.direct = direct
        #: the assignments being compiled, innermost last (E315 points at the one whose target is refused)
        self._assigning: list[Assign] = []

    @property
    def needs_frame(self) -> bool:
        """Whether the program has local variables or reads the metadata (then it cannot run ``direct``)."""
        return self.types.slots > 0 or any(root == METADATA for root, _ in self.reads)

    def on_record(self, function: Evaluator) -> Evaluator:
        """``function`` of the record as a compiled closure (of the record itself when ``direct``)."""
        if self.direct:
            return function
        return lambda frame: function(frame.event)

    def compile(self, node: Any) -> Compiled:
        if type(node) is Query and node.base == EVENT:
            segments = node.segments
            self.reads.add((EVENT, segments))
            return Compiled(self.on_record(record_reader(segments, timestamps=True)),
                            self.types.path_type(EVENT, segments))
        if type(node) is Assign:  # the base class dispatches to its own method
            return self.compile_assign(node)
        if type(node) is Binary and node.op in ("==", "!="):
            compiled = self.compile_top_level_equality(node)
            if compiled is not None:
                return compiled
        return super().compile(node)

    def compile_top_level_equality(self, node: Binary) -> Compiled | None:
        """``.key == "text"`` (or null, true, false): the record asked for the key, compared in one step."""
        for query, literal in ((node.left, node.right), (node.right, node.left)):
            if (type(query) is Query and query.base == EVENT and len(query.segments) == 1
                    and type(query.segments[0]) is str and query.segments[0] != "timestamp"
                    and type(literal) is Literal and (literal.value is None or type(literal.value) in (str, bool))):
                self.compile(query)  # the read, and its type
                test = _top_level_equals(query.segments[0], literal.value, node.op == "!=")
                return Compiled(self.on_record(test), BOOLEAN)
        return None

    def compile_exists(self, target: Any, root: str, segments: tuple[str | int, ...]) -> Compiled:
        if root == EVENT and len(segments) == 1 and type(segments[0]) is str:
            self.reads.add((root, segments))
            key = segments[0]

            def exists_top(record: Any) -> bool:  # ``has`` only after ``get`` gave null: the common case is one lookup
                if type(record) is dict:
                    return key in record
                return record.get(key) is not None or record.has(key)

            return Compiled(self.on_record(exists_top), BOOLEAN)
        if root == EVENT and len(segments) > 1 and type(segments[-1]) is str:
            self.reads.add((root, segments[:-1]))
            parent, last = record_reader(segments[:-1], timestamps=True), segments[-1]

            def exists_key(record: Any) -> bool:
                container = parent(record)
                return type(container) is dict and last in container

            return Compiled(self.on_record(exists_key), BOOLEAN)
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
            end = node.end if node is assignment.error_target else max(assignment.value.offset - 1, node.end)
            raise self.diagnostics.error("E315", "mutation of read-only value", node.offset, end,
                                         ("mutation of read-only value",
                                          "a condition reads the record; use a remap transform to change it"))
        return super().store(node, kind)

    def compile_path_function(self, node: Call) -> Compiled:
        if node.name == "del":
            target = path_arguments(self, node)[0].value
            if isinstance(target, Query) and target.base in (EVENT, METADATA):
                raise self.diagnostics.error(
                    "E610", "function compilation error: error[E315] mutation of read-only value",
                    node.offset, node.end,
                    ("mutation of read-only value", f"{self.text(target)} is read-only, and cannot be deleted"))
        return super().compile_path_function(node)


def _top_level_equals(key: str, value: Any, negate: bool) -> Evaluator:
    if type(value) is str:  # a text equals only a text, in Python as in VRL
        if negate:
            return lambda record: record.get(key) != value
        return lambda record: record.get(key) == value
    if negate:  # null, true, false: only themselves
        return lambda record: record.get(key) is not value
    return lambda record: record.get(key) is value
