"""Compiling expressions to closures ``f(frame) -> value``, with their static types.

Each ``compile_*`` returns a ``Compiled``: the closure, the expression's type
and whether it can fail at run time (VRL's fallibility, which decides the
E100/E103/E630/E651 checks).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

from msgspec import Struct

from . import operations
from .ast import EVENT, ArrayLiteral, Binary, Literal, ObjectLiteral, Query, RegexLiteral, Template, Unary, Variable
from .diagnostic import Diagnostics
from .function import FunctionError
from .regexes import compile_regex_literal
from .runtime import Frame, VrlRuntimeError, get_path, kind_name
from .types import ANY, BOOLEAN, BYTES, Type, TypeState, type_of_constant
from .value import Kind, kind_names

Evaluator = Callable[[Frame], Any]
_NUMBERS = Kind.INTEGER | Kind.FLOAT


class Compiled(Struct, frozen=True):
    run: Evaluator
    type: Type
    fallible: bool = False
    constant: bool = False
    value: Any = None
    #: a call's run raising its function's error without VRL's prefix (for ``??``, which never reads it)
    bare: Evaluator | None = None
    #: when fallible: the error VRL reports if the failure is not handled (its first fallible point: an
    #: argument whose type cannot be verified, E110, or an expression that can fail, E100)
    failure: Any = None


def constant(value: Any) -> Compiled:
    return Compiled(lambda frame: value, type_of_constant(value), False, True, value)


class ExpressionCompiler:
    """The expression half of the compiler (statements and calls in ``compiler.py``)."""

    def __init__(self, source: str) -> None:
        self.diagnostics = Diagnostics(source)
        self.source = source
        self.types = TypeState()
        #: (root, segments) of every event path read / written
        self.reads: set[tuple[str, tuple[str | int, ...]]] = set()
        self.writes: set[tuple[str, tuple[str | int, ...]]] = set()
        self.impure = False
        #: (id(node), what) -> (node, fact): what compiling each node found, for the batch compiler
        #: (``vrl/batch_compiler.py``): "c" its Compiled, "slot" a variable's slot, "target" an
        #: assignment target's (root, slot, segments). The node is kept so that its id stays its own.
        self.notes: dict[tuple[int, str], tuple[Any, Any]] = {}

    def compile(self, node: Any) -> Compiled:
        raise NotImplementedError

    def text(self, node: Any) -> str:
        return self.source[node.offset:node.end]

    # -- values --------------------------------------------------------------

    def compile_literal(self, node: Literal) -> Compiled:
        return constant(node.value)

    def compile_regex(self, node: RegexLiteral) -> Compiled:
        try:
            regex = compile_regex_literal(node.pattern)
        except ValueError as exc:
            raise self.diagnostics.error("E101", "invalid regular expression", node.offset, node.end,
                                         (f"regex parse error: {exc}",)) from None
        return Compiled(lambda frame: regex, Type(Kind.REGEX), False, True, regex)

    def compile_array(self, node: ArrayLiteral) -> Compiled:
        items = [self.compile(item) for item in node.items]
        if all(item.constant for item in items):
            return constant([item.value for item in items])
        runs = [item.run for item in items]
        item_type = Type(Kind.ARRAY, None, tuple(item.type for item in items))
        return Compiled(lambda frame: [run(frame) for run in runs], item_type, any(i.fallible for i in items),
                        failure=_first_failure(items))

    def compile_object(self, node: ObjectLiteral) -> Compiled:
        items = [(key, self.compile(value)) for key, value in node.items]
        if all(item.constant for _, item in items):
            return constant({key: item.value for key, item in items})
        runs = [(key, item.run) for key, item in items]
        fields = {key: item.type for key, item in items}
        return Compiled(lambda frame: {key: run(frame) for key, run in runs}, Type(Kind.OBJECT, fields),
                        any(item.fallible for _, item in items), failure=_first_failure([item for _, item in items]))

    def compile_template(self, node: Template) -> Compiled:
        pieces: list[Compiled] = [constant(part) if isinstance(part, str) else self.compile_variable(part)
                                  for part in node.parts]
        fallible = any(not piece.type.kinds == Kind.BYTES for piece in pieces)
        runs = [piece.run for piece in pieces]

        def template(frame: Frame) -> str:
            result = ""
            for run in runs:
                result = operations.add(result, run(frame))
            return result

        return Compiled(template, BYTES, fallible)

    def compile_variable(self, node: Variable) -> Compiled:
        found = self.types.lookup(node.name)
        if found is None:
            raise self.diagnostics.error("E701", "call to undefined variable", node.offset, node.end,
                                         ("undefined variable",))
        slot, kind = found
        self.notes[id(node), "slot"] = (node, slot)
        return Compiled(lambda frame: frame.variables[slot], kind)

    def compile_query(self, node: Query) -> Compiled:
        segments = node.segments
        if isinstance(node.base, str):
            root = node.base
            self.reads.add((root, segments))
            kind = self.types.path_type(root, segments)
            attribute = "event" if root == EVENT else "metadata"
            return Compiled(_root_getter(attribute, segments), kind)
        base = self.compile(node.base)
        run = base.run
        return Compiled(lambda frame: get_path(run(frame), segments), base.type.at(segments), base.fallible,
                        failure=base.failure)

    # -- operators -----------------------------------------------------------

    def compile_unary(self, node: Unary) -> Compiled:
        operand = self.compile(node.operand)
        if operand.type.kinds != Kind.BOOLEAN:
            raise self.diagnostics.error("E660", "non-boolean negation", node.offset, node.end, (
                f"this expression resolves to {kind_names(operand.type.kinds)}",
                "negation only works on boolean values"))
        run = operand.run
        return Compiled(lambda frame: not run(frame), BOOLEAN, operand.fallible, failure=operand.failure)

    def compile_binary(self, node: Binary) -> Compiled:
        op = node.op
        left = self.compile(node.left)
        if op == "??":
            if not left.fallible:
                raise self.diagnostics.error("E651", "unnecessary error coalescing operation", node.left.offset,
                                             node.left.end, ("this expression can't fail",
                                                             "remove this error coalescing operation"))
            right = self.compile(node.right)
            return Compiled(_coalesce(left.bare or left.run, right.run), left.type.union(right.type), right.fallible,
                            failure=right.failure)
        right = self.compile(node.right)
        fallible = left.fallible or right.fallible
        # as VRL: an unhandled failure of the right side is reported before one of the left
        failure = right.failure or left.failure
        lk, rk = left.type.kinds, right.type.kinds
        if op in ("==", "!="):
            return Compiled(_equality(op, left, right), BOOLEAN, fallible, failure=failure)
        if op == "|":
            bad = [side for side, kind in ((node.left, lk), (node.right, rk)) if kind != Kind.OBJECT]
            if bad:
                raise self.diagnostics.error("E652", "only objects can be merged", bad[0].offset, bad[0].end,
                                             ("this expression must resolve to an object",))
            merged = _merged_type(left.type, right.type)
            return Compiled(_binary(operations.merge_objects, left.run, right.run), merged, fallible, failure=failure)
        if op in ("||", "&&"):
            kind, fallible = _logical_type(op, left, right)
            lrun, rrun = left.run, right.run
            if lk == rk == Kind.BOOLEAN:  # both give true or false: Python's operators are VRL's
                run = (lambda frame: lrun(frame) or rrun(frame)) if op == "||" else \
                    (lambda frame: lrun(frame) and rrun(frame))
            else:
                run = _or(lrun, rrun) if op == "||" else _and(lrun, rrun)
            return Compiled(run, kind, fallible, failure=failure)
        result, infallible = _arithmetic_type(op, lk, rk, right)
        function = _OPERATORS.get(op)
        if function is None:
            return Compiled(_comparison(op, left.run, right.run), BOOLEAN, fallible or not infallible,
                            failure=failure)
        return Compiled(_binary(function, left.run, right.run), Type(result), fallible or not infallible,
                        failure=failure)


def _first_failure(items: list[Compiled]) -> Any:
    """The failure VRL reports for a container's items: the last E110 (it replaces any), else the first."""
    failures = [item.failure for item in items if item.failure is not None]
    invalid = [failure for failure in failures if failure.code == "E110"]
    return invalid[-1] if invalid else failures[0] if failures else None


