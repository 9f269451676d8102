"""Object and array functions: merge, compact, flatten, keys, values, length, get/set/remove, push, append, ..."""

from __future__ import annotations

from typing import Any

from ..function import FunctionError, TypeDef
from ..value import Kind
from .declare import ANY, ARR, BOOL, OBJ, Args, B, I, always, function, opt, req
from .display import value_kind
from .paths import get_path, remove_path, set_path
from .types import is_nullish


def merge(to: dict[str, Any], from_: dict[str, Any], deep: bool | None) -> dict[str, Any]:
    if not deep:
        if not to:
            return dict(from_)
        merged = dict(to)
        merged.update(from_)
        return merged
    return _deep_merge(to, from_)


def _deep_merge(to: dict[str, Any], from_: dict[str, Any]) -> dict[str, Any]:
    merged = dict(to)
    for key, value in from_.items():
        current = merged.get(key)
        if type(value) is dict and type(current) is dict:
            merged[key] = _deep_merge(current, value)
        else:
            merged[key] = value
    return merged


def _merge_type(args: Args) -> TypeDef:
    fields: dict[str, Kind] | None = None
    to, from_ = args[0], args[1]
    if to is not None and to.constant and from_ is not None and from_.constant:
        fields = {key: Kind.ANY for key in {**to.value, **from_.value}}
    return TypeDef(OBJ, False, fields)


def compact(
    value: Any,
    recursive: bool | None,
    null: bool | None,
    string: bool | None,
    object_: bool | None,
    array: bool | None,
    nullish: bool | None,
) -> Any:
    options = (
        recursive is not False,
        null is not False,
        string is not False,
        object_ is not False,
        array is not False,
        nullish is True,
    )
    return _compact(value, options)


def _compact(value: Any, options: tuple[bool, ...]) -> Any:
    if type(value) is dict:
        result = {}
        for key, item in value.items():
            item = _compact(item, options) if options[0] and type(item) in (dict, list) else item
            if not _is_empty(item, options):
                result[key] = item
        return result
    result_list = []
    for item in value:
        item = _compact(item, options) if options[0] and type(item) in (dict, list) else item
        if not _is_empty(item, options):
            result_list.append(item)
    return result_list


def _is_empty(value: Any, options: tuple[bool, ...]) -> bool:
    _, null, string, object_, array, nullish = options
    if nullish and is_nullish(value):
        return True
    kind = type(value)
    if kind is str:
        return string and not value
    if value is None:
        return null
    if kind is dict:
        return object_ and not value
    if kind is list:
        return array and not value
    return False


def _compact_type(args: Args) -> TypeDef:
    return TypeDef(ARR if args[0] is not None and args[0].kinds == Kind.ARRAY else OBJ, False)


def flatten(value: Any, separator: str | None) -> Any:
    if type(value) is list:
        flat: list[Any] = []
        _flatten_array(value, flat)
        return flat
    result: dict[str, Any] = {}
    _flatten_object(value, "." if separator is None else separator, None, result)
    return result


def _flatten_array(value: list[Any], into: list[Any]) -> None:
    for item in value:
        if type(item) is list:
            _flatten_array(item, into)
        else:
            into.append(item)


def _flatten_object(value: dict[str, Any], separator: str, parent: str | None, into: dict[str, Any]) -> None:
    for key in sorted(value):
        item = value[key]
        name = key if parent is None else f"{parent}{separator}{key}"
        if type(item) is dict:
            _flatten_object(item, separator, name, into)
        else:
            into[name] = item


def keys(value: dict[str, Any]) -> list[str]:
    return sorted(value)


def values(value: dict[str, Any]) -> list[Any]:
    return [value[key] for key in sorted(value)]


def length(value: Any) -> int:
    return len(value.encode("utf-8", "surrogatepass")) if type(value) is str and not value.isascii() else len(value)


def _path(path: list[Any]) -> list[str | int]:
    for segment in path:
        if type(segment) is not str and type(segment) is not int:
            raise FunctionError(f"path segment must be either string or integer, not {value_kind(segment)}")
    return path


def get(value: Any, path: list[Any]) -> Any:
    return get_path(value, _path(path))


