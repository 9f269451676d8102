"""Reading, writing and removing a value at a path of field names and array indexes, as VRL does.

Pure functions: a changed collection is a copy along the path, the rest is
shared. Array indexes may be negative (from the end); writing past the end
pads with nulls, writing a negative index before the start pads at the front;
a segment whose container is of the other kind replaces it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Segment = str | int


def array_index(array: list[Any], index: int) -> int | None:
    if index < 0:
        index += len(array)
        return index if index >= 0 else None
    return index if index < len(array) else None


def get_path(value: Any, path: Sequence[Segment]) -> Any:
    """The value at ``path`` or None."""
    for segment in path:
        if type(segment) is str:
            if type(value) is not dict:
                return None
            value = value.get(segment)
        else:
            if type(value) is not list:
                return None
            index = array_index(value, segment)
            if index is None:
                return None
            value = value[index]
    return value


def has_path(value: Any, path: Sequence[Segment]) -> bool:
    """True when ``path`` leads to a value (a null counts)."""
    for segment in path:
        if type(segment) is str:
            if type(value) is not dict or segment not in value:
                return False
            value = value[segment]
        else:
            if type(value) is not list:
                return False
            index = array_index(value, segment)
            if index is None:
                return False
            value = value[index]
    return True


def set_path(value: Any, path: Sequence[Segment], data: Any) -> Any:
    """A copy of ``value`` with ``data`` at ``path``."""
    if not path:
        return data
    segment, rest = path[0], path[1:]
    if type(segment) is str:
        target = dict(value) if type(value) is dict else {}
        target[segment] = set_path(target.get(segment), rest, data)
        return target
    array = list(value) if type(value) is list else []
    index = array_index(array, segment)
    child = set_path(array[index] if index is not None else None, rest, data)
    if index is not None:
        array[index] = child
    elif segment >= 0:
        array.extend([None] * (segment - len(array)))
        array.append(child)
    else:
        array[:0] = [child] + [None] * (-segment - 1 - len(array))
    return array


_MISSING = object()


def remove_path(value: Any, path: Sequence[Segment], compact: bool) -> Any:
    """A copy of ``value`` without what is at ``path``; with ``compact``, emptied parents go too."""
    if not path:
        return {} if type(value) is dict else [] if type(value) is list else None
    result = _remove(value, path, compact)
    return value if result is _MISSING else result[0]


def _remove(value: Any, path: Sequence[Segment], compact: bool) -> Any:
    """(new container, now empty) or _MISSING when nothing is at ``path``."""
    segment, rest = path[0], path[1:]
    if type(segment) is str:
        if type(value) is not dict or segment not in value:
            return _MISSING
        key: Any = segment
    else:
        if type(value) is not list:
            return _MISSING
        key = array_index(value, segment)
        if key is None:
            return _MISSING
    copy = dict(value) if type(value) is dict else list(value)
    if not rest:
        del copy[key]
        return copy, not copy
    child = value[key]
    if type(child) is not (dict if type(rest[0]) is str else list):
        return _MISSING
    result = _remove(child, rest, compact)
    if result is _MISSING:
        return _MISSING
    new_child, emptied = result
    if compact and emptied:
        del copy[key]
    else:
        copy[key] = new_child
    return copy, not copy
