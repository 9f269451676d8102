"""Syntax tree of a condition, produced by the parser and read by the compiler."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .regex import Pattern


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any  # None, bool, int, float or str
    offset: int


@dataclass(frozen=True, slots=True)
class RegexLiteral:
    pattern: Pattern
    source: str  # the Rust-syntax pattern as written
    offset: int


@dataclass(frozen=True, slots=True)
class ArrayLiteral:
    items: tuple[Node, ...]
    offset: int


@dataclass(frozen=True, slots=True)
class Path:
    segments: tuple[str | int, ...]  # () is the whole record
    offset: int


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node
    offset: int


@dataclass(frozen=True, slots=True)
class Binary:
    op: str  # == != < <= > >= && || ??
    left: Node
    right: Node
    offset: int


@dataclass(frozen=True, slots=True)
class Argument:
    name: str | None  # None for a positional argument
    value: Node
    offset: int


@dataclass(frozen=True, slots=True)
class Call:
    function: str
    abort_on_error: bool  # written as name!(...)
    arguments: tuple[Argument, ...]
    offset: int


Node = Literal | RegexLiteral | ArrayLiteral | Path | Not | Binary | Call
