"""Turn a syntax tree into nested Python closures (no eval/exec of generated source).

Common shapes get specialised closures so the hot path stays short, e.g.
``.stream == "stderr"`` compiles to ``record.get("stream") == "stderr"``.
"""

from __future__ import annotations

from typing import Any

from .errors import ConditionRuntimeError, ConditionSyntaxError, error_at
from .functions import FUNCTIONS
from .paths import Evaluator, Segments, make_getter
from .syntax import ArrayLiteral, Binary, Call, Literal, Node, Not, Path, RegexLiteral
from .values import kind_name, ordered, vrl_equal


class Compiler:
    """Compiles one condition; collects every field path it reads."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.paths: set[Segments] = set()

    def error(self, offset: int, reason: str) -> ConditionSyntaxError:
        return error_at(self.source, offset, reason)

    def add_path(self, segments: Segments) -> None:
        self.paths.add(segments)

    def compile(self, node: Node) -> Evaluator:
        if isinstance(node, Literal):
            value = node.value
            return lambda record: value
        if isinstance(node, Path):
            self.add_path(node.segments)
            return make_getter(node.segments)
        if isinstance(node, Binary):
            return self._binary(node)
        if isinstance(node, Not):
            return self._not(node)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, ArrayLiteral):
            return self._array(node)
        if isinstance(node, RegexLiteral):
            raise self.error(node.offset, "a regex literal can only be used as the pattern of match()")
        raise AssertionError(f"unknown node {node!r}")

    # -- operators -----------------------------------------------------------

    def _binary(self, node: Binary) -> Evaluator:
        op = node.op
        if op in ("==", "!="):
            return self._equality(node)
        left = self.compile(node.left)
        right = self.compile(node.right)
        if op == "&&":
            return _and(left, right)
        if op == "||":
            return _or(left, right)
        if op == "??":
            return _coalesce(left, right)
        return _ordering(op, left, right)

    def _equality(self, node: Binary) -> Evaluator:
        negate = node.op == "!="
        literal, other = None, None
        if isinstance(node.right, Literal):
            literal, other = node.right, node.left
        elif isinstance(node.left, Literal):
            literal, other = node.left, node.right
        if literal is None or other is None:
            left = self.compile(node.left)
            right = self.compile(node.right)
            if negate:
                return lambda record: not vrl_equal(left(record), right(record))
            return lambda record: vrl_equal(left(record), right(record))
        return _equals_literal(self.compile(other), other, literal.value, negate)

    def _not(self, node: Not) -> Evaluator:
        operand = self.compile(node.operand)

        def negate(record: Any) -> bool:
            value = operand(record)
            if value is True:
                return False
            if value is False:
                return True
            raise ConditionRuntimeError(f"negation only works on booleans, got {kind_name(value)}")

        return negate

    def _array(self, node: ArrayLiteral) -> Evaluator:
        if all(isinstance(item, Literal) for item in node.items):
            constant = [item.value for item in node.items]  # type: ignore[union-attr]
            return lambda record: constant
        items = [self.compile(item) for item in node.items]
        return lambda record: [item(record) for item in items]

    # -- function calls ------------------------------------------------------

    def _call(self, call: Call) -> Evaluator:
        function = FUNCTIONS.get(call.function)
        if function is None:
            known = ", ".join(sorted(FUNCTIONS))
            raise self.error(call.offset, f"unknown function {call.function!r} (supported: {known})")
        slots: list[Node | None] = [None] * len(function.params)
        positional = 0
        for argument in call.arguments:
            if argument.name is None:
                if positional >= len(function.params):
                    raise self.error(
                        argument.offset,
                        f"{call.function}() takes at most {len(function.params)} arguments",
                    )
                index = positional
                positional += 1
            else:
                if argument.name not in function.params:
                    raise self.error(
                        argument.offset,
                        f"{call.function}() has no argument {argument.name!r} "
                        f"(its arguments: {', '.join(function.params)})",
                    )
                index = function.params.index(argument.name)
            if slots[index] is not None:
                raise self.error(argument.offset, f"argument {function.params[index]!r} given twice")
            slots[index] = argument.value
        for index in range(function.required):
            if slots[index] is None:
                raise self.error(
                    call.offset, f"{call.function}() is missing its required argument {function.params[index]!r}"
                )
        return function.build(self, call, slots)


def _equals_literal(value: Evaluator, node: Node, literal: Any, negate: bool) -> Evaluator:
    """``x == <literal>``, without the generic type dispatch of vrl_equal."""
    if isinstance(node, Path) and len(node.segments) == 1 and type(node.segments[0]) is str:
        key = node.segments[0]
        if type(literal) is str:  # a str only equals a str, in Python as in VRL
            if negate:
                return lambda record: record.get(key) != literal
            return lambda record: record.get(key) == literal
        if literal is None or type(literal) is bool:
            if negate:
                return lambda record: record.get(key) is not literal
            return lambda record: record.get(key) is literal
    if type(literal) is str:
        if negate:
            return lambda record: value(record) != literal
        return lambda record: value(record) == literal
    if literal is None or type(literal) is bool:
        if negate:
            return lambda record: value(record) is not literal
        return lambda record: value(record) is literal
    if negate:
        return lambda record: not vrl_equal(value(record), literal)
    return lambda record: vrl_equal(value(record), literal)


def _and(left: Evaluator, right: Evaluator) -> Evaluator:
    """VRL ``&&``: null counts as false; any other non-boolean operand is an error."""

    def evaluate_and(record: Any) -> bool:
        first = left(record)
        if first is True:
            second = right(record)
            if second is True or second is False:
                return second
            if second is None:
                return False
            raise ConditionRuntimeError(f"can't apply an AND to types boolean and {kind_name(second)}")
        if first is False or first is None:
            return False
        raise ConditionRuntimeError(f"can't apply an AND to types {kind_name(first)} and boolean")

    return evaluate_and


def _or(left: Evaluator, right: Evaluator) -> Evaluator:
    """VRL ``||``: the left value unless it is null or false, else the right value."""

    def evaluate_or(record: Any) -> Any:
        first = left(record)
        if first is None or first is False:
            return right(record)
        return first

    return evaluate_or


def _coalesce(left: Evaluator, right: Evaluator) -> Evaluator:
    """VRL ``??``: the right value when the left one fails."""

    def evaluate_coalesce(record: Any) -> Any:
        try:
            return left(record)
        except ConditionRuntimeError:
            return right(record)

    return evaluate_coalesce


def _ordering(op: str, left: Evaluator, right: Evaluator) -> Evaluator:
    if op == "<":

        def less(record: Any) -> bool:
            a, b = left(record), right(record)
            ordered(op, a, b)
            return a < b

        return less
    if op == "<=":

        def less_equal(record: Any) -> bool:
            a, b = left(record), right(record)
            ordered(op, a, b)
            return a <= b

        return less_equal
    if op == ">":

        def greater(record: Any) -> bool:
            a, b = left(record), right(record)
            ordered(op, a, b)
            return a > b

        return greater

    def greater_equal(record: Any) -> bool:
        a, b = left(record), right(record)
        ordered(op, a, b)
        return a >= b

    return greater_equal
