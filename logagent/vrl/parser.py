"""Recursive-descent parser for VRL programs.

Operator precedence, lowest first, as Vector's VRL has it (checked against
vrl-python): ``??``; ``||`` and ``&&`` (one level, left to right);
comparisons ``== != < <= > >=`` (not chainable, E650); ``|`` (object merge);
``+ -``; ``* /``; prefix ``!``; then literals, paths, calls, ``if``,
blocks, ``( ... )``. A statement is an expression or an assignment
(``target = value``, ``target, err = value``, ``target |= object``; the value
of ``=`` may be an assignment: ``.a = .b = 1``), ended by a line break or
``;``. An if's predicate may be a group ``(a = f(); a == 1)``.
"""

from __future__ import annotations

from typing import Any

from .ast import (EVENT, Abort, Argument, ArrayLiteral, Assign, Binary, Block, Call, Closure, Group, If, Literal, Node,
                  Noop, ObjectLiteral, Program, Query, RegexLiteral, Return, Template, Unary, Variable)
from .diagnostic import Diagnostics, VrlError
from .lexer import (EOF, FLOAT, IDENT, INTEGER, NEWLINE, OP, PATH, RAW, REGEX, STRING, TEMPLATE, TIMESTAMP, Token,
                    tokenize)
from .timestamps import parse_rfc3339
from .value import Timestamp

_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
_ASSIGN_OPS = frozenset({"=", "|="})
_EXPECTED_VALUE = ('expected one of: "identifier", "string literal", "integer literal", "float literal", '
                   '"path literal", "function call", "if", "null", "true", "false", "abort", "!", "[", "{", "("')


def parse_program(source: str, diagnostics: Diagnostics) -> Program:
    return _Parser(source, diagnostics).program()


class _Tokens:
    """The token stream with one token of lookahead (and more where VRL's grammar needs it)."""

    def __init__(self, source: str, diagnostics: Diagnostics) -> None:
        self.source = source
        self.diagnostics = diagnostics
        self.tokens = tokenize(source, diagnostics)
        self.index = 0

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        if token.kind != EOF:
            self.index += 1
        return token

    def is_op(self, *ops: str) -> bool:
        token = self.current
        return token.kind == OP and token.value in ops

    def skip_newlines(self) -> None:
        while self.current.kind == NEWLINE:
            self.index += 1

    def unexpected(self, expected: str) -> Exception:
        token = self.current
        if token.kind == EOF:
            return self.diagnostics.error("E204", "syntax error", token.offset, token.end,
                                          (f"unexpected end of program; {expected}",))
        return self.diagnostics.syntax(token.offset, f"unexpected {self.source[token.offset:token.end]!r}; {expected}",
                                       token.end)

    def expect_op(self, op: str) -> Token:
        if not self.is_op(op):
            raise self.unexpected(f'expected "{op}"')
        return self.advance()


