"""Expressions compiled to batch evaluators ``f(run, sel) -> values`` (see ``batch_run.py``).

Built from the syntax tree and what the per-record compiler noted about each
node (``ExpressionCompiler.notes``: its Compiled, variable slots, assignment
targets), so the checks, types and slots are the per-record compiler's; the
evaluators do what its closures do, for a whole selection at once. What this
module does not take raises :class:`Unsupported` and the program runs per
record only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import compress, repeat
from typing import Any

from . import operations
from .ast import EVENT, ArrayLiteral, Binary, Block, Call, Group, If, Literal, ObjectLiteral, Query, RegexLiteral, \
    Template, \
    Unary, Variable
from .batch_run import BatchRun
from .batch_values import FALSE, NULL, BatchErrors, Uniform, Values, apply, interleave, split, spread, types_of, without
from .value import Kind
from .expressions import Compiled
from .runtime import VrlRuntimeError, get_path, kind_name

BatchEvaluator = Callable[[BatchRun, list[int]], Values]

#: functions whose calls act on the world (a second evaluation would be seen)
SIDE_EFFECTS = frozenset({"log"})
_DICT = {dict}


class Unsupported(Exception):
    """A form the batch compiler does not take (the program runs per record)."""


def effectful(node: Any) -> bool:
    """Whether evaluating ``node`` changes anything (an assignment, ``del``, ``abort``, ``log``...)."""
    kind = type(node)
    if kind is Call:
        if node.name == "del" or node.name in SIDE_EFFECTS or node.closure is not None:
            return True
        return any(effectful(argument.value) for argument in node.arguments)
    if kind in (Literal, RegexLiteral, Variable):
        return False
    if kind is Query:
        return not isinstance(node.base, str) and effectful(node.base)
    if kind is Unary:
        return effectful(node.operand)
    if kind is Binary:
        return effectful(node.left) or effectful(node.right)
    if kind is ArrayLiteral:
        return any(effectful(item) for item in node.items)
    if kind is ObjectLiteral:
        return any(effectful(item) for _, item in node.items)
    if kind is Template:
        return False
    if kind is Block or kind is Group:
        return any(effectful(statement) for statement in node.statements)
    if kind is If:
        return effectful(node.predicate) or effectful(node.then) or (
            node.otherwise is not None and effectful(node.otherwise))
    return True  # Assign, Abort, Return, Noop


class BatchExpressions:
    """The expression half of the batch compiler (statements and calls in ``batch_compiler.py``)."""

    def __init__(self, notes: dict[tuple[int, str], tuple[Any, Any]]) -> None:
        self.notes = notes
        #: variable name -> offset of the program's last mention of it (a read there is its last)
        self.last_mentions: dict[str, int] = {}

    def note(self, node: Any, what: str) -> Any:
        entry = self.notes.get((id(node), what))
        if entry is None or entry[0] is not node:
            raise Unsupported(f"no {what} noted for {type(node).__name__}")
        return entry[1]

    def compiled(self, node: Any) -> Compiled:
        return self.note(node, "c")  # type: ignore[no-any-return]

    def kinds(self, node: Any) -> Kind:
        """The kinds the per-record compiler found for ``node`` (any when it noted none)."""
        entry = self.notes.get((id(node), "c"))
        return entry[1].type.kinds if entry is not None and entry[0] is node else Kind.ANY

    def call(self, node: Call) -> BatchEvaluator:
        raise NotImplementedError

    def block_value(self, node: Block) -> BatchEvaluator:
        raise NotImplementedError

    def expression(self, node: Any) -> BatchEvaluator:
        kind = type(node)
        if kind is Group and len(node.statements) == 1:
            return self.expression(node.statements[0])  # ( expression )
        if kind is not Template and kind is not Block and kind is not Group:
            compiled = self.compiled(node)
            if compiled.constant:
                return _constant(compiled.value)
        method = _DISPATCH.get(kind)
        if method is None:
            raise Unsupported(kind.__name__)
        return getattr(self, method)(node)  # type: ignore[no-any-return]

    # -- values -------------------------------------------------------------

    def array(self, node: ArrayLiteral) -> BatchEvaluator:
        items = [self.expression(item) for item in node.items]

        def array(run: BatchRun, sel: list[int]) -> Values:
            values = [item(run, sel) for item in items]
            if all(type(v) is Uniform for v in values):
                return Uniform([v.value for v in values])
            return [list(row) for row in zip(*map(spread, values))]

        return array

    def object(self, node: ObjectLiteral) -> BatchEvaluator:
        keys = [key for key, _ in node.items]
        items = [self.expression(item) for _, item in node.items]

        def object_(run: BatchRun, sel: list[int]) -> Values:
            values = [item(run, sel) for item in items]
            if all(type(v) is Uniform for v in values):
                return Uniform(dict(zip(keys, [v.value for v in values])))
            return [dict(zip(keys, row)) for row in zip(*map(spread, values))]

        return object_

    def template(self, node: Template) -> BatchEvaluator:
        pieces = [_constant(part) if isinstance(part, str) else self.variable(part) for part in node.parts]
        add = operations.add

        def concatenate(*values: Any) -> str:
            result = ""
            for value in values:
                result = add(result, value)
            return result

        return lambda run, sel: apply(concatenate, sel, [piece(run, sel) for piece in pieces])

    def variable(self, node: Variable) -> BatchEvaluator:
        """A whole read of a variable (its objects may be held elsewhere after it, see ``BatchRun.release``)."""
        slot = self.note(node, "slot")
        place, last = ("v", slot), self.last_mentions.get(node.name) == node.offset
        return lambda run, sel: run.release(place, run.variable(slot, sel), last)

    def query(self, node: Query) -> BatchEvaluator:
        segments = node.segments
        if isinstance(node.base, str):
            if node.base != EVENT or not segments or type(segments[0]) is not str:
                raise Unsupported("the metadata, the event's root or an index on it")
            return event_reader(segments)
        base = node.base
        if type(base) is Variable and segments:  # a read below it: no object of its own leaves
            slot = self.note(base, "slot")
            return navigated(lambda run, sel: run.variable(slot, sel), segments, self.kinds(base) == Kind.OBJECT)
        return navigated(self.expression(base), segments, self.kinds(base) == Kind.OBJECT)

    # -- operators ----------------------------------------------------------

    def unary(self, node: Unary) -> BatchEvaluator:
        operand = self.expression(node.operand)

        def negate(run: BatchRun, sel: list[int]) -> Values:
            values = operand(run, sel)
            if type(values) is Uniform:
                return Uniform(not values.value)
            return [not v for v in values]

        return negate

    def binary(self, node: Binary) -> BatchEvaluator:
        op = node.op
        left, right = self.expression(node.left), self.expression(node.right)
        if op == "??":
            if effectful(node.left):
                raise Unsupported("effects on the left of ??")
            return coalesce(left, right)
        if op == "&&":
            return _and(left, right, self.kinds(node.left) == Kind.BOOLEAN, self.kinds(node.right) == Kind.BOOLEAN)
        if op == "||":
            return _or(left, right)
        if op in ("==", "!="):
            right_node = self.compiled(node.right)
            return _equality(op == "!=", left, right, right_node)
        function: Callable[[Any, Any], Any] = _OPERATORS.get(op) or partial(operations.compare, op)
        return lambda run, sel: apply(function, sel, (left(run, sel), right(run, sel)))

    def if_value(self, node: If) -> BatchEvaluator:
        """An ``if`` whose value is used (no effects inside: checked by the caller)."""
        if effectful(node):
            raise Unsupported("an if with effects used as a value")
        test = self.expression(node.predicate)
        yes = self.block_value(node.then)
        no = self.expression(node.otherwise) if node.otherwise is not None else _constant(None)

        def choose(run: BatchRun, sel: list[int]) -> Values:
            flags = test(run, sel)
            if type(flags) is Uniform:
                return (yes if flags.value is True else no)(run, sel)
            chosen, others = split(sel, flags)  # the predicate is boolean (E102)
            return interleave(sel, flags, yes(run, chosen) if chosen else NULL, no(run, others) if others else NULL)

        return choose


def _constant(value: Any) -> BatchEvaluator:
    uniform = Uniform(value)
    return lambda run, sel: uniform


def event_reader(segments: tuple[str | int, ...]) -> BatchEvaluator:
    """``.a.b...``: the field's values for a selection (null where absent)."""
    first, rest = segments[0], segments[1:]
    if not rest:
        place = ("f", first)
        return lambda run, sel: run.release(place, run.values(first, sel), False)  # type: ignore[arg-type]
    return navigated(lambda run, sel: run.values(first, sel), rest)  # type: ignore[arg-type]


