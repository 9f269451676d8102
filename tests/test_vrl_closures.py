"""Closures (for_each, map_values, map_keys, filter) against Vector's VRL (vrl-python)."""

from __future__ import annotations

import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from tests.vrl_oracle import our_outcome, vrl_outcome  # noqa: E402

PROGRAMS = [
    "for_each(object!(.o)) -> |k, v| { .out = push(array(.out) ?? [], k) }",
    "x = []\nfor_each(object!(.o)) -> |k, v| { x = push(x, v) }\n.x = x",
    "n = 0\nfor_each(array!(.a)) -> |i, v| { n = n + i }\n.n = n",
    '.m = map_values(object!(.o)) -> |v| { to_string(v) ?? "?" }',
    ".m = map_values(array!(.a)) -> |v| { v }",
    ".m = map_keys(object!(.o)) -> |k| { upcase(k) }",
    ".m = map_keys(object!(.o)) -> |k| { replace(k, r'[\\./]', \"_\") }",
    '.f = filter(object!(.o)) -> |k, v| { k != "a" }',
    ".f = filter(array!(.a)) -> |i, v| { i > 0 }",
    "for_each(.o) -> |k, v| { .x = k }",
    ".m = map_keys(object!(.o)) -> |k, v| { v }",
    "for_each(object!(.o)) -> |k| { .z = k }",
    'for_each(object!(.o)) -> |k, v| { .o = set!(.o, [k + "_"], v) }',
    'k = "outer"\nfor_each(object!(.o)) -> |k, v| { .z = k }\n.k = k',
    "for_each(object!(.o)) -> |k, v| {\n  newkey = replace(k, r'[\\./]', \"_\")\n"
    "  .o = set!(.o, [newkey], v)\n  if newkey != k {\n    .o = remove!(.o, [k], true)\n  }\n}",
    "for_each(object!(.o)) -> |k, v| { y = k }\n.y = y",
]
# recursive: true (hyperdx's spans program renames nested keys this way)
RECURSIVE = [
    ".m = map_keys(object!(.o), recursive: true) -> |k| { upcase(k) }",
    ".m = map_keys(object!(.o), true) -> |k| { replace(k, \".\", \"_\") }",
    ".m = map_keys(object!(.o), recursive: false) -> |k| { upcase(k) }",
    "x = 0\n.m = map_keys(object!(.o), recursive: true) -> |k| { x = x + 1; k + to_string(x) }\n.x = x",
    '.m = map_keys(object!(.o), recursive: true) -> |k| { "same" }',
    ".m = map_keys(object!(.o), recursive: .flag) -> |k| { upcase(k) }",
    ".m, .e = map_keys(object!(.o), recursive: .flag) -> |k| { upcase(k) }",
    '.m = map_keys(object!(.o), recursive: "yes") -> |k| { upcase(k) }',
    "r = true\n.m = map_keys(object!(.o), recursive: r) -> |k| { upcase(k) }",
    "for_each(object!(.o), recursive: true) -> |k, v| { .x = k }",
    "x = []\n.m = map_values(object!(.o), recursive: true) -> |v| { x = push(x, v); v }\n.x = x",
    ".m = map_values(object!(.o), recursive: true) -> |v| { if is_object(v) { {\"z\": 5} } else { 100 } }",
    ".m = map_values(array!(.a), recursive: true) -> |v| { if is_array(v) { [7] } else { to_string(v) ?? \"?\" } }",
    ".m = map_values(object!(.o), recursive: true) -> |v| { upcase(v) ?? v }",
]
RECORDS = [{"o": {"b": 1, "a": "x", "c.d/e": [1]}, "a": [3, 4, 5]}, {"o": {}, "a": []}, {"o": 3, "a": "s"},
           {"o": {"a": {"x": {"y": 1}}, "B": [{"k.z": [[{"y": "v"}]]}, {"w": 1}, 2], "b": {"z": None}},
            "a": [1, [2, {"a": "s"}]], "flag": True},
           {"o": {"a": {"b": 1}, "A": 2}, "flag": "x"}]


@pytest.mark.parametrize("source", PROGRAMS + RECURSIVE)
def test_matches_vrl(source: str) -> None:
    runtime = vrl_python.VRLRuntime()
    for record in RECORDS:
        assert our_outcome(source, record) == vrl_outcome(runtime, source, record), record
