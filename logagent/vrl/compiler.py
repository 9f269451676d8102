"""Compiling statements and function calls; the whole compiler.

Function calls resolve through ``logagent.vrl.stdlib.FUNCTIONS`` only;
``del`` and ``exists`` take a path, not a value, and are compiled here
(``unnest``, the third such function, in ``unnest.py``).
"""

from __future__ import annotations

import difflib
from typing import Any

from msgspec import structs

from .ast import (EVENT, Abort, ArrayLiteral, Assign, Binary, Block, Call, Group, If, Literal, Noop, ObjectLiteral,
                  Query, RegexLiteral, Return, Template, Unary, Variable)
from .calls import compile_call
from .deletion import deleter, path_arguments
from .expressions import Compiled, Evaluator, ExpressionCompiler, constant
from .types import type_of_constant
from .runtime import Aborted, Frame, Returned, VrlRuntimeError, default_of, delete_path, has_path, set_path
from .types import BOOLEAN, NULL, OBJECT, Type, deleted, with_field
from .value import Kind, kind_names


class Compiler(ExpressionCompiler):
    def compile(self, node: Any) -> Compiled:
        method = _DISPATCH.get(type(node))
        if method is None:
            raise AssertionError(f"unknown node {node!r}")
        compiled = method(self, node)
        if compiled.fallible and compiled.failure is None:  # the first fallible point of its expression
            compiled = structs.replace(compiled, failure=self.diagnostics.error(
                "E100", "unhandled error", node.offset, node.end, _UNHANDLED))
        self.notes[id(node), "c"] = (node, compiled)
        return compiled

    def compile_statements(self, statements: tuple[Any, ...]) -> Compiled:
        compiled = []
        for statement in statements:
            item = self.compile(statement)
            if item.fallible and not isinstance(statement, Assign):
                raise item.failure
            compiled.append(item)
        if not compiled:
            return constant(None)
        runs = tuple(item.run for item in compiled)
        if len(runs) == 1:
            return compiled[0]

        def sequence(frame: Frame) -> Any:
            result = None
            for run in runs:
                result = run(frame)
            return result

        return Compiled(sequence, compiled[-1].type)

    def compile_block(self, node: Block) -> Compiled:
        self.types.enter()
        try:
            return self.compile_statements(node.statements)
        finally:
            self.types.leave()

    def compile_group(self, node: Group) -> Compiled:
        if len(node.statements) == 1:  # ( expression ): its value, its failure unhandled yet
            return self.compile(node.statements[0])
        return self.compile_statements(node.statements)  # no scope of its own: its variables live on, as in VRL

    def compile_if(self, node: If) -> Compiled:
        predicate = self.compile(node.predicate)
        if predicate.fallible:
            failure = predicate.failure
            raise self.diagnostics.error(failure.code, "fallible predicate", failure.offset, failure.end,
                                         failure.labels, failure.fix)
        if predicate.type.kinds & ~Kind.BOOLEAN or not predicate.type.kinds:
            raise self.diagnostics.error("E102", "non-boolean predicate", node.predicate.offset, node.predicate.end,
                                         ("this predicate must resolve to a boolean",
                                          f"instead it resolves to {kind_names(predicate.type.kinds)}"))
        before = self.types.snapshot()
        then = self.compile_block(node.then)
        after_then = self.types.snapshot()
        self.types.restore(before)
        otherwise = self.compile(node.otherwise) if node.otherwise is not None else constant(None)
        after_else = self.types.snapshot()
        self.types.join([after_then, after_else])
        test, yes, no = predicate.run, then.run, otherwise.run
        if node.otherwise is None:
            def branch(frame: Frame) -> Any:
                return yes(frame) if test(frame) is True else None

            return Compiled(branch, then.type.union(NULL))

        def branch(frame: Frame) -> Any:
            return yes(frame) if test(frame) is True else no(frame)

        return Compiled(branch, then.type.union(otherwise.type if node.otherwise is not None else NULL))

    def compile_abort(self, node: Abort) -> Compiled:
        if node.message is None:
            def abort(frame: Frame) -> Any:
                raise Aborted("aborted")

            return Compiled(abort, NEVER)
        message = self.compile(node.message)
        if message.fallible:
            raise self.diagnostics.error("E631", "unhandled fallible expression", node.message.offset,
                                         node.message.end, ("abort only accepts an infallible expression argument",))
        if message.type.kinds != Kind.BYTES:
            raise self.diagnostics.error("E300", "non-string abort message", node.message.offset, node.message.end,
                                         ("abort only accepts an expression argument resolving to a string",
                                          f"this expression resolves to {kind_names(message.type.kinds)}"))
        run = message.run

        def abort_with(frame: Frame) -> Any:
            raise Aborted(run(frame))

        return Compiled(abort_with, NEVER)

    def compile_return(self, node: Return) -> Compiled:
        value = self.compile(node.value)
        run = value.run

        def leave(frame: Frame) -> Any:
            raise Returned(run(frame))

        return Compiled(leave, value.type, value.fallible)

    def compile_call(self, node: Call) -> Compiled:
        # closures and unnest are rare in agent programs: loaded by the first program that has one
        if node.closure is not None:
            from .closures import compile_closure_call  # noqa: PLC0415

            return compile_closure_call(self, node)
        if node.name in ("del", "exists"):
            return self.compile_path_function(node)
        if node.name == "unnest":
            from .unnest import compile_unnest  # noqa: PLC0415

            return compile_unnest(self, node)
        return compile_call(self, node)

    def compile_path_function(self, node: Call) -> Compiled:
        argument, compact_argument = path_arguments(self, node)
        if not _assignable_query(argument.value) or (node.name == "del" and isinstance(argument.value, Variable)):
            raise self.diagnostics.error("E610", "function compilation error: error[E400] unexpected expression type",
                                         node.offset, node.end, (
                                             f'unexpected expression for argument "{"target" if node.name == "del" else "field"}"',
                                             "expected: query"))
        target = argument.value
        root, slot, segments = self.target_of(target)
        if node.name == "exists":
            return self.compile_exists(target, root, segments)
        delete = deleter(self, target, compact_argument, lambda prefix: _deleter(root, slot, prefix))
        kind = self.compile(target).type
        self.writes.add((root, segments))
        # as VRL, the type is either outcome's unless compact is a constant (even when it is not given)
        given = compact_argument.value if compact_argument is not None else None
        compact = given.value if isinstance(given, Literal) and type(given.value) is bool else None
        if root in (".", "%") and segments:
            self.types.roots[root] = deleted(self.types.roots[root], segments, compact)
        elif segments:
            # VRL leaves a variable's type as it was (at run time its own checks see the null); the
            # closures rely on types, so here the variable may be either
            found = self.types.lookup(target.base.name)
            before = found[1] if found is not None else NULL
            self.types.assign_variable(target.base.name, before.union(deleted(before, segments, compact)))
        return Compiled(delete, kind)

    def compile_exists(self, target: Any, root: str, segments: tuple[str | int, ...]) -> Compiled:
        if not segments:
            self.compile(target)
            return Compiled(lambda frame: True, BOOLEAN)
        if root == EVENT and len(segments) == 1 and type(segments[0]) is str:
            self.reads.add((root, segments))  # the field alone, not the whole event
            key = segments[0]
            return Compiled(lambda frame: type(frame.event) is dict and key in frame.event, BOOLEAN)
        getter = self.compile(_parent(target)).run
        last = segments[-1:]
        return Compiled(lambda frame: has_path(getter(frame), last), BOOLEAN)

    # -- assignment ----------------------------------------------------------

    def target_of(self, node: Any) -> tuple[str, int, tuple[str | int, ...]]:
        """(".", "%" or "var", variable slot or -1, segments) of an assignment target."""
        if isinstance(node, Variable):
            target: tuple[str, int, tuple[str | int, ...]] = ("var", self.variable_slot(node.name), ())
        elif isinstance(node.base, Variable):
            target = ("var", self.variable_slot(node.base.name), node.segments)
        else:
            target = (node.base, -1, node.segments)
        self.notes[id(node), "target"] = (node, target)
        return target

    def variable_slot(self, name: str) -> int:
        found = self.types.lookup(name)
        return found[0] if found is not None else self.types.assign_variable(name, NULL)

    def assign_type(self, node: Any, kind: Type) -> None:
        if isinstance(node, Variable):
            self.types.assign_variable(node.name, kind)
        elif isinstance(node, Query) and isinstance(node.base, Variable):
            found = self.types.lookup(node.base.name)
            self.types.assign_variable(node.base.name, with_field(found[1] if found else NULL, node.segments, kind))
        elif isinstance(node, Query):
            self.types.assign_path(node.base, node.segments, kind)

    def compile_assign(self, node: Assign) -> Compiled:
        value = self.compile(node.value)
        if isinstance(node.target, Noop) and node.error_target is None:
            raise self.diagnostics.error("E640", "unnecessary no-op assignment", node.value.offset, node.value.end,
                                         ("this no-op assignment has no effect",),
                                         fix="assign to a path or variable here, or remove the assignment")
        if node.op == "|=":
            current = self.compile(node.target)
            bad = [n for n, c in ((node.target, current), (node.value, value)) if c.type.kinds != Kind.OBJECT]
            if bad:
                raise self.diagnostics.error("E652", "only objects can be merged", bad[0].offset, bad[0].end,
                                             ("this expression must resolve to an object",))
            value = self.compile(Binary("|", node.target, node.value, node.offset, node.end, node.offset))
        if node.error_target is None and value.fallible:
            target_text = self.text(node.target)
            raise self.diagnostics.error(
                "E103", "unhandled fallible assignment", node.value.offset, node.value.end,
                ("this expression is fallible because at least one argument's type cannot be verified to be valid",),
                fix=f"{target_text}, err = {self.text(node.value)}")
        if node.error_target is not None and not value.fallible:
            raise self.diagnostics.error("E104", "unnecessary error assignment", node.error_target.offset,
                                         node.error_target.end, ("this error assignment is unnecessary",),
                                         fix=f"{self.text(node.target)} = {self.text(node.value)}")
        # with an error target the value may be its type's default instead (an empty object has no known fields)
        store = self.store(node.target, value.type if node.error_target is None else
                           value.type.union(type_of_constant(default_of(value.type.kinds))))
        if node.error_target is None:
            run = value.run
            top = _top_level_key(self.target_of(node.target)) if not isinstance(node.target, Noop) else None
            if top is not None:
                def assign_top(frame: Frame) -> Any:
                    result = run(frame)
                    try:
                        frame.event[top] = result
                    except TypeError:  # the event is not an object (`. = "text"` before): VRL makes it one
                        frame.event = {top: result}
                    return result

                return Compiled(assign_top, value.type)

            def assign(frame: Frame) -> Any:
                result = run(frame)
                store(frame, result)
                return result

            return Compiled(assign, value.type)
        store_error = self.store(node.error_target, Type(Kind.BYTES | Kind.NULL))
        return Compiled(_assign_with_error(value.run, store, store_error, default_of(value.type.kinds)), value.type)

    def store(self, node: Any, kind: Type) -> Any:
        if isinstance(node, Noop):
            return lambda frame, value: None
        root, slot, segments = self.target_of(node)
        self.assign_type(node, kind)
        if root != "var":
            self.writes.add((root, segments))
        return _storer(root, slot, segments)


