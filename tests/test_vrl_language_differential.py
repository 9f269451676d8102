"""Differential test: our VRL compiler against Vector's VRL (vrl-python), program by program, record by record.

Each program of ``PROGRAMS`` runs in both on every record of ``RECORDS``:
the outcome (the event after the program, a runtime error, an abort, or a
compile error with its code and line:column) must be the same. Timestamps
are compared as instants (vrl-python prints them as text). h22b's
``tests/test_vrl_stdlib_*.py`` cover the functions; this corpus covers the
statement forms, operators, paths, errors and aborts.
"""

from __future__ import annotations

import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from tests.vrl_oracle import our_outcome, vrl_outcome  # noqa: E402

RECORDS = [
    {"message": "hello", "n": 3, "s": "abc", "o": {"a": 1, "b": {"c": [1, 2, {"d": "x"}]}}, "arr": [1, 2, 3]},
    {"message": '{"level":"warn","code":7,"msg":"dé jà"}', "kubernetes": {"pod_name": "web-0",
     "pod_labels": {"app": "web", "app.kubernetes.io/name": "w"}, "pod_namespace": "prod"}},
    {"message": "ERROR 2026-12-02 disk full", "level": None, "n": -2.5, "arr": [], "o": {}},
    {"message": "", "n": 0, "s": "ß✓", "arr": [[1, [2, [3]]], None], "flag": True},
    {"message": None, "n": None},
    {},
    {"message": "null", "n": 9223372036854775807, "s": "9", "arr": ["a", "b"], "flag": False},
]

