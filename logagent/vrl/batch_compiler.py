"""A program compiled to run over a whole batch of records at once: ``compile_batch(tree, compiler)``.

The per-record compiler (``compiler.py``) has checked the program and noted
what it found about each node; this builds, from the same tree, statements
``f(run, sel) -> sel`` (the records still running after it) over columns (see
``batch_run.py``). Per record the work is then what list comprehensions and
the functions themselves cost, not a tree of closure calls: an ``if`` splits
the selection, a function runs over a list of values, a value the file
context gives every record is computed once.

A record for which an expression fails leaves the run with the error (the
statement is evaluated again for the others, which it may be: it has no
effects before its store). Where a statement with effects fails for some
records, the batch runs again from the start without them (``Restart``).
Forms this does not take (closures, ``return``, the event's root, metadata,
``log``) make ``compile_batch`` return None: the program runs per record.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import Any

from . import operations
from .ast import EVENT, Abort, Assign, Block, Call, Group, If, Noop, Return
from .batch_expressions import BatchEvaluator, BatchExpressions, Unsupported, attempt, effectful, event_reader, \
    navigated
from .batch_run import ABORTED, FAILED, KEEP, REMOVED, BatchRun, Source
from .batch_values import NULL, TRUE, BatchErrors, Restart, Uniform, Values, apply, interleave, merge_sorted, split, \
    NoProgress, spread, without
from .batch_calls import compile_batch_call
from .batch_functions import called_names, last_mentions
from .deletion import path_arguments
from .runtime import Aborted, default_of, delete_path, has_path, set_path

BatchStatement = Callable[[BatchRun, list[int]], list[int]]
Store = Callable[[BatchRun, list[int], Values], None]


class BatchProgram:
    """``run(source)``: the program over every record of ``source``; returns the finished BatchRun."""

    __slots__ = ("_body", "_slots")

    def __init__(self, body: BatchStatement, slots: int) -> None:
        self._body = body
        self._slots = slots

    def run(self, source: Source) -> BatchRun:
        failed: dict[int, tuple[str, Exception]] = {}
        while True:
            run = BatchRun(source, self._slots, failed)
            try:
                self._body(run, [i for i in range(run.n) if i not in failed] if failed else list(range(run.n)))
                return run
            except Restart as restart:
                before = len(failed)
                failed = dict(run.failed)
                for i, error in restart.errors.items():
                    failed.setdefault(i, (FAILED, error))
                if len(failed) == before:
                    raise NoProgress("a restarted batch failed for no record it had not failed for") from None


def compile_batch(statements: tuple[Any, ...], compiler: Any) -> BatchProgram | None:
    """The batch form of a program the per-record ``compiler`` has just compiled; None where unsupported."""
    try:
        body = BatchCompiler(compiler, called_names(statements), statements).statements(statements)
    except Unsupported:
        return None
    return BatchProgram(body, compiler.types.slots)


class BatchCompiler(BatchExpressions):
    def __init__(self, compiler: Any, names: frozenset[str], statements: tuple[Any, ...]) -> None:
        super().__init__(compiler.notes)
        self.last_mentions = last_mentions(statements)
        self.diagnostics = compiler.diagnostics
        #: every function the program calls
        self.names = names

    def statements(self, nodes: tuple[Any, ...]) -> BatchStatement:
        steps = [self.statement(node) for node in nodes]

        def block(run: BatchRun, sel: list[int]) -> list[int]:
            for step in steps:
                if not sel:
                    break
                sel = step(run, sel)
            return sel

        return steps[0] if len(steps) == 1 else block

    def statement(self, node: Any) -> BatchStatement:
        kind = type(node)
        if kind is Assign:
            return self.assign(node)
        if kind is If:
            return self.branch(node)
        if kind is Block or (kind is Group and len(node.statements) > 1):
            return self.statements(node.statements) if node.statements else lambda run, sel: sel
        if kind is Group:
            return self.statement(node.statements[0])
        if kind is Abort:
            return self.abort(node)
        if kind is Return:
            raise Unsupported("return")
        if kind is Call and node.name == "del" and node.closure is None:
            value = self.delete(*self._path_target(node), value_used=False)
        else:
            value = self.expression(node)

        def evaluate(run: BatchRun, sel: list[int]) -> None:
            value(run, sel)

        return guarded(evaluate, not effectful(node))

    def block_value(self, node: Block | Group) -> BatchEvaluator:
        """A block or a group of several expressions as a value (no effects: checked by the callers)."""
        if effectful(node):
            raise Unsupported("effects in a block used as a value")
        values = [self.expression(statement) for statement in node.statements]

        def last(run: BatchRun, sel: list[int]) -> Values:
            result = NULL
            for value in values:
                result = value(run, sel)
            return result

        return last

    def call(self, node: Call) -> BatchEvaluator:
        if node.closure is not None:
            raise Unsupported("a closure")
        if node.name in ("del", "exists"):
            where = self._path_target(node)
            return self.exists(*where) if node.name == "exists" else self.delete(*where)
        return compile_batch_call(self, node)

    def _path_target(self, node: Call) -> tuple[str, int, tuple[str | int, ...]]:
        argument, compact = path_arguments(self, node)
        if compact is not None:
            value = self.compiled(compact.value)
            if not value.constant or value.value is not False:
                raise Unsupported("del(..., compact: true)")
        return self.note(argument.value, "target")  # type: ignore[no-any-return]

    # -- statements ---------------------------------------------------------

    def assign(self, node: Assign) -> BatchStatement:
        value = self.expression(node.value)
        if node.op == "|=":
            if node.error_target is not None:
                raise Unsupported("|= with an error target")
            value = merged(self.expression(node.target), value)
        store = self.store(node.target)
        if node.error_target is None:
            def assign(run: BatchRun, sel: list[int]) -> None:
                store(run, sel, value(run, sel))

            return guarded(assign, not effectful(node.value))
        if effectful(node.value):
            raise Unsupported("effects in an assignment with an error target")
        store_error = self.store(node.error_target)
        default = Uniform(default_of(self.compiled(node.value).type.kinds))

        def assign_with_error(run: BatchRun, sel: list[int]) -> list[int]:
            values, ok, errors = attempt(value, run, sel)
            if not errors:
                store(run, sel, values)
                store_error(run, sel, NULL)
                return sel
            flags = [i not in errors for i in sel]
            store(run, sel, interleave(sel, flags, values, default))
            store_error(run, sel, [None if flag else str(errors[i]) for i, flag in zip(sel, flags)])
            return sel

        return assign_with_error

    def store(self, target: Any) -> Store:
        if isinstance(target, Noop):
            return lambda run, sel, values: None
        root, slot, segments = self.note(target, "target")
        if root == "var":
            if not segments:
                def store_variable(run: BatchRun, sel: list[int], values: Values) -> None:
                    run.assign(slot, sel, values)

                return store_variable

            def store_in_variable(run: BatchRun, sel: list[int], values: Values) -> None:
                current = run.variable(slot, sel)
                run.assign(slot, sel, _paired(set_path, current, segments, values))

            return store_in_variable
        if root != EVENT or not segments or type(segments[0]) is not str:
            raise Unsupported("a store into the metadata or the event's root")
        first, rest = segments[0], segments[1:]
        if not rest:
            return lambda run, sel, values: run.write(first, sel, values)  # type: ignore[arg-type]

        def store_nested(run: BatchRun, sel: list[int], values: Values) -> None:
            current = run.values(first, sel)  # type: ignore[arg-type]
            run.write(first, sel, _paired(set_path, current, rest, values))  # type: ignore[arg-type]

        return store_nested

    def branch(self, node: If) -> BatchStatement:
        if effectful(node.predicate):
            raise Unsupported("effects in a predicate")
        test = self.expression(node.predicate)
        yes = self.statements(node.then.statements) if node.then.statements else None
        no = self.statement(node.otherwise) if node.otherwise is not None else None

        def branch(run: BatchRun, sel: list[int]) -> list[int]:
            flags, sel, errors = attempt(test, run, sel)
            if errors:
                run.fail(errors)
            if not sel:
                return sel
            if type(flags) is Uniform:
                step = yes if flags.value is True else no
                return step(run, sel) if step is not None else sel
            chosen, others = split(sel, flags)  # the predicate is boolean (E102)
            count = len(chosen) + len(others)
            if chosen and yes is not None:
                chosen = yes(run, chosen)
            if others and no is not None:
                others = no(run, others)
            if len(chosen) + len(others) == count:
                return sel  # every record goes on: the same selection (pending writes stay matched)
            return merge_sorted(chosen, others)

        return branch

    def abort(self, node: Abort) -> BatchStatement:
        if node.message is None:
            aborted = Aborted("aborted")

            def abort(run: BatchRun, sel: list[int]) -> list[int]:
                run.fail(dict.fromkeys(sel, aborted), ABORTED)
                return []

            return abort
        if effectful(node.message):
            raise Unsupported("effects in an abort message")
        message = self.expression(node.message)

        def abort_with(run: BatchRun, sel: list[int]) -> list[int]:
            values, ok, errors = attempt(message, run, sel)
            if errors:
                run.fail(errors)
            run.fail({i: Aborted(text) for i, text in zip(ok, spread(values))}, ABORTED)
            return []

        return abort_with

    # -- del and exists -----------------------------------------------------

    def exists(self, root: str, slot: int, segments: tuple[str | int, ...]) -> BatchEvaluator:
        if not segments:
            return lambda run, sel: TRUE
        if root == EVENT and (type(segments[0]) is not str):
            raise Unsupported("exists of an index on the event's root")
        if root == EVENT and len(segments) == 1:
            key = segments[0]

            return lambda run, sel: run.exists(key, sel)  # type: ignore[arg-type]
        if root == EVENT:
            parent = event_reader(segments[:-1])
        elif root == "var":
            parent = navigated(self._variable(slot), segments[:-1])
        else:
            raise Unsupported("exists in the metadata")
        last = segments[-1:]

        def has(run: BatchRun, sel: list[int]) -> Values:
            values = parent(run, sel)
            if type(values) is Uniform:
                return Uniform(has_path(values.value, last))
            return [has_path(v, last) for v in values]

        return has

    def delete(self, root: str, slot: int, segments: tuple[str | int, ...], value_used: bool = True) -> BatchEvaluator:
        """``del``; ``value_used`` False: a statement, the values removed are not wanted."""
        if root == "var":
            if not segments:
                def delete_variable(run: BatchRun, sel: list[int]) -> Values:
                    removed = run.variable(slot, sel)
                    run.assign(slot, sel, NULL)
                    return removed

                return delete_variable

            place = ("v", slot)

            def delete_in_variable(run: BatchRun, sel: list[int]) -> Values:
                kept, removed = _deleted(run, run.variable(slot, sel), segments, value_used, place)
                run.assign(slot, sel, kept)
                return removed

            return delete_in_variable
        if root != EVENT or not segments or type(segments[0]) is not str:
            raise Unsupported("del of the metadata or the event's root")
        first, rest = segments[0], segments[1:]
        if not rest:
            def delete_field(run: BatchRun, sel: list[int]) -> Values:
                removed = run.values(first, sel)  # type: ignore[arg-type]
                run.write(first, sel, NULL, REMOVED)  # type: ignore[arg-type]
                return removed

            return delete_field

        place = ("f", first)

        def delete_nested(run: BatchRun, sel: list[int]) -> Values:
            kept, removed = _deleted(run, run.values(first, sel), rest, value_used, place)  # type: ignore[arg-type]
            run.write(first, sel, kept, KEEP)  # type: ignore[arg-type]
            return removed

        return delete_nested

    def _variable(self, slot: int) -> BatchEvaluator:
        return lambda run, sel: run.variable(slot, sel)


def guarded(body: Callable[[BatchRun, list[int]], None], atomic: bool) -> BatchStatement:
    """A statement: the records it fails for leave the run (``atomic``: nothing was changed before it failed)."""

    def statement(run: BatchRun, sel: list[int]) -> list[int]:
        while sel:
            try:
                body(run, sel)
                return sel
            except BatchErrors as failure:
                if not atomic:
                    raise Restart(failure.errors) from None
                run.fail(failure.errors)
                sel = without(sel, failure.errors)
        return sel

    return statement


def merged(current: BatchEvaluator, value: BatchEvaluator) -> BatchEvaluator:
    """``target |= value``: the object merge of the target's value and the value."""
    return lambda run, sel: apply(operations.merge_objects, sel, (current(run, sel), value(run, sel)))