_OPERATORS = {"+": operations.add, "-": operations.subtract, "*": operations.multiply, "/": operations.divide}


def _logical_type(op: str, left: Compiled, right: Compiled) -> tuple[Type, bool]:
    """(type, fallible) of ``||`` / ``&&`` as VRL decides them from the left side's type and constant value."""
    lk = left.type.kinds
    always_false = lk == Kind.NULL or (left.constant and left.value is False)
    always_true = left.constant and left.value is True
    if op == "||":
        if always_false:
            return right.type, right.fallible
        if always_true or not lk & (Kind.NULL | Kind.BOOLEAN):
            return left.type, left.fallible
        return Type((lk & ~Kind.NULL) | right.type.kinds), left.fallible or right.fallible
    if always_false:  # the right side is never run
        return BOOLEAN, False
    if always_true:
        return BOOLEAN, right.fallible
    unchecked = (lk | right.type.kinds) & ~(Kind.BOOLEAN | Kind.NULL)
    return BOOLEAN, left.fallible or right.fallible or bool(unchecked)


def _merged_type(left: Type, right: Type) -> Type:
    """The type of ``left | right`` (right's fields win; unknown fields of left stay unknown)."""
    if right.fields is None or right.open:
        if left.fields is None or right.fields is None:
            return Type(Kind.OBJECT)
        return Type(Kind.OBJECT, {**left.fields, **right.fields}, open=True)
    if left.fields is None:
        return Type(Kind.OBJECT, dict(right.fields), open=True)
    return Type(Kind.OBJECT, {**left.fields, **right.fields}, open=left.open)


