"""Syntax tree of a VRL program, made by the parser and read by the compiler.

Every node has ``offset`` and ``end``: the characters of the source it spans
(diagnostics point there; runtime messages show them as UTF-8 byte offsets).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVENT = "."
METADATA = "%"

Segments = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any  # None, bool, int, float, str, Timestamp
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class RegexLiteral:
    pattern: str
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Template:
    #: text pieces and Variable nodes, in order
    parts: tuple[Any, ...]
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class ArrayLiteral:
    items: tuple[Node, ...]
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class ObjectLiteral:
    items: tuple[tuple[str, Node], ...]
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Variable:
    name: str
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Query:
    """A path into the event (``base == EVENT``), the metadata, a variable or any value."""

    base: str | Node
    segments: Segments
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # "!"
    operand: Node
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Binary:
    op: str
    left: Node
    right: Node
    offset: int  # of the whole expression
    end: int
    op_offset: int


@dataclass(frozen=True, slots=True)
class Argument:
    name: str | None
    value: Node
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    bang: bool  # name!(...)
    arguments: tuple[Argument, ...]
    offset: int
    end: int
    name_end: int
    closure: Closure | None = None  # name(...) -> |a, b| { ... }


@dataclass(frozen=True, slots=True)
class Closure:
    """A function's closure argument: its parameter names and body."""

    params: tuple[str, ...]
    body: Block
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Noop:
    """``_`` as an assignment target."""

    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Assign:
    target: Query | Variable | Noop
    error_target: Query | Variable | Noop | None  # x, err = ...
    op: str  # "=" or "|="
    value: Node
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Block:
    statements: tuple[Node, ...]
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Group:
    """``( expression )``, spanning its parentheses (as VRL's diagnostics do; no path may follow it), or
    ``if (a = f(); a == 1) { ... }``: a predicate of several expressions, in the enclosing scope (as VRL)."""

    statements: tuple[Node, ...]
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class If:
    predicate: Node
    then: Block
    otherwise: Block | If | None
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Abort:
    message: Node | None
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Return:
    value: Node
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Program:
    statements: tuple[Node, ...]


Node = (Literal | RegexLiteral | Template | ArrayLiteral | ObjectLiteral | Variable | Query | Group | Unary | Binary
        | Call | Noop | Assign | Block | If | Abort | Return)
