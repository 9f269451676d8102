"""Syntax tree of a VRL program, made by the parser and read by the compiler.

Every node has ``offset`` and ``end``: the characters of the source it spans
(diagnostics point there; runtime messages show them as UTF-8 byte offsets).
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

EVENT = "."
METADATA = "%"

Segments = tuple[str | int, ...]


class Literal(Struct, frozen=True):
    value: Any  # None, bool, int, float, str, Timestamp
    offset: int
    end: int


class RegexLiteral(Struct, frozen=True):
    pattern: str
    offset: int
    end: int


class Template(Struct, frozen=True):
    #: text pieces and Variable nodes, in order
    parts: tuple[Any, ...]
    offset: int
    end: int


class ArrayLiteral(Struct, frozen=True):
    items: tuple[Node, ...]
    offset: int
    end: int


class ObjectLiteral(Struct, frozen=True):
    items: tuple[tuple[str, Node], ...]
    offset: int
    end: int


class Variable(Struct, frozen=True):
    name: str
    offset: int
    end: int


class Query(Struct, frozen=True):
    """A path into the event (``base == EVENT``), the metadata, a variable or any value."""

    base: str | Node
    segments: Segments
    offset: int
    end: int


class Unary(Struct, frozen=True):
    op: str  # "!"
    operand: Node
    offset: int
    end: int


class Binary(Struct, frozen=True):
    op: str
    left: Node
    right: Node
    offset: int  # of the whole expression
    end: int
    op_offset: int


class Argument(Struct, frozen=True):
    name: str | None
    value: Node
    offset: int
    end: int


class Call(Struct, frozen=True):
    name: str
    bang: bool  # name!(...)
    arguments: tuple[Argument, ...]
    offset: int
    end: int
    name_end: int
    closure: Closure | None = None  # name(...) -> |a, b| { ... }


class Closure(Struct, frozen=True):
    """A function's closure argument: its parameter names and body."""

    params: tuple[str, ...]
    body: Block
    offset: int
    end: int


class Noop(Struct, frozen=True):
    """``_`` as an assignment target."""

    offset: int
    end: int


class Assign(Struct, frozen=True):
    target: Query | Variable | Noop
    error_target: Query | Variable | Noop | None  # x, err = ...
    op: str  # "=" or "|="
    value: Node
    offset: int
    end: int


class Block(Struct, frozen=True):
    statements: tuple[Node, ...]
    offset: int
    end: int


class Group(Struct, frozen=True):
    """``( expression )``, spanning its parentheses (as VRL's diagnostics do; no path may follow it), or
    ``if (a = f(); a == 1) { ... }``: a predicate of several expressions, in the enclosing scope (as VRL)."""

    statements: tuple[Node, ...]
    offset: int
    end: int


class If(Struct, frozen=True):
    predicate: Node
    then: Block
    otherwise: Block | If | None
    offset: int
    end: int


class Abort(Struct, frozen=True):
    message: Node | None
    offset: int
    end: int


class Return(Struct, frozen=True):
    value: Node
    offset: int
    end: int


class Program(Struct, frozen=True):
    statements: tuple[Node, ...]


Node = (Literal | RegexLiteral | Template | ArrayLiteral | ObjectLiteral | Variable | Query | Group | Unary | Binary
        | Call | Noop | Assign | Block | If | Abort | Return)