class _Parser(_Tokens):
    # -- statements ----------------------------------------------------------

    def program(self) -> Program:
        statements = self.statements(closing=None)
        return Program(tuple(statements))

    def statements(self, closing: str | None) -> list[Node]:
        statements: list[Node] = []
        while True:
            self.skip_newlines()
            if self.is_op(";") and statements:
                self.advance()
                self.skip_newlines()
            if self.is_op(";"):  # as VRL: an empty statement is an error
                raise self.unexpected("expected a statement")
            if self.current.kind == EOF if closing is None else self.is_op(closing):
                return statements
            if self.current.kind == EOF:
                raise self.unexpected(f'expected "{closing}"')
            statements.append(self.statement())
            if not (self.current.kind in (NEWLINE, EOF) or self.is_op(";")
                    or (closing is not None and self.is_op(closing))):
                raise self.unexpected('expected ";" or a line break between statements')

    def statement(self) -> Node:
        start = self.current
        if start.kind == IDENT and start.value == "_" and self.peek().kind == OP and self.peek().value in (",", "="):
            self.advance()
            target: Node = Noop(start.offset, start.end)
        else:
            target = self.expression()
        if self.is_op(",") and _assignable(target):
            self.advance()
            error_token = self.current
            error_target = self.expression()
            if not _assignable(error_target):
                raise self.diagnostics.syntax(error_token.offset, "expected a path or variable to assign the error to")
            if not self.is_op("="):
                raise self.unexpected('expected "="')
            self.advance()
            self.skip_newlines()
            value = self.statement()
            return Assign(target, error_target, "=", value, start.offset, value.end)  # type: ignore[arg-type]
        if self.current.kind == OP and self.current.value in _ASSIGN_OPS:
            if not _assignable(target):
                raise self.diagnostics.syntax(self.current.offset, "only paths and variables can be assigned to")
            op = self.advance().value
            self.skip_newlines()
            value = self.statement() if op == "=" else self.expression()
            return Assign(target, None, op, value, start.offset, value.end)  # type: ignore[arg-type]
        if isinstance(target, Noop):
            raise self.unexpected('expected "="')
        return target

    # -- expressions ---------------------------------------------------------

    def expression(self) -> Node:
        node = self.logical()
        while self.is_op("??"):
            op = self.advance()
            self.skip_newlines()
            right = self.logical()
            node = Binary("??", node, right, node.offset, right.end, op.offset)
        return node

    def logical(self) -> Node:
        node = self.comparison()
        while self.is_op("&&", "||"):
            op = self.advance()
            self.skip_newlines()
            right = self.comparison()
            node = Binary(op.value, node, right, node.offset, right.end, op.offset)
        return node

    def comparison(self) -> Node:
        node = self.merge()
        if self.current.kind == OP and self.current.value in _COMPARISONS:
            op = self.advance()
            self.skip_newlines()
            right = self.merge()
            node = Binary(op.value, node, right, node.offset, right.end, op.offset)
            if self.current.kind == OP and self.current.value in _COMPARISONS:
                token = self.current
                raise self.diagnostics.error("E650", "comparison operators can't be chained together",
                                             token.offset, token.end)
        return node

    def merge(self) -> Node:
        return self._left_assoc(("|",), self.additive)

    def additive(self) -> Node:
        return self._left_assoc(("+", "-"), self.multiplicative)

    def multiplicative(self) -> Node:
        return self._left_assoc(("*", "/"), self.unary)

    def _left_assoc(self, ops: tuple[str, ...], operand: Any) -> Node:
        node = operand()
        while self.is_op(*ops):
            op = self.advance()
            self.skip_newlines()
            right = operand()
            node = Binary(op.value, node, right, node.offset, right.end, op.offset)
        return node

    def unary(self) -> Node:
        if self.is_op("!"):
            op = self.advance()
            operand = self.unary()
            return Unary("!", operand, op.offset, operand.end)
        return self.postfix(self.primary())

    def postfix(self, node: Node) -> Node:
        """Paths and indexes written right after a value (no space) query that value."""
        while True:
            token = self.current
            if token.offset != node.end or isinstance(node, Group):  # as VRL: no path after a group
                return node
            if token.kind == PATH and token.value[0] == EVENT and token.value[1]:
                self.advance()
                node = _extend(node, token.value[1], token.end)
            elif token.kind == OP and token.value == "[" and self.peek().kind == INTEGER \
                    and self.peek(2).kind == OP and self.peek(2).value == "]":
                self.advance()
                index = self.advance().value
                end = self.advance().end
                node = _extend(node, (index,), end)
            else:
                return node

    def primary(self) -> Node:
        token = self.current
        kind = token.kind
        if kind == PATH:
            self.advance()
            return Query(token.value[0], token.value[1], token.offset, token.end)
        if kind in (STRING, RAW, INTEGER, FLOAT):
            self.advance()
            return Literal(token.value, token.offset, token.end)
        if kind == TEMPLATE:
            self.advance()
            parts = tuple(part if isinstance(part, str) else Variable(*part) for part in token.value)
            return Template(parts, token.offset, token.end)
        if kind == REGEX:
            self.advance()
            return RegexLiteral(token.value, token.offset, token.end)
        if kind == TIMESTAMP:
            self.advance()
            nanos = parse_rfc3339(token.value)
            if nanos is None:
                raise self.diagnostics.syntax(token.offset, f"invalid timestamp literal {token.value!r}", token.end)
            return Literal(Timestamp(nanos), token.offset, token.end)
        if kind == IDENT:
            return self.identifier()
        if self.is_op("("):
            self.advance()
            self.skip_newlines()
            node = self.statement()  # `(.b = 3)` is an expression, as in VRL
            self.skip_newlines()
            end = self.expect_op(")").end
            return Group((node,), token.offset, end)
        if self.is_op("["):
            return self.array()
        if self.is_op("{"):
            return self.object_or_block()
        raise self.unexpected(_EXPECTED_VALUE)

    def identifier(self) -> Node:
        token = self.advance()
        name = token.value
        if name in ("true", "false"):
            return Literal(name == "true", token.offset, token.end)
        if name == "null":
            return Literal(None, token.offset, token.end)
        if name == "if":
            return self.if_expression(token)
        if name == "abort":
            return self.abort(token)
        if name == "return":
            value = self.expression()
            return Return(value, token.offset, value.end)
        bang = False
        if self.is_op("!") and self.current.offset == token.end and self.peek().kind == OP \
                and self.peek().value == "(" and self.peek().offset == self.current.end:
            self.advance()
            bang = True
        if self.is_op("(") and self.current.offset == (token.end + 1 if bang else token.end):
            self.advance()
            arguments, end = self.arguments()
            name_end = token.end + (1 if bang else 0)
            if self.is_op("-") and self.peek().kind == OP and self.peek().value == ">":
                closure = _closure(self)
                return Call(name, bang, arguments, token.offset, closure.end, name_end, closure)
            return Call(name, bang, arguments, token.offset, end, name_end)
        return Variable(name, token.offset, token.end)

    def arguments(self) -> tuple[tuple[Argument, ...], int]:
        arguments: list[Argument] = []
        while True:
            self.skip_newlines()
            if self.is_op(")"):
                return tuple(arguments), self.advance().end
            start = self.current
            name = None
            if start.kind == IDENT and self.peek().kind == OP and self.peek().value == ":":
                name = start.value
                self.advance()
                self.advance()
                self.skip_newlines()
            value = self.expression()
            arguments.append(Argument(name, value, start.offset, value.end))
            self.skip_newlines()
            if not self.is_op(")"):
                self.expect_op(",")

    def array(self) -> Node:
        start = self.advance()
        items: list[Node] = []
        while True:
            self.skip_newlines()
            if self.is_op("]"):
                return ArrayLiteral(tuple(items), start.offset, self.advance().end)
            items.append(self.expression())
            self.skip_newlines()
            if not self.is_op("]"):
                self.expect_op(",")

    def object_or_block(self) -> Node:
        start = self.current
        ahead = 1
        while self.peek(ahead).kind == NEWLINE:
            ahead += 1
        first, second = self.peek(ahead), self.peek(ahead + 1)
        is_object = (first.kind == OP and first.value == "}") or (
            first.kind in (STRING, RAW) and second.kind == OP and second.value == ":")
        if not is_object:
            return self.block()
        self.advance()
        items: list[tuple[str, Node]] = []
        while True:
            self.skip_newlines()
            if self.is_op("}"):
                return ObjectLiteral(tuple(items), start.offset, self.advance().end)
            key = self.current
            if key.kind not in (STRING, RAW):
                raise self.unexpected('expected "string literal"')
            self.advance()
            self.expect_op(":")
            self.skip_newlines()
            items.append((key.value, self.expression()))
            self.skip_newlines()
            if not self.is_op("}"):
                self.expect_op(",")

    def block(self) -> Block:
        start = self.expect_op("{")
        statements = self.statements(closing="}")
        end = self.advance().end
        return Block(tuple(statements), start.offset, end)

    def if_expression(self, token: Token) -> If:
        predicate = _predicate_group(self) or self.expression()
        if not self.is_op("{"):
            raise self.unexpected('expected "{"')
        then = self.block()
        otherwise: Block | If | None = None
        end = then.end
        save = self.index
        self.skip_newlines()
        if self.current.kind == IDENT and self.current.value == "else":
            self.advance()
            self.skip_newlines()
            if self.current.kind == IDENT and self.current.value == "if":
                otherwise = self.if_expression(self.advance())
            else:
                otherwise = self.block()
            end = otherwise.end
        else:
            self.index = save
        return If(predicate, then, otherwise, token.offset, end)

    def abort(self, token: Token) -> Abort:
        if self.current.kind in (NEWLINE, EOF) or self.is_op(";", "}"):
            return Abort(None, token.offset, token.end)
        message = self.expression()
        return Abort(message, token.offset, message.end)


