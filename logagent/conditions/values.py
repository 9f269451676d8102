"""VRL value semantics on plain Python values.

Records hold None, bool, int, float, str, list and dict. Python's own ``==``
differs from VRL in two ways that matter: ``True == 1`` (VRL: false) and
``[1] == [1.0]`` (VRL: false; only a top-level integer/float comparison is
numeric).
"""

from __future__ import annotations

from typing import Any

from .errors import ConditionRuntimeError

_KIND_NAMES: dict[type, str] = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "float",
    str: "string",
    list: "array",
    tuple: "array",
    dict: "object",
}


def kind_name(value: Any) -> str:
    """VRL's name of the type of ``value`` for error messages."""
    name = _KIND_NAMES.get(type(value))
    if name is not None:
        return name
    for cls, cls_name in _KIND_NAMES.items():
        if cls is not type(None) and isinstance(value, cls):
            return cls_name
    return type(value).__name__


def is_number(value: Any) -> bool:
    kind = type(value)
    return kind is int or kind is float


def vrl_equal(left: Any, right: Any) -> bool:
    """The ``==`` operator: integers and floats compare numerically at top level."""
    if is_number(left) and is_number(right):
        return left == right or (left != left and right != right)  # VRL: NaN == NaN
    return strict_equal(left, right)


def strict_equal(left: Any, right: Any) -> bool:
    """Value equality as inside arrays/objects and in includes(): types must match."""
    kind = kind_name(left)
    if kind != kind_name(right):
        return False
    if kind == "array":
        return len(left) == len(right) and all(strict_equal(a, b) for a, b in zip(left, right))
    if kind == "object":
        if len(left) != len(right):
            return False
        for key, value in left.items():
            if key not in right or not strict_equal(value, right[key]):
                return False
        return True
    if kind == "float" and left != left:
        return right != right
    return bool(left == right)


def ordered(op: str, left: Any, right: Any) -> None:
    """Raise unless ``left op right`` is defined: both numbers or both strings."""
    if (is_number(left) and is_number(right)) or (type(left) is str and type(right) is str):
        return
    raise ConditionRuntimeError(f"can't compare {kind_name(left)} {op} {kind_name(right)}")