PROGRAMS = [
    # what the compiler knows of fields set on an event of unknown shape (and forgets after branches)
    '.x = "a"\n.y = upcase(.x)',
    '. |= {"m": "a"}\n.y = upcase(.m)',
    ". |= parse_regex!(.message, r'(?P<m>.)')\n.y = upcase(.m)",
    '.a.b = "x"\n.y = upcase(.a.b)',
    'if true { .x = "a" }\n.y = upcase(.x)',
    '.x = "a"\n. = {}\n.y = upcase(.x)',
    '.x = "a"\ndel(.x)\n.y = upcase(.x)',
    '.o.p = 1\n.y = .o.q + 1',
    # assignment, paths, quoted segments, indexes, the root
    ".x = 1",
    ".x = .n",
    ".x.y.z = \"deep\"",
    '."a-b".c = 1',
    '.o."quoted key" = [1, 2]',
    ".arr[1] = 9",
    ".arr[5] = 1",
    ".arr[-1] = 0",
    ".new[2] = true",
    ".o.b.c[2].d = 5",
    ". = {}",
    '. = {"only": .message}',
    ". = merge(., {\"z\": 1})",
    '. |= {"added": 1, "message": "over"}',
    '.o |= {"k": 2}',
    ".x = .o.b.c[2].d",
    ".x = .arr[-1]",
    ".x = .arr[-9]",
    ".x = .o.b.c[0].nope",
    ".x = .missing.deep[3]",
    ".x = .",
    # local variables and scopes
    "x = .n; .y = x",
    'x = {"a": {"b": [1, 2]}}; x.a.b[1] = 5; .x = x',
    "x = .o; x.a = 2; .copy = x",
    'x.a = 1; .x = x',
    'y = "w"; .t = "a{{ y }}b"',
    "_ = 5; .x = 1",
    # del and exists
    ".x = del(.o)",
    "del(.o.b.c[0])",
    "del(.arr[0]); del(.arr[0])",
    ".x = del(.nope)",
    "del(.)",
    'del(.kubernetes.pod_labels); .k8s = del(.kubernetes)',
    '.x = exists(.o.a)',
    '.x = exists(.level)',
    '.x = exists(.arr[2])',
    '.x = exists(.arr[-4])',
    '.x = exists(.nope.deep)',
    # if / else if / else, blocks, predicates
    'if .n == 3 { .x = 1 } else if .n == 0 { .x = 2 } else { .x = 3 }',
    'if exists(.message) { .has = true }',
    '.x = if .s == "abc" { "yes" } else { "no" }',
    '.x = if false { 1 }',
    '{ .a = 1; .b = 2 }',
    'if true { x = 1; .in = x }',
    'x = 0; if .n == 3 { x = 1 }; .x = x',
    'if .flag == true { .x = "t" } else { .x = "f" }',
    # operators
    ".x = 1 + 2 * 3",
    ".x = 10 - 2 - 3",
    ".x = 7 / 2",
    ".x = 6 / 2.0",
    ".x = 1.5 * 2",
    '.x = "a" + "b"',
    '.x = "ab" * 3',
    ".x = 9223372036854775807 + 1",
    ".x = -9223372036854775807 * 3",
    ".x = 0.1 + 0.2",
    ".x = 1 == 1.0",
    ".x = [1] == [1.0]",
    '.x = {"a": 1} == {"a": 1}',
    '.x = "é" < "z"',
    ".x = 3 >= 2.5",
    ".x = true || false && false",
    ".x = false && true || true",
    ".x = null || \"fallback\"",
    ".x = .nope || .n",
    ".x = !true || true",
    '.x = !exists(.o)',
    '.x = {"a": 1} | {"b": 2}',
    ".x = 1 + 2 == 3",
    ".x = .n != null",
    ".x = t'2020-01-01T00:00:00Z' < t'2021-01-01T00:00:00.5Z'",
    ".t = t'2020-01-01T10:00:00.123456789+02:00'",
    # error handling: ??, x, err =, !
    '.x = to_int(.s) ?? -1',
    '.x, .err = to_int(.s)',
    'x, err = to_int(.message); .x = x; .e = err',
    '.x, err = .n + 1',
    '.x, err = .n / 0',
    '.x, err = .s < 1',
    '.x = string!(.message)',
    '.x = upcase!(.s)',
    '.x = to_int!(.n)',
    '.x = string(.message) ?? "none"',
    '.x = parse_json!(.message)',
    '. = merge(., parse_json!(string!(.message))) ?? .',
    'parsed, err = parse_json(.message); if err == null { .p = parsed } else { .perr = true }',
    '.x = upcase(.s) ?? downcase(.message) ?? "z"',
    '.x, err = "x" + .n',
    '.x, err = true && .flag',
    # abort and return
    "abort",
    'abort "because"',
    'if .n == 3 { abort }; .after = 1',
    '.before = 1; abort',
    # literals, unicode, nulls
    '.x = s\'raw \\n text\'',
    '.x = "tab\\tnew\\nline \\"q\\" \\\\ \\{"',
    '.x = "✓ ß 日本"',
    '.x = [1, "two", 3.0, null, true, [], {}]',
    '.x = {"nested": {"deep": [1, {"k": null}]}}',
    '.x = null',
    '.x = -0.5',
    '.x = 1_000_000',
    # comments, line breaks, semicolons
    '.x = 1 # a comment\n.y = 2',
    '.x = [\n  1,\n  2,\n]',
    '.x = {\n  "a": 1,\n  "b": 2\n}',
    '.x = true &&\n  false',
    '.a = 1;;\n\n.b = 2;',
    # compile errors: code and position as VRL
    ".x = .n + 1",
    ".x = upcase(.message)",
    "to_int(.n)",
    "if .n { .x = 1 }",
    "if to_int(.s) == 3 { .x = 1 }",
    ".x, err = 5",
    ".x = 1 ?? 2",
    ".x = upcase(5)",
    ".x = zz",
    ".x = nosuchfunction(1)",
    ".x = !.n",
    ".x = 1 < 2 == true",
    ".x = .o | .o",
    "abort 5",
    ".x = upcase()",
    ".x = upcase(\"a\", \"b\")",
    ".x = upcase(valu: \"a\")",
    ".x = upcase(to_string(.n))",
    ".x = to_int!(5)",
    "del(5)",
    ".x = 5 %",
    ".x = 1 -5",
    'if true { y = 1 }; .y = y',
    # split's items are strings, also after `?? []` (hyperdx-logs): the closure's calls need no `!`
    'xs = split(.message, ",") ?? []\n.n = 0\nfor_each(xs) -> |_i, v| { .last = upcase(v) }',
    'xs = split(string(.message) ?? "", " ")\n.o = map_values(xs) -> |v| { split(v, "=") }',
    'xs = split(string(.message) ?? "", " ")\n.first = upcase(xs[0])',
    'xs = split(string(.message) ?? "", " ")\n.first = upcase(xs[0]) ?? "none"',
    'xs = split(.message, " ") ?? [1]\nfor_each(xs) -> |_i, v| { .v = upcase(v) }',
    'xs = [1, "a"]\nif .n == 1 { xs = split("a b", " ") }\nfor_each(xs) -> |_i, v| { .v = upcase(v) }',
]


@pytest.fixture(scope="module")
def runtime():  # type: ignore[no-untyped-def]
    return vrl_python.VRLRuntime()


def test_the_corpus_is_large_enough() -> None:
    assert len(PROGRAMS) >= 100


@pytest.mark.parametrize("source", PROGRAMS)
def test_program_matches_vrl(runtime, source: str) -> None:  # type: ignore[no-untyped-def]
    for record in RECORDS:
        expected = vrl_outcome(runtime, source, record)
        got = our_outcome(source, record)
        assert got == expected, f"record {record!r}"
