"""The function registry: every declaration is a VRL function, well formed, and tested against VRL."""

import pathlib

from logagent.vrl.function import Function
from logagent.vrl.stdlib import FUNCTIONS, VRL_FUNCTION_NAMES

TESTS = pathlib.Path(__file__).resolve().parent


def test_every_function_is_one_vrl_has():
    assert set(FUNCTIONS) <= VRL_FUNCTION_NAMES
    assert {"parse_grok", "del", "exists", "for_each", "parse_json"} <= VRL_FUNCTION_NAMES


def test_declarations_are_well_formed():
    for name, declared in FUNCTIONS.items():
        assert isinstance(declared, Function) and declared.name == name
        params = [param.name for param in declared.params]
        assert len(params) == len(set(params)), name
        required = [param.required for param in declared.params]
        assert required == sorted(required, reverse=True), f"{name}: a required parameter after an optional one"
        declared.type_def(tuple(None for _ in declared.params))


def test_every_function_has_differential_tests():
    text = "".join(path.read_text() for path in TESTS.glob("test_vrl_stdlib_*.py"))
    untested = [name for name in FUNCTIONS if f'"{name}"' not in text]
    assert untested == []
