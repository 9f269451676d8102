"""VRL's operators on values: arithmetic (64-bit wrapping integers), comparison, equality."""

from __future__ import annotations

from typing import Any

from .runtime import VrlRuntimeError, kind_name
from .value import Timestamp

_INT_RANGE = 1 << 64
_INT_MIN = -(1 << 63)


def wrap(value: int) -> int:
    """Two's complement i64, as VRL's integer arithmetic wraps."""
    if _INT_MIN <= value < -_INT_MIN:
        return value
    return (value - _INT_MIN) % _INT_RANGE + _INT_MIN


def _number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float


def add(left: Any, right: Any) -> Any:
    kind_l, kind_r = type(left), type(right)
    if kind_l is int and kind_r is int:
        return wrap(left + right)
    if _number(left) and _number(right):
        return float(left + right)
    if kind_l is str and kind_r is str:
        return left + right
    if (kind_l is str and right is None) or (left is None and kind_r is str):
        return left or right or ""
    raise VrlRuntimeError(f"can't add type {kind_name(right)} to {kind_name(left)}")


def subtract(left: Any, right: Any) -> Any:
    if type(left) is int and type(right) is int:
        return wrap(left - right)
    if _number(left) and _number(right):
        return float(left - right)
    raise VrlRuntimeError(f"can't subtract type {kind_name(right)} from {kind_name(left)}")


def multiply(left: Any, right: Any) -> Any:
    kind_l, kind_r = type(left), type(right)
    if kind_l is int and kind_r is int:
        return wrap(left * right)
    if _number(left) and _number(right):
        return float(left * right)
    if kind_l is str and kind_r is int:
        return left * max(right, 0)
    if kind_l is int and kind_r is str:
        return right * max(left, 0)
    raise VrlRuntimeError(f"can't multiply type {kind_name(left)} by {kind_name(right)}")


def divide(left: Any, right: Any) -> Any:
    if _number(left) and _number(right):
        if right == 0:
            raise VrlRuntimeError("can't divide by zero")
        return left / right
    raise VrlRuntimeError(f"can't divide type {kind_name(left)} by {kind_name(right)}")


def equal(left: Any, right: Any) -> bool:
    """``==``: integers and floats compare as numbers at the top level only."""
    if _number(left) and _number(right) and type(left) is not bool and type(right) is not bool:
        return bool(left == right)
    return strict_equal(left, right)


def strict_equal(left: Any, right: Any) -> bool:
    """Equality inside arrays and objects: the kinds must match."""
    kind = type(left)
    if kind is not type(right):
        return False
    if kind is list:
        return len(left) == len(right) and all(map(strict_equal, left, right))
    if kind is dict:
        return len(left) == len(right) and all(
            key in right and strict_equal(value, right[key]) for key, value in left.items())
    return bool(left == right)


def _comparable(left: Any, right: Any) -> bool:
    if _number(left) and _number(right):
        return True
    kind = type(left)
    return kind is type(right) and (kind is str or kind is Timestamp)


def compare(op: str, left: Any, right: Any) -> bool:
    if not _comparable(left, right):
        raise VrlRuntimeError(f"can't compare type {kind_name(left)} {op} {kind_name(right)}")
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def merge_objects(left: Any, right: Any) -> dict[str, Any]:
    """``a | b``: b's fields over a's (top level)."""
    if type(left) is not dict or type(right) is not dict:
        raise VrlRuntimeError(f"can't merge type {kind_name(right)} into {kind_name(left)}")
    merged = dict(left)
    merged.update(right)
    return merged
