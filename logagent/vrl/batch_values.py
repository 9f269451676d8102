"""Values of batch programs (see ``batch_run.py``): uniform values, errors, and the list operations they share.

The records of a batch are numbered 0..n-1. A *selection* is a sorted list of
record numbers: the records an expression or a statement runs for (an
``if`` splits it). An expression's values over a selection are a list
aligned with it, or a :class:`Uniform` when every record has the same value
(constants, fields of the shared file context and what is computed from
them by pure functions, once). Value lists are never changed once made.

Each pass over a list costs from ~50 (``compress``, ``count``) to ~300
(a comprehension with a call) instructions per element, a Python function
call per element ~500 more: helpers here prefer C-level passes, but not a
method wrapper through ``map`` (``list.__setitem__``, ``dict.__delitem__``):
it builds an argument tuple per call and costs more than a loop of
subscripts, which Python 3.11 specialises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import not_
from typing import Any

from .function import FunctionError
from .runtime import VrlRuntimeError


class _Absent:
    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"


#: a field that is not there (a null field is there, with None)
ABSENT: Any = _Absent()

#: the errors of VRL values and functions (anything else is a bug and goes up as it is)
ERRORS = (VrlRuntimeError, FunctionError)


class Uniform:
    """The same value for every record of a selection (or, as a column, of the batch)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Uniform({self.value!r})"


NULL = Uniform(None)
Values = Any  # list (aligned with a selection) | Uniform
Column = Any  # list (of all n records) | Uniform


class BatchErrors(Exception):
    """Some records of a selection failed: ``errors`` maps record number -> the error.

    ``values``/``sel``: the results of the others, when ``source`` (the
    evaluator that raised) computed them (``??`` and ``x, err =`` take them
    instead of evaluating again).
    """

    def __init__(self, errors: dict[int, Exception], values: Values = None, sel: list[int] | None = None,
                 source: Any = None) -> None:
        super().__init__()
        self.errors, self.values, self.sel, self.source = errors, values, sel, source


class Restart(Exception):
    """Records failed in a statement whose effects cannot be taken back: run the batch again without them."""

    def __init__(self, errors: dict[int, Exception]) -> None:
        super().__init__()
        self.errors = errors


ABSENT_COLUMN = Uniform(ABSENT)
TRUE = Uniform(True)
FALSE = Uniform(False)


def pick(col: Column, sel: list[int], n: int) -> Values:
    """A column's values for ``sel``."""
    if type(col) is Uniform or len(sel) == n:
        return col
    return [col[i] for i in sel]


def scattered(col: Column, sel: list[int], values: Values, n: int) -> list[Any]:
    """A new full column: ``col`` (a Uniform or list; ABSENT reads as None) with ``values`` at ``sel``."""
    if type(col) is Uniform:
        base = [None if col.value is ABSENT else col.value] * n
    else:
        base = list(col)
    if type(values) is Uniform:
        value = values.value
        for i in sel:
            base[i] = value
    else:
        for i, value in zip(sel, values):
            base[i] = value
    return base


def spread(values: Values) -> Any:
    """An iterable of the values (a Uniform repeats; zip with a list to bound it)."""
    return repeat(values.value) if type(values) is Uniform else values


def apply(function: Callable[..., Any], sel: list[int], args: Sequence[Values], wrap: Callable[[Exception], Exception]
          | None = None, pure: bool = True, source: Any = None) -> Values:
    """``function`` of each record's arguments; the records it fails for raise BatchErrors.

    All arguments Uniform and ``function`` pure: computed once. ``wrap``
    words a function's error (VRL's call prefix).
    """
    if pure and all(type(a) is Uniform for a in args):
        try:
            return Uniform(function(*[a.value for a in args]))
        except ERRORS as exc:
            error = wrap(exc) if wrap is not None else exc
            raise BatchErrors(dict.fromkeys(sel, error), [], [], source) from None
    # every column can be iterated again (the retry below starts over): a bounded repeat would be used up
    if not args:
        columns: list[Any] = [[()] * len(sel)]
        call = lambda _: function()  # noqa: E731
    else:
        columns = [spread(a) for a in args]
        if all(type(a) is Uniform for a in args):
            columns[0] = [args[0].value] * len(sel)
        call = function
    try:
        return list(map(call, *columns))
    except ERRORS:
        pass
    out: list[Any] = []
    ok: list[int] = []
    errors: dict[int, Exception] = {}
    for i, row in zip(sel, zip(*columns)):
        try:
            out.append(call(*row))
            ok.append(i)
        except ERRORS as exc:
            errors[i] = wrap(exc) if wrap is not None else exc
    raise BatchErrors(errors, out, ok, source)


class NoProgress(AssertionError):
    """A retry over fewer records failed without naming one of them: it would loop for ever."""


def without(sel: list[int], errors: dict[int, Any]) -> list[int]:
    """``sel`` without the records of ``errors``; NoProgress when none of them is in ``sel``."""
    rest = [i for i in sel if i not in errors]
    if len(rest) == len(sel) and sel:
        raise NoProgress(f"a batch failure named none of the {len(sel)} records it ran for")
    return rest


def split(sel: list[int], flags: list[Any]) -> tuple[list[int], list[int]]:
    """(the records of ``sel`` whose flag is true, the others), each in order."""
    return list(compress(sel, flags)), list(compress(sel, map(not_, flags)))


def interleave(sel: list[int], flags: list[Any], yes: Values, no: Values) -> Values:
    """Values aligned with ``sel`` taken from ``yes`` where the flag is true, else from ``no`` (both in order)."""
    if type(yes) is Uniform and type(no) is Uniform and yes.value is no.value:
        return yes
    if type(no) is Uniform:
        out = [no.value] * len(sel)
    else:
        out = [None] * len(sel)
        for p, value in zip(compress(range(len(sel)), map(not_, flags)), no):
            out[p] = value
    for p, value in zip(compress(range(len(sel)), flags), spread(yes)):
        out[p] = value
    return out


def merge_sorted(a: list[int], b: list[int]) -> list[int]:
    if not a:
        return b
    if not b:
        return a
    return sorted(a + b)


def types_of(values: list[Any]) -> set[type]:
    """The distinct types of a list's values."""
    return set(map(type, values))