def navigated(base: BatchEvaluator, segments: tuple[str | int, ...], objects: bool = False) -> BatchEvaluator:
    """The values at ``segments`` below ``base``'s (null where a step does not exist).

    ``objects``: ``base``'s type is exactly object, so its values are dicts.
    """
    if not segments:
        return base
    step = _step(segments)
    key = segments[0] if len(segments) == 1 and type(segments[0]) is str else None

    def read(run: BatchRun, sel: list[int]) -> Values:
        values = base(run, sel)
        if type(values) is Uniform:
            return Uniform(step(values.value))
        if key is not None:
            if objects or run.types(values) == _DICT:
                return list(map(dict.get, values, repeat(key)))
            return [value.get(key) if type(value) is dict else None for value in values]
        return list(map(step, values))

    return read


def _step(segments: tuple[str | int, ...]) -> Callable[[Any], Any]:
    if len(segments) == 1 and type(segments[0]) is str:
        key = segments[0]
        return lambda value: value.get(key) if type(value) is dict else None
    return lambda value: get_path(value, segments)


def coalesce(left: BatchEvaluator, right: BatchEvaluator) -> BatchEvaluator:
    """``left ?? right``: right's value for the records left fails for (left has no effects)."""

    def coalesce(run: BatchRun, sel: list[int]) -> Values:
        values, ok, errors = attempt(left, run, sel)
        if not errors:
            return values
        failed = [i for i in sel if i in errors]
        return interleave(sel, [i not in errors for i in sel], values, right(run, failed))

    return coalesce


