"""Calls whose first argument is the one computed per run, every other one a constant or absent.

``string!(.message)``, ``contains(string!(.message), "error")``,
``match!(.message, r'^x')``, ``to_int(.status) ?? 0``: the shapes of most
conditions and many remap statements. The constants are bound once, so a run
calls the argument's closure and the implementation, with the one type check
VRL needs (when the argument's type is not known to fit) done inline.
"""

from __future__ import annotations

from typing import Any

from .expressions import Compiled, Evaluator
from .function import FunctionError
from .runtime import KIND_BITS, CallError, Frame, VrlRuntimeError
from .stdlib.display import value_kind
from .value import Kind, kind_names

_REGEX_BIT = int(Kind.REGEX)


def bound_call(implementation: Any, compiled: list[Compiled | None], masks: tuple[tuple[int, int], ...],
               prefix: str | None) -> Evaluator | None:
    """The call, when its shape is one computed first argument and constants; else None.

    ``prefix`` None: the function's error goes out unwrapped (for ``??``, which never reads it).
    """
    first = compiled[0] if compiled else None
    if first is None or first.constant or any(index != 0 for index, _ in masks):
        return None
    if any(item is not None and not item.constant for item in compiled[1:]):
        return None
    tail = tuple(None if item is None else item.value for item in compiled[1:])
    mask = masks[0][1] if masks else 0
    if mask & _REGEX_BIT:
        return None
    #: the Python types of the values the first parameter takes, when its argument's type may not fit
    accepted = frozenset(kind for kind, bit in KIND_BITS.items() if bit & mask) if mask else None
    run = first.run
    asserted = getattr(implementation, "asserted_type", None)
    if asserted is not None and not tail and accepted is None:
        return _assertion(implementation, run, asserted, prefix)
    if not tail:
        return _call1(implementation, run, accepted, prefix)
    if len(tail) == 1:
        return _call2(implementation, run, tail[0], accepted, prefix)
    if len(tail) == 2:  # contains, starts_with ...: a call with *tail costs about as much as the function
        return _call3(implementation, run, tail, accepted, prefix)
    return _call_n(implementation, run, tail, accepted, prefix)


def _assertion(implementation: Any, run: Evaluator, asserted: type, prefix: str | None) -> Evaluator:
    """``string!(x)`` and the other type assertions: the type tested inline, the function called to fail."""
    def call(frame: Frame) -> Any:
        try:
            value = run(frame)
            if type(value) is asserted:
                return value
            return implementation(value)
        except (FunctionError, VrlRuntimeError) as exc:
            if prefix is None:
                raise
            raise CallError(prefix, exc) from None

    return call


def _call1(implementation: Any, run: Evaluator, accepted: frozenset[type] | None, prefix: str | None) -> Evaluator:
    def call(frame: Frame) -> Any:
        try:
            value = run(frame)
            if accepted is not None and type(value) not in accepted:
                raise _kind_error(value, accepted)
            return implementation(value)
        except (FunctionError, VrlRuntimeError) as exc:
            if prefix is None:
                raise
            raise CallError(prefix, exc) from None

    return call


def _call2(implementation: Any, run: Evaluator, second: Any, accepted: frozenset[type] | None,
           prefix: str | None) -> Evaluator:
    def call(frame: Frame) -> Any:
        try:
            value = run(frame)
            if accepted is not None and type(value) not in accepted:
                raise _kind_error(value, accepted)
            return implementation(value, second)
        except (FunctionError, VrlRuntimeError) as exc:
            if prefix is None:
                raise
            raise CallError(prefix, exc) from None

    return call


def _call3(implementation: Any, run: Evaluator, tail: tuple[Any, ...], accepted: frozenset[type] | None,
           prefix: str | None) -> Evaluator:
    second, third = tail

    def call(frame: Frame) -> Any:
        try:
            value = run(frame)
            if accepted is not None and type(value) not in accepted:
                raise _kind_error(value, accepted)
            return implementation(value, second, third)
        except (FunctionError, VrlRuntimeError) as exc:
            if prefix is None:
                raise
            raise CallError(prefix, exc) from None

    return call


def _call_n(implementation: Any, run: Evaluator, tail: tuple[Any, ...], accepted: frozenset[type] | None,
            prefix: str | None) -> Evaluator:
    def call(frame: Frame) -> Any:
        try:
            value = run(frame)
            if accepted is not None and type(value) not in accepted:
                raise _kind_error(value, accepted)
            return implementation(value, *tail)
        except (FunctionError, VrlRuntimeError) as exc:
            if prefix is None:
                raise
            raise CallError(prefix, exc) from None

    return call


def kind_error(value: Any, mask: int) -> FunctionError:
    """A value of a kind outside ``mask`` given to a function: VRL's words."""
    return FunctionError(f"expected {kind_names(Kind(mask))}, got {value_kind(value)}")


def _kind_error(value: Any, accepted: frozenset[type]) -> FunctionError:
    return kind_error(value, sum(bit for kind, bit in KIND_BITS.items() if kind in accepted))
