"""Differences found by running real remap programs from public Vector configs, each as a minimal program.

Every program runs in our compiler and in Vector's VRL (vrl-python) on every
record; the outcome (event, runtime error, abort, or compile error code and
position) must be the same. The real programs are not copied here: each case
is a small program written for the construct that differed.
"""

from __future__ import annotations

import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from tests.vrl_oracle import our_outcome, vrl_outcome  # noqa: E402

RECORDS = [
    {"message": "2026/12/02 10:00:00 [error] 7#7: boom", "n": 1},
    {"message": '[{"key": "a"}, 2]'},
    {"message": '"text"'},
    {"message": '{"key": "a"}'},
    {"message": "not a time", "o": {"a": [1, 2]}},
    {"message": None},
]

PROGRAMS = [
    # `x, err = f()`: on an error x is its type's default; a timestamp's is the Unix epoch, and x stays a timestamp
    '.t, err = parse_timestamp(.message, "%Y/%m/%d %H:%M:%S")',
    't, err = parse_timestamp(.message, "%Y/%m/%d %H:%M:%S")\nif err == null { .u = to_unix_timestamp(t) }',
    't, _ = parse_timestamp(.message, format: "%Y/%m/%d %H:%M:%S")\n.u = to_unix_timestamp(t)',
    # after branches, what every branch knows of an object's fields stays known (a branch adding a field
    # to a variable or the event does not make the others unknown)
    'r = {"a": []}\nif .n == 1 { r.b = 1 }\nr.a = append(r.a, [1])\n.r = r',
    '.x = "a"\nif .n == 1 { .y = 1 }\n.z = upcase(.x)',
    '.x = "a"\nif .n == 1 { .x = 1 }\n.z = upcase(.x)',
    'r = {"a": "s"}\nif .n == 1 { r = {"a": "t", "b": 1} }\n.z = upcase(r.a)\n.w = upcase(r.b)',
    'r = {"a": "s"}\nif .n == 1 { r = {"b": 1} }\n.z = upcase(r.a)',
    'a = [1, "x"]\nif .n == 1 { a = [2, "y"] }\n.z = upcase(a[1])',
    '.o = {"a": "s"}\nif .n == 1 { del(.o.a) }\n.z = upcase(.o.a)',
    # del's second parameter, compact: a boolean (E110 otherwise); true prunes the containers the delete emptied
    'del(.email, .passport_number)',
    'del(.o, compact: .n)',
    'del(.o.a[0], compact: true)\ndel(.o.a[0], compact: true)',
    '.a = {"b": {"c": 1}, "d": 2}\ndel(.a.b.c, true)',
    '.a = {"b": {"c": 1}}\ndel(.a.b.c, false)',
    'x = {"a": {"b": 1}}\nc = true\ndel(x.a.b, c)\n.x = x',
    '.e = {}\ndel(.e.z, true)',
    'del(.o, true, true)',
    # the event may become any value (Vector makes records of it); a field written afterwards makes it an object
    '. = parse_json!(.message)',
    '. = parse_json!(.message)\nif .key == "a" { .group = 0 } else { .group = 1 }',
    '. = parse_json!(.message)\ndel(.x)\n.t = exists(.y)',
    '. = parse_json!(.message)\n.a.b = 1',
    '. = parse_json!(.message)\n.x = .key',
    '. = parse_json!(.message)\ndel(.x)',
    # an assignment's value may be an assignment; an if's predicate may be a group of expressions whose
    # variables live on after the if
    '.a = .b = 5',
    'x = y = {"k": .n}\n.x = x\n.y = y',
    '.a = (.b = 3)',
    '.a, err = .b = 5',
    '.a = .b = upcase(.message)',
    'if (c = contains(string(.message) ?? "", "boom"); c) { .hit = true }\n.c = c',
    'if (\n  a = 1\n  a == .n\n) { .y = a }',
    'if (a = 1;) { .y = 2 }',
    'if (.message) { .y = 1 }',
    '.x = (a = 1; a)',
    # the log parsers' objects have the fields (and only those) VRL's type checks know
    '. = parse_syslog!(.message)\n.c = contains(.message, "x")',
    'x = parse_syslog!(.message)\n.y = upcase(x.zzz)',
    'x = parse_syslog!(.message)\n.y = upcase(x.hostname)',
    'x = parse_apache_log!(.message, "combined")\n.y = upcase(x.agent)',
    'x = parse_klog!(.message)\n.y = x.line + 1',
    'x = parse_nginx_log!(.message, "error")\n.y = upcase(x.severity)',
    'x = parse_common_log!(.message)\n.y = upcase(x.zzz)',
    # arithmetic is typed by VRL's rules on exact kinds: a string on one side of + makes a string, else a
    # float on one side a float; the type gives `??` its union and `x, err =` its default
    'tmp = (.message + "x") ?? null\n.t = upcase(tmp) ?? "n"',
    '.result_c, err = .a + .b * .c / .d',
    '.r, err = .a * 1.5\n.s, err = 2.0 - .n\n.t, err = .a - .b\n.u, err = .a + .b\n.v, err = .a * 2',
    '.r, err = "x" + .n\n.s, err = .message + .n',
    'x = if .n == 1 { 1 } else { 2.0 }\n.r = x / 2',
    'x = if .n == 1 { 1 } else { 2.0 }\n.r = x + 1',
    'x = if .n == 1 { 1 } else { 2.0 }\n.r, err = x * 3\n.s = 7 / 2.5',
    '.r = 2 * "ab" + "c"\n.s = -1 * "ab"\n.t, err = 2 * .message',
    'x = if .n == 1 { 1 } else { null }\n.r, err = x + 1',
    # del makes no object where nothing was known, keeps a variable's type (the deleted path may be null),
    # and (unless compact is a constant false) the containers it emptied may be gone; del(x) is no path
    's, err = parse_json(.message)\n.h = del(s.f.k)\n.o = object(s.f) ?? {}',
    's = parse_json(.message) ?? {}\n.h = del(s.f.k)\n.o = object(s.f) ?? {}',
    'del(.f.k)\n.o = object(.f) ?? {}',
    'del(.f)\n.o = upcase(.f)',
    'del(.a[0])\n.o = upcase(.a)',
    's = "a"\ndel(s.f)\n.o = upcase(s)',
    '.f = {"k": 1}\ndel(.f.k)\n.o = object(.f) ?? {}',
    '.f = {"k": 1}\ndel(.f.k, compact: false)\n.o = object(.f) ?? {}',
    '.f = {"k": 1}\ndel(.f.k, compact: true)\n.o = object(.f) ?? {}',
    '.f = {"k": 1, "j": 2}\ndel(.f.k)\n.o = object(.f) ?? {}',
    '.f = {"g": {"k": 1}}\ndel(.f.g.k)\n.o = object(.f) ?? {}\n.p = object(.f.g) ?? {}',
    'x = {"a": 1}\n.a = del(x)',
    # VRL's argument binding: a keyword naming the parameter at the positional index moves the index on, so
    # a positional argument may follow keywords; a parameter given twice takes the last (both are checked)
    '.a = replace("foo", pattern: "o", with: "bar", 1)',
    '.a = replace(pattern: "o", "foo", with: "bar")',
    '.a = replace(with: "b", "foo", "o")',
    '.a = replace("foo", "o", pattern: "x", with: "y")',
    '.a = replace("foo", "o", "b", pattern: "f")',
    '.a = replace("foo", "o", pattern: 5, with: "y")',
    '.a = replace(count: 1, pattern: "o", "foo", "b")',
    '.a = replace("foo", "o", "b", count: 1, zz: 2)',
    '.a = replace("foo", "o", "b", zz: 2)',
    '.a = upcase("a", value: "b")',
    # more arguments than parameters is E106 at the first argument before any keyword is looked at
    # (vector-demos: parse_grok(..., remove_empty: true))
    "parsed, err = parse_grok(.message, s'%{WORD:w}', remove_empty: true)",
    # a failed regex's default is the empty regex
    'r, err = to_regex(.a)\n.s = match("abc", r)\n.t = r',
]


@pytest.fixture(scope="module")
def runtime():  # type: ignore[no-untyped-def]
    return vrl_python.VRLRuntime()


@pytest.mark.parametrize("source", PROGRAMS)
def test_program_matches_vrl(runtime, source: str) -> None:  # type: ignore[no-untyped-def]
    for record in RECORDS:
        assert our_outcome(source, record) == vrl_outcome(runtime, source, record), f"record {record!r}"
