"""Object and array functions against Vector's VRL."""

import pytest

from tests.vrl_function_oracle import Event, same

OBJECTS = [{}, {"a": 1}, {"b": 2, "a": {"x": None, "y": [1, {}]}}, {"é": "ü", "": [], "k": {"a": {"b": {}}}},
           {"msg": "", "n": None, "list": [None, "", [], {}], "deep": {"e": {}, "f": ""}}]
ARRAYS = [[], [1], [1, [2, [3, [4]]], []], [None, "", [], {}, [None]], [1, 1.0, True, "1", [1], {"a": 1}, [1], 1]]


@pytest.mark.parametrize("to", OBJECTS, ids=repr)
@pytest.mark.parametrize("from_", OBJECTS + [{"a": {"y": "new", "z": 3}}, {"b": None}], ids=repr)
def test_merge(to, from_):
    same("merge", to, from_)
    same("merge", to, from_, deep=True)
    same("merge", to, from_, deep=False)


def test_merge_wrong_kinds():
    same("merge", Event({"a": 1}), Event("x"))
    same("merge", Event(None), {"a": 1})


@pytest.mark.parametrize("value", OBJECTS + ARRAYS + [{"a": " ", "b": "-", "c": [" "]}], ids=repr)
def test_compact(value):
    same("compact", value)
    for option in ("recursive", "null", "string", "object", "array", "nullish"):
        same("compact", value, **{option: False})
        same("compact", value, **{option: True})


@pytest.mark.parametrize("value", OBJECTS + ARRAYS + [{"a": {"b": 1}, "a.b": 2}], ids=repr)
def test_flatten(value):
    same("flatten", value)
    same("flatten", value, "_")
    same("flatten", value, separator="")


@pytest.mark.parametrize("value", OBJECTS, ids=repr)
def test_keys_values(value):
    same("keys", value)
    same("values", value)
    same("length", value)


@pytest.mark.parametrize("value", ["", "abc", "été", "🙂"] + ARRAYS, ids=repr)
def test_length(value):
    same("length", value)
    same("length", Event(value))


def test_length_wrong_kind():
    same("length", Event(3))


PATHS = [[], ["a"], ["b"], ["a", "y"], ["a", "y", 0], ["a", "y", -1], ["a", "y", -3], ["a", "y", 5], ["a", "x"], [0],
         [-1], [2], ["k", "a", "b"], ["a", "y", 1, "q"], ["a", 1.5], ["a", None], ["a", "y", 0, "z"]]


@pytest.mark.parametrize("value", OBJECTS[1:] + ARRAYS[1:], ids=repr)
@pytest.mark.parametrize("path", PATHS, ids=repr)
def test_get_set_remove(value, path):
    same("get", value, path)
    same("set", value, path, "new")
    same("set", value, path, {"n": [1]})
    same("remove", value, path)
    same("remove", value, path, compact=True)
    same("remove", value, path, compact=False)


@pytest.mark.parametrize("value", ARRAYS, ids=repr)
def test_arrays(value):
    same("push", value, 1)
    same("push", value, [None])
    same("append", value, [1, "x"])
    same("append", value, [])
    same("unique", value)
    for item in (1, 1.0, True, "1", [1], {"a": 1}, None, [], {}):
        same("includes", value, item)


@pytest.mark.parametrize("values, keys", [
    ([["a", 1], ["b", 2]], None), ([["a"], [None, 3], ["c", 1, 2]], None), ([[]], None), ([[1, 2]], None),
    ([1], None), ([1, 2, 3], ["a", "b"]), ([1, 2], ["a", None, "c"]), ([1], [2]), ([], []),
], ids=repr)
def test_object_from_array(values, keys):
    if keys is None:
        same("object_from_array", values)
    else:
        same("object_from_array", values, keys)