def _assignable(node: Node) -> bool:
    if isinstance(node, (Variable, Noop)):
        return True
    return isinstance(node, Query) and (isinstance(node.base, str) or isinstance(node.base, Variable))


def _extend(node: Node, segments: tuple[str | int, ...], end: int) -> Query:
    if isinstance(node, Query):
        return Query(node.base, node.segments + segments, node.offset, end)
    if isinstance(node, Variable):
        return Query(node, segments, node.offset, end)
    return Query(node, segments, node.offset, end)


def _predicate_group(self: Any) -> Node | None:
    """``(a = f(); a == 1)`` before an if's ``{``: several expressions, the last one the predicate (VRL's)."""
    if not self.is_op("("):
        return None
    save = self.index
    start = self.advance()
    try:
        statements = self.statements(closing=")")
    except VrlError:
        statements = []
    if statements and self.is_op(")") and self.peek().kind == OP and self.peek().value == "{":
        end = self.advance().end
        return Group(tuple(statements), start.offset, end)
    self.index = save
    return None


def _closure(self: Any) -> Closure:
    """``-> |a, b| { ... }`` after a call (the parser at the ``-``)."""
    start = self.advance()
    self.advance()
    params: list[str] = []
    if self.is_op("||"):
        self.advance()
    else:
        self.expect_op("|")
        while not self.is_op("|"):
            if self.current.kind != IDENT:
                raise self.unexpected("expected a closure parameter name")
            params.append(self.advance().value)
            if not self.is_op("|"):
                self.expect_op(",")
        self.advance()
    if not self.is_op("{"):
        raise self.unexpected('expected "{"')
    body = self.block()
    return Closure(tuple(params), body, start.offset, body.end)
