"""The last compiled results of VRL sources, for programs (``program.py``) and conditions (``condition.py``).

``validate`` and the transform compile the same text, and a reload compiles
it again: a source is compiled once while it is among the last ``keep``
compiled (the oldest goes first). What is kept is never changed by a run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class CompileCache(Generic[T]):
    __slots__ = ("_compile", "_keep", "_kept")

    def __init__(self, compile_source: Callable[[str], T], keep: int) -> None:
        self._compile = compile_source
        self._keep = keep
        self._kept: dict[str, T] = {}

    def __call__(self, source: str) -> T:
        kept = self._kept.get(source)
        if kept is None:
            kept = self._compile(source)
            if len(self._kept) >= self._keep:
                self._kept.pop(next(iter(self._kept)))
            self._kept[source] = kept
        return kept