def set_(value: Any, path: list[Any], data: Any) -> Any:
    return set_path(value, _path(path), data)


def remove(value: Any, path: list[Any], compact_: bool | None) -> Any:
    return remove_path(value, _path(path), bool(compact_))


def _same_container_type(args: Args) -> TypeDef:
    kinds = args[0].kinds if args[0] is not None else ARR | OBJ
    return TypeDef(kinds & (ARR | OBJ) or ARR | OBJ, True)


def push(value: list[Any], item: Any) -> list[Any]:
    return [*value, item]


def append(value: list[Any], items: list[Any]) -> list[Any]:
    return value + items


def vrl_equal(a: Any, b: Any) -> bool:
    """VRL's value equality: kinds must match (1 is not 1.0, true is not 1), recursively."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is list:
        return len(a) == len(b) and all(vrl_equal(x, y) for x, y in zip(a, b))
    if kind is dict:
        return a.keys() == b.keys() and all(vrl_equal(a[key], b[key]) for key in a)
    return a == b


def includes(value: list[Any], item: Any) -> bool:
    return any(vrl_equal(candidate, item) for candidate in value)


def unique(value: list[Any]) -> list[Any]:
    result: list[Any] = []
    for item in value:
        if not any(vrl_equal(item, seen) for seen in result):
            result.append(item)
    return result


def object_from_array(values_: list[Any], keys_: list[Any] | None) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if keys_ is None:
        for pair in values_:
            if type(pair) is not list:
                raise FunctionError(f"expected array, got {value_kind(pair)}")
            if not pair:
                raise FunctionError("array value too short")
            key = pair[0]
            if key is None:
                continue
            if type(key) is not str:
                raise FunctionError("object keys must be strings")
            result[key] = pair[1] if len(pair) > 1 else None
        return result
    for key, item in zip(keys_, values_):
        if key is None:
            continue
        if type(key) is not str:
            raise FunctionError("object keys must be strings")
        result[key] = item
    return result


def zip_arrays(array_0: list[Any], array_1: list[Any] | None) -> list[list[Any]]:
    """VRL's zip: of two arrays, or of the arrays in one; as long as the shortest (an empty list: [])."""
    arrays = [array_0, array_1] if array_1 is not None else array_0
    for item in arrays:
        if type(item) is not list:
            raise FunctionError(f"expected array, got {value_kind(item)}")
    return [list(items) for items in zip(*arrays)] if arrays else []


def _zip_type(args: Args) -> TypeDef:
    single = args[0]
    sure = args[1] is not None or (single is not None and single.constant
                                   and all(type(item) is list for item in single.value))
    return TypeDef(ARR, not sure)


FUNCTIONS = [
    function("zip", (req("array_0", ARR), opt("array_1", ARR)), _zip_type, zip_arrays),
    function("merge", (req("to", OBJ), req("from", OBJ), opt("deep", BOOL)), _merge_type, merge),
    function(
        "compact",
        (req("value", OBJ | ARR), *(opt(name, BOOL) for name in ("recursive", "null", "string", "object", "array", "nullish"))),
        _compact_type,
        compact,
    ),
    function("flatten", (req("value", OBJ | ARR), opt("separator", B)), _compact_type, flatten),
    function("keys", (req("value", OBJ),), always(ARR), keys),
    function("values", (req("value", OBJ),), always(ARR), values),
    function("length", (req("value", ARR | OBJ | B),), always(I), length),
    function("get", (req("value", OBJ | ARR), req("path", ARR)), always(ANY, True), get),
    function("set", (req("value", OBJ | ARR), req("path", ARR), req("data", ANY)), _same_container_type, set_),
    function("remove", (req("value", OBJ | ARR), req("path", ARR), opt("compact", BOOL)), _same_container_type, remove),
    function("push", (req("value", ARR), req("item", ANY)), always(ARR), push),
    function("append", (req("value", ARR), req("items", ARR)), always(ARR), append),
    function("includes", (req("value", ARR), req("item", ANY)), always(BOOL), includes),
    function("unique", (req("value", ARR),), always(ARR), unique),
    function("object_from_array", (req("values", ARR), opt("keys", ARR)), always(OBJ, True), object_from_array),
]
