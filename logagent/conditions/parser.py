"""Recursive-descent parser for the VRL condition subset.

Precedence, lowest first, as VRL has it (verified against Vector's VRL):

1. ``??``                  error coalescing, left-associative
2. ``&&`` ``||``           one level, left-associative: ``a || b && c`` is ``(a || b) && c``
3. ``== != < <= > >=``     not chainable (``a == b == c`` is an error)
4. ``!``                   prefix
5. literals, paths, calls, ``( ... )``, ``[ ... ]``
"""

from __future__ import annotations

from .errors import ConditionSyntaxError, error_at
from .lexer import EOF, FLOAT, IDENT, INTEGER, OP, PATH, REGEX, STRING, Token, tokenize
from .regex import RegexError, compile_regex
from .syntax import Argument, ArrayLiteral, Binary, Call, Literal, Node, Not, Path, RegexLiteral

_COMPARISONS = frozenset({"==", "!=", "<", "<=", ">", ">="})
_LOGICAL = frozenset({"&&", "||"})
_KEYWORDS = {"true": True, "false": False, "null": None}


def parse_condition(source: str) -> Node:
    """Parse one condition expression; raises ConditionSyntaxError."""
    return _Parser(source).parse()


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.index = 0

    # -- helpers -------------------------------------------------------------

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        if token.kind != EOF:
            self.index += 1
        return token

    def is_op(self, *ops: str) -> bool:
        token = self.current
        return token.kind == OP and token.value in ops

    def error(self, offset: int, reason: str) -> ConditionSyntaxError:
        return error_at(self.source, offset, reason)

    def expect_op(self, op: str, context: str) -> Token:
        if not self.is_op(op):
            raise self.error(self.current.offset, f"expected '{op}' {context}, found {describe(self.current)}")
        return self.advance()

    # -- grammar -------------------------------------------------------------

    def parse(self) -> Node:
        if self.current.kind == EOF:
            raise self.error(0, "the condition is empty")
        node = self.parse_coalesce()
        while self.is_op(";"):
            self.advance()
        if self.current.kind != EOF:
            raise self.error(
                self.current.offset,
                f"unexpected {describe(self.current)}: a condition is a single expression "
                "(combine tests with && or ||)",
            )
        return node

    def parse_coalesce(self) -> Node:
        node = self.parse_logical()
        while self.is_op("??"):
            op = self.advance()
            node = Binary("??", node, self.parse_logical(), op.offset)
        return node

    def parse_logical(self) -> Node:
        node = self.parse_comparison()
        while self.current.kind == OP and self.current.value in _LOGICAL:
            op = self.advance()
            node = Binary(op.value, node, self.parse_comparison(), op.offset)
        return node

    def parse_comparison(self) -> Node:
        node = self.parse_unary()
        if self.current.kind == OP and self.current.value in _COMPARISONS:
            op = self.advance()
            node = Binary(op.value, node, self.parse_unary(), op.offset)
            if self.current.kind == OP and self.current.value in _COMPARISONS:
                raise self.error(
                    self.current.offset,
                    "comparison operators can't be chained together; use && between comparisons",
                )
        return node

    def parse_unary(self) -> Node:
        if self.is_op("!"):
            op = self.advance()
            return Not(self.parse_unary(), op.offset)
        return self.parse_primary()

    def parse_primary(self) -> Node:
        token = self.current
        kind = token.kind
        if kind == PATH:
            self.advance()
            return Path(token.value, token.offset)
        if kind in (STRING, INTEGER, FLOAT):
            self.advance()
            return Literal(token.value, token.offset)
        if kind == REGEX:
            self.advance()
            try:
                pattern = compile_regex(token.value)
            except RegexError as exc:  # the pattern starts after the r' prefix
                raise error_at(self.source, token.offset + 2 + exc.index, f"regex: {exc.reason}") from None
            return RegexLiteral(pattern, token.value, token.offset)
        if kind == IDENT:
            return self.parse_identifier()
        if self.is_op("("):
            self.advance()
            if self.is_op(")"):
                raise self.error(self.current.offset, "empty parentheses")
            node = self.parse_coalesce()
            self.expect_op(")", "to close the parenthesis")
            return node
        if self.is_op("["):
            return self.parse_array()
        raise self.error(token.offset, f"expected a value, found {describe(token)}")

    def parse_identifier(self) -> Node:
        token = self.advance()
        name = token.value
        if name in _KEYWORDS:
            return Literal(_KEYWORDS[name], token.offset)
        abort_on_error = False
        if self.is_op("!") and self.current.offset == token.end:
            bang = self.advance()
            if not self.is_op("("):
                raise self.error(bang.offset, f"expected '(' after '{name}!'")
            abort_on_error = True
        if not self.is_op("("):
            raise self.error(
                token.offset,
                f"unknown name {name!r}: variables are not supported in conditions "
                "(fields are written with a leading dot, e.g. .message)",
            )
        self.advance()
        arguments = self.parse_arguments()
        return Call(name, abort_on_error, arguments, token.offset)

    def parse_arguments(self) -> tuple[Argument, ...]:
        arguments: list[Argument] = []
        while not self.is_op(")"):
            start = self.current
            name = None
            if start.kind == IDENT and self.tokens[self.index + 1].kind == OP and self.tokens[self.index + 1].value == ":":
                name = start.value
                self.advance()
                self.advance()
            arguments.append(Argument(name, self.parse_coalesce(), start.offset))
            if not self.is_op(")"):
                self.expect_op(",", "between function arguments")
        self.advance()
        return tuple(arguments)

    def parse_array(self) -> Node:
        start = self.advance()
        items: list[Node] = []
        while not self.is_op("]"):
            items.append(self.parse_coalesce())
            if not self.is_op("]"):
                self.expect_op(",", "between array items")
        self.advance()
        return ArrayLiteral(tuple(items), start.offset)


def describe(token: Token) -> str:
    if token.kind == EOF:
        return "end of condition"
    if token.kind == OP:
        return f"'{token.value}'"
    if token.kind == PATH:
        return "a path"
    if token.kind == IDENT:
        return f"{token.value!r}"
    return f"a {token.kind} literal"