def _paired(function: Callable[[Any, Any, Any], Any], current: Values, segments: Any, values: Values) -> Values:
    """``function(current, segments, value)`` record by record (once when both are uniform)."""
    if type(current) is Uniform and type(values) is Uniform:
        return Uniform(function(current.value, segments, values.value))
    return [function(c, segments, v) for c, v in zip(spread(current), spread(values))]


def _deleted(run: BatchRun, current: Values, segments: tuple[str | int, ...], value_used: bool = True,
             place: Any = None) -> tuple[Values, Values]:
    """(values without the path, the values removed; null when not ``value_used``).

    The dicts of a ``place`` that owns them (``BatchRun.owned``) lose the key in place, and stay its own.
    """
    if type(current) is Uniform:
        kept, removed = delete_path(current.value, segments)
        return Uniform(kept), Uniform(removed)
    if len(segments) == 1 and type(segments[0]) is str and run.types(current) == {dict}:
        key = segments[0]
        if place in run.owned:  # one pass: each dict gives up the key (a method through map is called fast)
            popped = list(map(dict.pop, current, repeat(key), repeat(None)))
            return run.give(current), popped if value_used else NULL
        removed = list(map(dict.get, current, repeat(key))) if value_used else NULL
        holding = list(map(dict.__contains__, current, repeat(key)))
        if True not in holding:
            return current, removed
        if False not in holding:  # copies made in C; a loop deletes (a slot wrapper through map costs more)
            kept = list(map(dict.copy, current))
            for copy in kept:
                del copy[key]
            return kept, removed
        return [_without_key(value, key) if has else value for value, has in zip(current, holding)], removed
    pairs = [delete_path(value, segments) for value in current]
    return [kept for kept, _ in pairs], [removed for _, removed in pairs]


def _without_key(value: dict[str, Any], key: str) -> dict[str, Any]:
    copy = dict(value)
    del copy[key]
    return copy