def attempt(evaluator: BatchEvaluator, run: BatchRun, sel: list[int]) -> tuple[Values, list[int], dict[int, Any]]:
    """(values for the records it did not fail for, those records, errors of the others).

    ``evaluator`` has no effects, so it may be evaluated again for fewer records.
    """
    errors: dict[int, Any] = {}
    current = sel
    while current:
        try:
            return evaluator(run, current), current, errors
        except BatchErrors as failure:
            errors.update(failure.errors)
            if failure.source is evaluator and failure.sel is not None:
                return failure.values, failure.sel, errors
            current = without(current, failure.errors)
    return NULL, current, errors


def _and(left: BatchEvaluator, right: BatchEvaluator, boolean: bool, right_boolean: bool) -> BatchEvaluator:
    """``&&`` (``boolean``/``right_boolean``: that side's type is exactly boolean, so its values are bools)."""

    def both(run: BatchRun, sel: list[int]) -> Values:
        firsts = left(run, sel)
        if type(firsts) is Uniform:
            first = firsts.value
            if first is False or first is None:
                return FALSE
            if first is not True:
                raise BatchErrors(dict.fromkeys(sel, _and_error(first, True)))
            return _and_right(right(run, sel), sel, right_boolean)
        if boolean or run.types(firsts) == {bool}:
            if False not in firsts:
                return _and_right(right(run, sel), sel, right_boolean)
            chosen = list(compress(sel, firsts))
            if not chosen:
                return FALSE
            return interleave(sel, firsts, _and_right(right(run, chosen), chosen, right_boolean), FALSE)
        errors = {i: _and_error(first, True) for i, first in zip(sel, firsts)
                  if first is not True and first is not False and first is not None}
        if errors:
            raise BatchErrors(errors)
        mask = [first is True for first in firsts]
        chosen = list(compress(sel, mask))
        if not chosen:
            return FALSE
        return interleave(sel, mask, _and_right(right(run, chosen), chosen, right_boolean), FALSE)

    return both


def _and_right(seconds: Values, sel: list[int], boolean: bool) -> Values:
    if type(seconds) is Uniform:
        second = seconds.value
        if second is True or second is False:
            return seconds
        if second is None:
            return FALSE
        raise BatchErrors(dict.fromkeys(sel, _and_error(second, False)))
    if boolean or types_of(seconds) == {bool}:
        return seconds
    errors = {i: _and_error(second, False) for i, second in zip(sel, seconds)
              if second is not True and second is not False and second is not None}
    if errors:
        raise BatchErrors(errors)
    return [second is True for second in seconds]


def _and_error(value: Any, left: bool) -> VrlRuntimeError:
    if left:
        return VrlRuntimeError(f"can't apply an AND to types {kind_name(value)} and boolean")
    return VrlRuntimeError(f"can't apply an AND to types boolean and {kind_name(value)}")


def _or(left: BatchEvaluator, right: BatchEvaluator) -> BatchEvaluator:
    def either(run: BatchRun, sel: list[int]) -> Values:
        firsts = left(run, sel)
        if type(firsts) is Uniform:
            first = firsts.value
            return right(run, sel) if first is None or first is False else firsts
        mask = [first is not None and first is not False for first in firsts]
        others = [i for i, flag in zip(sel, mask) if not flag]
        if not others:
            return firsts
        kept = [first for first, flag in zip(firsts, mask) if flag]
        return interleave(sel, mask, kept, right(run, others))

    return either


def _equality(negate: bool, left: BatchEvaluator, right: BatchEvaluator, right_compiled: Compiled) -> BatchEvaluator:
    if right_compiled.constant and type(right_compiled.value) is str:
        text = right_compiled.value

        def equal_text(run: BatchRun, sel: list[int]) -> Values:
            values = left(run, sel)
            if type(values) is Uniform:
                return Uniform((values.value == text) is not negate)
            if negate:
                return [v != text for v in values]
            return [v == text for v in values]

        return equal_text
    equal = operations.equal
    function = (lambda a, b: not equal(a, b)) if negate else equal
    return lambda run, sel: apply(function, sel, (left(run, sel), right(run, sel)))


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operations.add, "-": operations.subtract, "*": operations.multiply, "/": operations.divide,
    "|": operations.merge_objects}

#: node type -> the method compiling it (by name: calls and blocks are compiled in batch_compiler.py)
_DISPATCH: dict[type, str] = {
    ArrayLiteral: "array", ObjectLiteral: "object", Template: "template", Variable: "variable", Query: "query",
    Unary: "unary", Binary: "binary", Call: "call", If: "if_value", Block: "block_value", Group: "block_value",
}

__all__ = ["BatchEvaluator", "BatchExpressions", "Unsupported", "effectful", "event_reader"]
