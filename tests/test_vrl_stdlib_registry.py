"""The function registry: every declaration is a VRL function, well formed, and tested against VRL."""

import ast
import importlib
import pathlib
import pkgutil
import subprocess
import sys

import pytest

from logagent.vrl import stdlib
from logagent.vrl.function import Function
from logagent.vrl.stdlib import FUNCTIONS, VRL_FUNCTION_NAMES
from logagent.vrl.stdlib.registry import FAMILIES

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


def _declaring_modules() -> dict[str, list[str]]:
    """Every module of ``vrl/stdlib`` that declares functions, imported, with the names it declares."""
    found = {}
    for info in pkgutil.iter_modules(stdlib.__path__):
        module = importlib.import_module(f"{stdlib.__name__}.{info.name}")
        declared = getattr(module, "FUNCTIONS", None)
        if isinstance(declared, list):
            found[info.name] = [function.name for function in declared]
    return found


def test_the_static_table_is_what_the_families_declare():
    declared = _declaring_modules()
    assert sorted(declared) == sorted(FAMILIES)
    for family, names in declared.items():
        assert len(names) == len(set(names)), family
        assert set(names) == set(FAMILIES[family]), family
    every = [name for names in FAMILIES.values() for name in names]
    assert len(every) == len(set(every)), "a name in two families"
    assert set(FUNCTIONS) == set(every) and len(FUNCTIONS) == len(every)


def test_a_lookup_imports_only_the_family_it_needs():
    code = (
        "import sys\n"
        "from logagent.vrl.program import compile_program\n"
        "compile_program('.a = downcase(string!(.b))')\n"
        "print(sorted(m.rpartition('.')[2] for m in sys.modules if m.startswith('logagent.vrl.stdlib.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=TESTS.parent, capture_output=True, text=True, check=True)
    loaded = set(ast.literal_eval(out.stdout))
    assert {"strings", "types"} <= loaded
    assert loaded.isdisjoint({"grok", "grok_library", "timestamps", "chrono_parse", "aws", "url", "redact", "misc", "codecs", "key_value"})


def test_unknown_names_are_not_functions():
    assert "parse_nonsense" not in FUNCTIONS
    assert FUNCTIONS.get("parse_nonsense") is None
    with pytest.raises(KeyError):
        FUNCTIONS["parse_nonsense"]
