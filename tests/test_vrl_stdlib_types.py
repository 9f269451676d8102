"""Type assertions, predicates and coercions against Vector's VRL."""

import pytest

from logagent.vrl.stdlib.regex import Regex
from logagent.vrl.value import Timestamp
from tests.vrl_function_oracle import Event, same

TS = Timestamp(1_577_836_800_123_400_000)
VALUES = ["", "foo", "ünï", 0, -7, 2**63 - 1, 1.5, -0.0, 1e21, 1e-7, True, False, None, [], [1, "a"], {}, {"a": {"b": [None]}}, TS]
STRINGS = ["1", "+12", "-0", "", "-", "+", " 1", "1.0", "99999999999999999999", "-99999999999999999999", "0x10", "١٢",
           "1e5", ".5", "5.", "inf", "-Infinity", "NaN", "nan", "1_0", "e5", "1e", "t", "yes", "Y", "TRUE", "No", "on",
           "off", "10", "01", "-3", "foo\"bar", "tab\tnew\nline"]


@pytest.mark.parametrize("name", ["string", "int", "float", "bool", "object", "array", "timestamp"])
@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_assertions(name, value):
    same(name, value)
    if value is not TS:  # vrl-python takes no timestamps in events
        same(name, Event(value))


@pytest.mark.parametrize("name", ["to_string", "to_int", "to_float", "to_bool"])
@pytest.mark.parametrize("value", VALUES + STRINGS + [Regex("a+")], ids=repr)
def test_coercions(name, value):
    same(name, value)


@pytest.mark.parametrize("name", ["is_string", "is_integer", "is_float", "is_boolean", "is_timestamp", "is_array",
                                  "is_object", "is_null", "is_regex", "is_nullish"])
@pytest.mark.parametrize("value", VALUES + [Regex("x"), " ", "\u00a0\u2003", "-", " - "], ids=repr)
def test_predicates(name, value):
    same(name, value)


@pytest.mark.parametrize("value", ["{}", '"test"', "}{", "[1, 2", "1", "-1.5e3", "null", "nul", " true ", "NaN", "",
                                   '{"a": [1, {"b": null}]}', "\ufeff{}", "[" * 200 + "]" * 200])
@pytest.mark.parametrize("variant", [None, "object", "array", "bool", "number", "string", "null"])
def test_is_json(value, variant):
    if variant is None:
        same("is_json", value)
    else:
        same("is_json", value, variant=variant)


def test_is_json_variant_must_be_known():
    assert same("is_json", "{}", variant="map")[0] == "compile"


@pytest.mark.parametrize("value", ["", "a", [], [1], {}, {"a": 1}, Event(3)], ids=repr)
def test_is_empty(value):
    same("is_empty", value)