def _arithmetic_type(op: str, lk: Kind, rk: Kind, right: Compiled) -> tuple[Kind, bool]:
    """(result kinds, whether it cannot fail) of an arithmetic or ordering operator, by VRL's rules.

    The result kind decides the default ``x, err = a + b`` gives when it fails. As VRL, the rules look at
    exact kinds (a side that may be an integer or a float is neither): a string on one side of ``+`` makes a
    string, else a float on one side a float, two integers an integer, a string times an integer a string.
    """
    if op in ("<", "<=", ">", ">="):
        numbers = lk & ~_NUMBERS == 0 and rk & ~_NUMBERS == 0
        same = lk == rk and lk in (Kind.BYTES, Kind.TIMESTAMP)
        return Kind.BOOLEAN, numbers or same
    if op == "/":
        value = right.value if right.constant else None
        nonzero = (type(value) is int and value != 0) or (type(value) is float and _normal(value))
        return Kind.FLOAT, nonzero and lk in (Kind.INTEGER, Kind.FLOAT)
    if op == "+" and Kind.BYTES in (lk, rk):
        return Kind.BYTES, (lk | rk) & ~(Kind.BYTES | Kind.NULL) == 0
    if Kind.FLOAT in (lk, rk):
        return Kind.FLOAT, (lk | rk) & ~_NUMBERS == 0
    if lk == rk == Kind.INTEGER:
        return Kind.INTEGER, True
    if op == "*" and {lk, rk} == {Kind.BYTES, Kind.INTEGER}:
        return Kind.BYTES, True
    return (_NUMBERS if op == "-" else _NUMBERS | Kind.BYTES), False


def _normal(value: float) -> bool:
    """A float neither zero, subnormal, infinite nor NaN (Rust's ``is_normal``)."""
    return math.isfinite(value) and abs(value) >= sys.float_info.min


def _root_getter(attribute: str, segments: tuple[str | int, ...]) -> Evaluator:
    if not segments:
        if attribute == "event":
            return lambda frame: dict(frame.event) if type(frame.event) is dict else frame.event
        return lambda frame: frame.metadata
    first = segments[0]
    if attribute == "event" and len(segments) == 1 and type(first) is str:
        return lambda frame: frame.event.get(first) if type(frame.event) is dict else None
    if attribute == "event" and len(segments) == 2 and type(first) is str and type(segments[1]) is str:
        second = segments[1]

        def get2(frame: Frame) -> Any:
            value = frame.event.get(first) if type(frame.event) is dict else None
            return value.get(second) if type(value) is dict else None

        return get2
    if attribute == "event":
        return lambda frame: get_path(frame.event, segments)
    return lambda frame: get_path(frame.metadata, segments)


def _coalesce(left: Evaluator, right: Evaluator) -> Evaluator:
    def coalesce(frame: Frame) -> Any:
        try:
            return left(frame)
        except (VrlRuntimeError, FunctionError):
            return right(frame)

    return coalesce


def _equality(op: str, left: Compiled, right: Compiled) -> Evaluator:
    lrun, rrun = left.run, right.run
    if right.constant and type(right.value) is str:
        value = right.value
        if op == "==":
            return lambda frame: lrun(frame) == value
        return lambda frame: lrun(frame) != value
    if right.constant and (right.value is None or type(right.value) is bool):  # only null is null, true is true
        value = right.value
        if op == "==":
            return lambda frame: lrun(frame) is value
        return lambda frame: lrun(frame) is not value
    equal = operations.equal
    if op == "==":
        return lambda frame: equal(lrun(frame), rrun(frame))
    return lambda frame: not equal(lrun(frame), rrun(frame))


def _binary(function: Callable[[Any, Any], Any], left: Evaluator, right: Evaluator) -> Evaluator:
    return lambda frame: function(left(frame), right(frame))


def _comparison(op: str, left: Evaluator, right: Evaluator) -> Evaluator:
    compare = operations.compare
    return lambda frame: compare(op, left(frame), right(frame))


def _or(left: Evaluator, right: Evaluator) -> Evaluator:
    def either(frame: Frame) -> Any:
        first = left(frame)
        if first is None or first is False:
            return right(frame)
        return first

    return either


def _and(left: Evaluator, right: Evaluator) -> Evaluator:
    def both(frame: Frame) -> bool:
        first = left(frame)
        if first is False or first is None:
            return False
        if first is not True:
            raise VrlRuntimeError(f"can't apply an AND to types {_name(first)} and boolean")
        second = right(frame)
        if second is True or second is False:
            return second
        if second is None:
            return False
        raise VrlRuntimeError(f"can't apply an AND to types boolean and {_name(second)}")

    return both


_name = kind_name


__all__ = ["ANY", "Compiled", "Evaluator", "ExpressionCompiler", "constant"]