#: the type of ``abort``: it gives no value (a branch that aborts adds nothing to the type of an ``if``)
NEVER = Type(Kind(0))
_UNHANDLED = ("expression can result in runtime error", "handle the error case to ensure runtime success")


def _assign_with_error(run: Evaluator, store: Any, store_error: Any, default: Any) -> Evaluator:
    def assign(frame: Frame) -> Any:
        try:
            result = run(frame)
        except VrlRuntimeError as exc:
            store(frame, default)
            store_error(frame, str(exc))
            return default
        store(frame, result)
        store_error(frame, None)
        return result

    return assign


def _storer(root: str, slot: int, segments: tuple[str | int, ...]) -> Any:
    if root == "var":
        if not segments:
            def store_variable(frame: Frame, value: Any) -> None:
                frame.variables[slot] = value

            return store_variable

        def store_in_variable(frame: Frame, value: Any) -> None:
            frame.variables[slot] = set_path(frame.variables[slot], segments, value)

        return store_in_variable
    attribute = "event" if root == EVENT else "metadata"
    if not segments:
        def store_root(frame: Frame, value: Any) -> None:
            if type(value) is dict:
                setattr(frame, attribute, dict(value))
            elif root == EVENT:  # any value, as in VRL (the remap transform makes records of it as Vector does)
                frame.event = value
            else:
                raise VrlRuntimeError("the metadata root must be an object")

        return store_root
    first, rest = segments[0], segments[1:]
    if type(first) is str and not rest and root == EVENT:
        def store_event_top(frame: Frame, value: Any) -> None:
            try:
                frame.event[first] = value
            except TypeError:  # the event is not an object (`. = "text"` before): VRL makes it one
                frame.event = {first: value}

        return store_event_top
    if type(first) is str and not rest:
        def store_top(frame: Frame, value: Any) -> None:
            getattr(frame, attribute)[first] = value

        return store_top
    if type(first) is str:
        def store_nested(frame: Frame, value: Any) -> None:
            target = getattr(frame, attribute)
            if type(target) is not dict:  # the event is not an object (`. = "text"` before): VRL makes it one
                target = {}
                setattr(frame, attribute, target)
            target[first] = set_path(target.get(first), rest, value)

        return store_nested
    return lambda frame, value: None  # an index on the root object names nothing


