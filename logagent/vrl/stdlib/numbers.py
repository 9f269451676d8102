"""round, floor, ceil (with ``precision``) and mod, as VRL's (Rust's f64 rounding and remainder)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..function import FunctionError, TypeDef
from .declare import ANY, F, I, Args, always, function, opt, req
from .display import value_kind

Number = int | float


def _rust_round(value: float) -> float:
    """f64::round: halves away from zero."""
    whole = math.trunc(value)
    if abs(value - whole) >= 0.5:
        whole += 1 if value > 0 else -1
    return math.copysign(float(whole), value)


def _rounding(to_whole: Callable[[float], float]) -> Callable[[Number, int | None], Number]:
    """VRL's rounding with ``precision``: an integer is returned as is; a float is scaled by 10^precision."""

    def rounded(value: Number, precision: int | None) -> Number:
        if type(value) is int:
            return value
        if not math.isfinite(value):
            return value
        if not precision:
            return to_whole(value)
        try:
            multiplier = 10.0 ** precision
        except OverflowError:
            multiplier = math.inf
        product = value * multiplier
        result = _divide(to_whole(product) if math.isfinite(product) else product, multiplier)
        return 0.0 if math.isnan(result) else result  # VRL's floats are never NaN

    return rounded


def _divide(dividend: float, divisor: float) -> float:
    """IEEE 754 division, as Rust's (x / 0.0 is infinite or NaN, not an exception)."""
    if divisor:
        return dividend / divisor
    if dividend == 0 or math.isnan(dividend):
        return math.nan
    return math.copysign(math.inf, dividend) * math.copysign(1.0, divisor)


def _floor(value: float) -> float:
    return math.copysign(float(math.floor(value)), value) if math.isfinite(value) else value


def _ceil(value: float) -> float:
    return math.copysign(float(math.ceil(value)), value) if math.isfinite(value) else value


def mod(value: Number, modulus: Number) -> Number:
    """Rust's ``%``: the remainder takes the dividend's sign; an integer result when both are integers."""
    if modulus == 0:
        raise FunctionError("can't divide by zero")
    if type(value) is int and type(modulus) is int:
        remainder = abs(value) % abs(modulus)
        return -remainder if value < 0 else remainder
    return math.fmod(float(value), float(modulus))


def _same_kind(args: Args) -> TypeDef:
    arg = args[0]
    kinds = (I | F) if arg is None else (arg.kinds & (I | F)) or (I | F)
    return TypeDef(kinds, False)


def _mod_type(args: Args) -> TypeDef:
    """Typed by the modulus alone (VRL types ``mod(5.0, 2)`` an integer); fallible unless it is a constant other than 0."""
    modulus = args[1]
    kinds = I | F if modulus is None else modulus.kinds & (I | F)
    safe = modulus is not None and modulus.constant and type(modulus.value) in (int, float) and modulus.value != 0
    return TypeDef(kinds if kinds in (I, F) else I | F, not safe)


def _any_floor(value: Any, precision: int | None) -> Number:
    """VRL's floor takes a value of any type at compile time, and fails on a non-number when it runs."""
    if type(value) is not int and type(value) is not float:
        raise FunctionError(f"expected integer or float, got {value_kind(value)}")
    return _FLOOR(value, precision)


_ROUNDING = (req("value", I | F), opt("precision", I))
_FLOOR = _rounding(_floor)

FUNCTIONS = [
    # VRL types round's result an integer whatever the value's type (a float stays a float at run time)
    function("round", _ROUNDING, always(I), _rounding(_rust_round)),
    function("floor", (req("value", ANY), opt("precision", I)), _same_kind, _any_floor),
    function("ceil", _ROUNDING, _same_kind, _rounding(_ceil)),
    function("mod", (req("value", I | F), req("modulus", I | F)), _mod_type, mod),
]