def _deleter(root: str, slot: int, segments: tuple[str | int, ...]) -> Evaluator:
    def delete(frame: Frame) -> Any:
        if root == "var":
            if not segments:
                value, frame.variables[slot] = frame.variables[slot], None
                return value
            frame.variables[slot], removed = delete_path(frame.variables[slot], segments)
            return removed
        attribute = "event" if root == EVENT else "metadata"
        target = getattr(frame, attribute)
        if not segments:
            setattr(frame, attribute, {})
            return target
        first = segments[0]
        if type(first) is not str or type(target) is not dict:
            return None
        if len(segments) == 1:
            return target.pop(first, None)
        if first not in target:
            return None
        inner, removed = delete_path(target[first], segments[1:])
        target[first] = inner
        return removed

    return delete


def _top_level_key(target: tuple[str, int, tuple[str | int, ...]]) -> str | None:
    """The key of an assignment target that is a top-level field of the event."""
    root, _, segments = target
    return segments[0] if root == EVENT and len(segments) == 1 and type(segments[0]) is str else None


def _assignable_query(node: Any) -> bool:
    return isinstance(node, Variable) or (isinstance(node, Query) and (
        isinstance(node.base, str) or isinstance(node.base, Variable)))


def _parent(node: Any) -> Any:
    if node.segments[:-1] or isinstance(node.base, str):
        return Query(node.base, node.segments[:-1], node.offset, node.end)
    return node.base


def suggestion(name: str, names: Any) -> str | None:
    close = difflib.get_close_matches(name, sorted(names), n=1)
    return close[0] if close else None


_DISPATCH: dict[type, Any] = {
    Literal: Compiler.compile_literal, RegexLiteral: Compiler.compile_regex, Template: Compiler.compile_template,
    ArrayLiteral: Compiler.compile_array, ObjectLiteral: Compiler.compile_object,
    Variable: Compiler.compile_variable, Query: Compiler.compile_query, Unary: Compiler.compile_unary,
    Binary: Compiler.compile_binary, Call: Compiler.compile_call, Assign: Compiler.compile_assign,
    Group: Compiler.compile_group, Block: Compiler.compile_block, If: Compiler.compile_if, Abort: Compiler.compile_abort,
    Return: Compiler.compile_return,
}
__all__ = ["Compiler", "OBJECT", "suggestion"]
