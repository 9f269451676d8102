"""Unit tests for logagent.conditions (the VRL condition subset)."""

from __future__ import annotations

import pytest

from logagent.conditions import Condition, ConditionSyntaxError, compile_condition
from logagent.event import PER_LINE_KEYS, FileContext, LogEvent

K8S_RECORD = {
    "message": "Hello World",
    "stream": "stderr",
    "kubernetes": {
        "pod_namespace": "user-alice",
        "namespace_name": "user-alice",
        "namespace_labels": {"userNS": "true"},
        "pod_labels": {"app": "web", "app.kubernetes.io/name": "nginx"},
        "pod_ips": ["10.0.0.1", "10.0.0.2"],
    },
    "count": 5,
    "ratio": 2.5,
    "flag": True,
    "nothing": None,
}


def run(text: str, record: dict | None = None) -> bool:
    return compile_condition(text)(K8S_RECORD if record is None else record)


def errors_of(text: str, record: dict | None = None) -> tuple[bool, int]:
    condition = compile_condition(text)
    result = condition(K8S_RECORD if record is None else record)
    return result, condition.runtime_errors


# -- the conditions the project's configs use ------------------------------------

USER_POD = '.kubernetes.pod_namespace != null && starts_with(string!(.kubernetes.pod_namespace), "user-")'
USER_NS = '.kubernetes.namespace_name != null && starts_with(string!(.kubernetes.namespace_name), "user-")'


@pytest.mark.parametrize("text", [USER_POD, USER_NS])
def test_user_namespace_conditions(text: str) -> None:
    condition = compile_condition(text)
    assert condition({"kubernetes": {"pod_namespace": "user-bob", "namespace_name": "user-bob"}}) is True
    assert condition({"kubernetes": {"pod_namespace": "kube-system", "namespace_name": "kube-system"}}) is False
    # a missing namespace short-circuits before string!() could fail
    assert condition({"kubernetes": {}}) is False
    assert condition({}) is False
    assert condition.runtime_errors == 0
    # a non-string namespace makes string!() fail: false, counted
    assert condition({"kubernetes": {"pod_namespace": 7, "namespace_name": 7}}) is False
    assert condition.runtime_errors == 1


def test_stream_and_namespace_label_conditions() -> None:
    stderr = compile_condition('.stream == "stderr"')
    assert stderr({"stream": "stderr"}) is True
    assert stderr({"stream": "stdout"}) is False
    assert stderr({}) is False
    user_ns = compile_condition('.kubernetes.namespace_labels.userNS == "true"')
    assert user_ns({"kubernetes": {"namespace_labels": {"userNS": "true"}}}) is True
    assert user_ns({"kubernetes": {"namespace_labels": {"userNS": True}}}) is False
    assert user_ns({"kubernetes": {"namespace_labels": None}}) is False
    assert user_ns({"kubernetes": "not an object"}) is False
    assert stderr.runtime_errors == user_ns.runtime_errors == 0


def test_works_on_log_events() -> None:
    ctx = FileContext({"kubernetes": {"pod_namespace": "user-x", "namespace_labels": {"userNS": "true"}}})
    event = LogEvent("boom", "stderr", None, ctx)
    assert compile_condition(USER_POD)(event) is True
    assert compile_condition('.stream == "stderr" && .message == "boom"')(event) is True
    assert compile_condition("exists(.timestamp)")(event) is False
    assert compile_condition("exists(.message) && exists(.kubernetes.pod_namespace)")(event) is True
    assert compile_condition("exists(.) && is_object(.)")(event) is True


# -- paths ------------------------------------------------------------------------


def test_paths_quoted_segments_and_indexes() -> None:
    assert run('.kubernetes.pod_labels."app.kubernetes.io/name" == "nginx"')
    assert run('."kubernetes".pod_labels.app == "web"')
    assert run('.kubernetes.pod_ips[0] == "10.0.0.1"')
    assert run('.kubernetes.pod_ips[1] == "10.0.0.2"')
    assert run('.kubernetes.pod_ips[-1] == "10.0.0.2"')
    assert run('.kubernetes.pod_ips[-2] == "10.0.0.1"')
    assert run(".kubernetes.pod_ips[2] == null")
    assert run(".kubernetes.pod_ips[-3] == null")
    assert run(".message[0] == null")  # index on a string
    assert run(".kubernetes.pod_ips.first == null")  # key on an array
    assert run(".missing.deeper.still == null")
    assert run('.list[1].x == "y"', {"list": [{}, {"x": "y"}]})
    assert run('."with \\"quote\\"" == 1', {'with "quote"': 1})
    assert run(".@timestamp == 1", {"@timestamp": 1})


def test_whole_record_path() -> None:
    assert run('.a == 1 && exists(.)', {"a": 1})
    assert run("is_object(.)", {"a": 1})
    assert run("length(.) == 2", {"a": 1, "b": 2})
    ctx = FileContext({"file": "/x"})
    assert compile_condition("length(.) == 3")(LogEvent("m", "stdout", None, ctx)) is True


def test_collected_paths_and_metadata_only_detection() -> None:
    condition = compile_condition(USER_POD)
    assert condition.paths == frozenset({("kubernetes", "pod_namespace")})
    assert condition.reads_only_outside(PER_LINE_KEYS)
    both = compile_condition('.stream == "stderr" || exists(.kubernetes.pod_ips[0])')
    assert both.paths == frozenset({("stream",), ("kubernetes", "pod_ips", 0)})
    assert not both.reads_only_outside(PER_LINE_KEYS)
    assert not compile_condition("length(.) > 1").reads_only_outside(PER_LINE_KEYS)
    assert compile_condition("true").reads_only_outside(PER_LINE_KEYS)
    assert compile_condition('.kubernetes.pod_namespace == "x"').reads_only(PER_LINE_KEYS)


# -- literals ----------------------------------------------------------------------


def test_string_escapes_and_raw_strings() -> None:
    assert run('.v == "a\\tb\\nc\\r\\0\\"\\\\\\\'\\{"', {"v": "a\tb\nc\r\0\"\\'{"})
    assert run('.v == "ab\\\n      cd"', {"v": "abcd"})  # backslash-newline continues the string
    assert run(".v == s'raw\\n'", {"v": "raw\\n"})
    assert run(".v == s'it\\'s'", {"v": "it\\'s"})  # as in VRL the backslash stays
    with pytest.raises(ConditionSyntaxError, match=r"invalid escape character: \\q"):
        compile_condition('.v == "a\\qb"')
    with pytest.raises(ConditionSyntaxError, match="template strings"):
        compile_condition('.v == "{{ x }}"')


def test_numbers_and_equality_across_types() -> None:
    assert run(".count == 5") and run(".count == 5.0") and run(".ratio == 2.5")
    assert run(".count > 4.5") and run(".ratio < 3") and run(".count >= 5") and run(".count <= 5")
    assert run(".n == -3", {"n": -3}) and run(".n == 1000", {"n": 1_000}) and run(".n == 1_000", {"n": 1000})
    assert run(".n == 1.", {"n": 1.0})
    assert not run('.count == "5"')  # no coercion
    assert not run(".flag == 1")  # a boolean is not an integer
    assert run(".flag == true") and run(".flag != false")
    assert run(".a == [1, 2]", {"a": [1, 2]})
    assert not run(".a == [1.0, 2]", {"a": [1, 2]})  # inside arrays types must match
    assert run('.a == .b', {"a": {"x": [1]}, "b": {"x": [1]}})
    assert not run('.a == .b', {"a": {"x": [1]}, "b": {"x": [True]}})
    assert run('.v < "b"', {"v": "a"}) and not run('.v > "b"', {"v": "a"})
    with pytest.raises(ConditionSyntaxError, match="64 bits"):
        compile_condition(".n == 99999999999999999999")


# -- operators ------------------------------------------------------------------------


def test_logical_operators_share_one_precedence_level_left_to_right() -> None:
    # VRL parses a || b && c as (a || b) && c
    assert run("true || true && false") is False
    assert run("false && true || true") is True
    assert run("true || (true && false)") is True
    assert run("1 == 1 || 1 == 2 && false") is False


def test_error_coalescing_has_the_lowest_precedence() -> None:
    assert run('starts_with(.count, "a") ?? true') is True
    assert run('to_int(.message) ?? 42 == 42') is True  # (to_int(...)) ?? (42 == 42)
    assert run('starts_with(.count, "a") ?? false || true') is True
    result, errors = errors_of('starts_with(.message, "Hello") ?? false')
    assert (result, errors) == (True, 0)


def test_negation() -> None:
    assert run("!false") and not run("!true") and run("!!true")
    assert run("!exists(.missing)") and not run("!exists(.message)")
    assert run("!.flag == false")  # ! binds tighter than ==
    assert run('!(.stream == "stdout")')
    assert errors_of("!.count") == (False, 1)  # negating a non-boolean is an error
    assert errors_of("!.missing") == (False, 1)


def test_null_semantics_of_and_or() -> None:
    assert errors_of(".missing && true") == (False, 0)  # null is false on the left of &&
    assert errors_of("true && .missing") == (False, 0)
    assert errors_of("true && .count") == (False, 1)  # non-boolean operand: error
    assert errors_of(".count && true") == (False, 1)
    assert errors_of("false && .count") == (False, 0)  # short circuit
    assert errors_of(".missing || true") == (True, 0)  # || returns the first non-null, non-false value
    assert errors_of(".flag || .count") == (True, 0)
    assert errors_of('.message || true') == (False, 1)  # a string result is not a boolean
    assert errors_of(".missing || .nothing") == (False, 1)  # null result
    assert errors_of('.missing == null && .nothing == null') == (True, 0)


def test_comparison_type_errors_are_counted() -> None:
    assert errors_of('.count < "a"') == (False, 1)
    assert errors_of(".missing > 1") == (False, 1)
    assert errors_of("true < false") == (False, 1)
    assert errors_of(".count > 1 || .count < \"a\"") == (True, 0)  # right side never evaluated


def test_runtime_errors_count_and_reason() -> None:
    condition = compile_condition("string!(null) == \"x\"")
    assert condition({}) is False
    assert condition({}) is False
    assert condition.runtime_errors == 2
    assert "expected string, got null" in (condition.last_error or "")
    non_boolean = compile_condition(".message")
    assert non_boolean({"message": "x"}) is False
    assert non_boolean.runtime_errors == 1 and "not a boolean" in (non_boolean.last_error or "")


def test_a_broken_record_never_raises() -> None:
    class Broken:
        def get(self, key: str) -> object:
            raise KeyError(key)

    condition = compile_condition('.stream == "x"')
    assert condition(Broken()) is False
    assert condition.runtime_errors == 1


# -- functions -----------------------------------------------------------------------


def test_starts_with_ends_with_contains() -> None:
    assert run('starts_with(.message, "Hello")') and not run('starts_with(.message, "hello")')
    assert run('starts_with(.message, "hello", case_sensitive: false)')
    assert run('starts_with(.message, "hello", false)')
    assert run('ends_with(.message, "World")') and run('ends_with(.message, "WORLD", case_sensitive: false)')
    assert run('contains(.message, "lo Wo")') and not run('contains(.message, "LO WO")')
    assert run('contains(.message, "LO WO", case_sensitive: false)')
    assert run('contains(value: .message, substring: "lo")')
    assert run('contains(.message, .needle, case_sensitive: .cs)', {"message": "ABC", "needle": "b", "cs": False})
    assert errors_of('contains(.message, .needle, case_sensitive: .cs)', {"message": "A", "needle": "a", "cs": 1}) == (
        False,
        1,
    )
    assert errors_of('starts_with(.count, "5")') == (False, 1)
    assert errors_of("starts_with(.message, .missing)") == (False, 1)
    assert run('starts_with!(.message, "")')


def test_match_and_regex_translation() -> None:
    assert run("match(.message, r'^Hel+o W')")
    assert not run("match(.message, r'^World')")
    assert run("match(.message, r'(?i)hello')")
    assert errors_of("match(.count, r'5')") == (False, 1)
    # Rust '$' is the end of the text, not before a final newline
    assert not run("match(.v, r'c$')", {"v": "abc\n"})
    assert run("match(.v, r'(?m)c$')", {"v": "abc\nd"})
    assert run("match(.v, r'c\\z')", {"v": "abc"}) and not run("match(.v, r'c\\z')", {"v": "abc\n"})
    assert run("match(.v, r'^[[:alpha:]]+[[:digit:]]$')", {"v": "abc1"})
    assert not run("match(.v, r'^[[:alpha:]]+$')", {"v": "ab-c"})
    assert run("match(.v, r'(?<word>b)c')", {"v": "abc"})
    assert run("match(.v, r'a\\x{e9}')", {"v": "aé"})
    assert run("match(.v, r'it\\'s')", {"v": "it's"})
    # flags scope to the rest of their group, across alternatives
    assert run("match(.v, r'(?i)^ab|cd$')", {"v": "CD"})
    assert run("match(.v, r'^x|(?i)ab|cd$')", {"v": "CD"}) and not run("match(.v, r'^X|(?i)ab')", {"v": "x"})
    assert run("match(.v, r'^(?s:a.b)$')", {"v": "a\nb"})
    # as in Rust: Unicode classes, flags anywhere (scoped to the rest of their group)
    assert run("match(.v, r'^\\pL+$')", {"v": "été"}) and not run("match(.v, r'\\pL')", {"v": "42"})
    assert run("match(.v, r'ab(?i)c')", {"v": "abC"}) and not run("match(.v, r'ab(?i)c')", {"v": "ABc"})


def test_perl_classes_are_unicode_as_in_rust() -> None:
    assert run("match(.v, r'^\\d+$')", {"v": "١٢٣"}) and not run("match(.v, r'\\D')", {"v": "١٢٣"})
    assert run("match(.v, r'^\\w+$')", {"v": "éß_ｘ"}) and run("match(.v, r'^[\\w-]+$')", {"v": "é-ß"})
    assert run("match(.v, r'^\\s$')", {"v": "\u00a0"}) and run("match(.v, r'^[\\s]$')", {"v": "\u3000"})
    assert not run("match(.v, r'\\S')", {"v": " \t\u2028"})
    assert run("match(.v, r'\\u00e9\\U0001F600\\u{41}')", {"v": "é😀A"})
    assert run("match(.v, r'^a{ 2 , 3 }$')", {"v": "aaa"}) and run("match(.v, r'(?u)^a$')", {"v": "a"})


def test_pathological_pattern_does_not_hang() -> None:
    # catastrophic backtracking in a backtracking engine; linear time in RE2
    condition = compile_condition("match(.v, r'^(a+)+$') || match(.v, r'(x+x+)+y')")
    assert not condition({"v": "a" * 50_000 + "b"})
    assert not condition({"v": "x" * 50_000})
    assert condition({"v": "a" * 50_000})


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a(?=b)", "unsupported group"),
        ("(a)\\1", "unsupported escape"),
        ("\\p{Alphabetic}", "invalid character class range"),
        ("[a-z]\\p{Foo}", "invalid character class range"),
        ("\\Q.\\E", "unsupported escape"),
        ("a{,3}", "a literal '{' must be escaped"),
        ("\\<word", "word boundary"),
        ("a(?R)$", "unsupported flag 'R'"),
        ("[\\W]", "not supported inside"),
        ("[a[bc]]", "nested character classes"),
        ("[a-z&&[^aeiou]]", "set operation"),
        ("a++", "possessive"),
        ("(?x) a", "unsupported flag"),
        ("a(?<=b)", "unsupported group"),
        ("ab)", "unopened group"),
        ("[ab", "unclosed character class"),
        ("(ab", "unclosed group"),
    ],
)
def test_regex_constructs_that_differ_are_rejected_with_position(pattern: str, reason: str) -> None:
    with pytest.raises(ConditionSyntaxError, match=reason) as info:
        compile_condition(f"match(.message, r'{pattern}')")
    assert info.value.line == 1
    assert info.value.column >= len("match(.message, r'") + 1


def test_regex_errors_point_at_the_construct() -> None:
    prefix = "match(.message, r'"
    for pattern, index in [("ab\\p{Alphabetic}", 2), ("x\\d(?=b)", 3), ("\\w+[a", 3), ("\\d\\d)", 4), ("a(b", 3)]:
        with pytest.raises(ConditionSyntaxError) as info:
            compile_condition(f"{prefix}{pattern}')")
        assert (info.value.line, info.value.column) == (1, len(prefix) + index + 1), pattern
    # RE2's own rejections too, with the caret under the construct on its line
    with pytest.raises(ConditionSyntaxError) as info:
        compile_condition(".stream == \"stderr\" &&\n  match(.message, r'^\\d+ \\p{Bogus}')")
    assert (info.value.line, info.value.column) == (2, len("  match(.message, r'^\\d+ ") + 1)
    assert str(info.value).endswith("\n  " + " " * len("  match(.message, r'^\\d+ ") + "^")


def test_exists_and_is_null() -> None:
    assert run("exists(.message)") and run("exists(.nothing)") and not run("exists(.missing)")
    assert run("exists(.kubernetes.pod_labels.app)") and not run("exists(.kubernetes.pod_labels.nope)")
    assert run("exists(.kubernetes.pod_ips[-2])") and not run("exists(.kubernetes.pod_ips[2])")
    assert run("is_null(.nothing)") and run("is_null(.missing)") and not run("is_null(.count)")
    with pytest.raises(ConditionSyntaxError, match="takes a field path"):
        compile_condition('exists(string!(.message))')


def test_string_to_int_length_case_and_includes() -> None:
    assert run('string(.message) == "Hello World"') and run('string!(.message) == "Hello World"')
    assert errors_of("string(.count) == \"5\"") == (False, 1)
    assert run('to_int!(.v) == 42', {"v": "42"}) and run('to_int(.v) == -7', {"v": "-7"})
    assert run('to_int(.v) == 5', {"v": "+5"}) and run("to_int(.v) == 2", {"v": 2.9})
    assert run('to_int(.v) == -2', {"v": -2.9}) and run('to_int(.v) == 1', {"v": True})
    assert run('to_int(.v) == 0', {}) and run('to_int(.v) == 9223372036854775807', {"v": 1e20})
    for bad in (" 5", "1_000", "", "0x10", "99999999999999999999", "٣"):
        assert errors_of("to_int(.v) == 0", {"v": bad}) == (False, 1), bad
    assert errors_of("to_int(.v) == 0", {"v": [1]}) == (False, 1)
    assert run("length(.message) == 11") and run("length(.kubernetes.pod_ips) == 2")
    assert run("length(.kubernetes.pod_labels) == 2")
    assert run('length(.v) == 2', {"v": "é"})  # VRL counts UTF-8 bytes
    assert errors_of("length(.count) == 1") == (False, 1)
    assert run('downcase(.message) == "hello world"') and run('upcase(.message) == "HELLO WORLD"')
    assert errors_of('downcase(.count) == "5"') == (False, 1)
    assert run('includes(.kubernetes.pod_ips, "10.0.0.2")') and not run('includes(.kubernetes.pod_ips, "x")')
    assert run('includes(["kube-system", "default"], .ns)', {"ns": "default"})
    assert not run("includes([1, 2], 1.0)") and run("includes([1, null], .missing)")
    assert run("includes([.a, 2], 3)", {"a": 3})
    assert errors_of('includes(.message, "H")') == (False, 1)
    assert run("is_string(.message) && is_integer(.count) && is_float(.ratio) && is_boolean(.flag)")
    assert run("is_array(.kubernetes.pod_ips) && is_object(.kubernetes) && !is_integer(.flag)")


def test_function_argument_errors() -> None:
    with pytest.raises(ConditionSyntaxError, match="missing its required argument 'substring'"):
        compile_condition("starts_with(.message)")
    with pytest.raises(ConditionSyntaxError, match="no argument 'case'"):
        compile_condition('starts_with(.message, "a", case: false)')
    with pytest.raises(ConditionSyntaxError, match="given twice"):
        compile_condition('starts_with(.message, "a", value: "b")')
    with pytest.raises(ConditionSyntaxError, match="at most 3 arguments"):
        compile_condition('starts_with(.message, "a", true, 1)')
    with pytest.raises(ConditionSyntaxError, match="case_sensitive must be true or false"):
        compile_condition('starts_with(.message, "a", case_sensitive: 1)')
    with pytest.raises(ConditionSyntaxError, match="regex literal"):
        compile_condition('match(.message, "a")')
    with pytest.raises(ConditionSyntaxError, match="unknown function 'parse_json'"):
        compile_condition("parse_json(.message)")


# -- syntax errors ---------------------------------------------------------------------


def test_syntax_error_shows_line_column_and_caret() -> None:
    with pytest.raises(ConditionSyntaxError) as info:
        compile_condition('.stream == "stderr" &&\n  .kubernetes.pod_ips[0] === "x"')
    error = info.value
    assert (error.line, error.column) == (2, 28)
    assert str(error) == (
        "line 2, column 28: assignment is not supported in conditions (did you mean '=='?)\n"
        '    .kubernetes.pod_ips[0] === "x"\n'
        "                             ^"
    )


@pytest.mark.parametrize(
    ("text", "line", "column", "reason"),
    [
        ("", 1, 1, "empty"),
        (".a == 1 .b == 2", 1, 9, "single expression"),
        (".a == 1\n.b == 2", 2, 1, "single expression"),
        (".a == 1 == 2", 1, 9, "can't be chained"),
        ("1 < 2 == true", 1, 7, "can't be chained"),
        (".a + 1 == 2", 1, 4, "arithmetic"),
        ("x == 1", 1, 1, "variables are not supported"),
        (".a.0 == 1", 1, 4, "cannot be a number"),
        (".a[x] == 1", 1, 3, "array index"),
        ("(.a == 1", 1, 9, "close the parenthesis"),
        ('.a == "x', 1, 7, "unterminated string"),
        ('.a == {"x": 1}', 1, 7, "object literals"),
        (".a == 'x'", 1, 7, "single quotes"),
        ("starts_with(.a \"x\")", 1, 16, "between function arguments"),
        ("r'x' == .a", 1, 1, "only be used as the pattern"),
        ("\t.a ==", 1, 7, "expected a value"),
    ],
)
def test_syntax_errors(text: str, line: int, column: int, reason: str) -> None:
    with pytest.raises(ConditionSyntaxError, match=reason) as info:
        compile_condition(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert "^" in str(info.value) or text == ""


def test_multiline_sources_comments_and_trailing_semicolon() -> None:
    text = """
        # only user namespaces
        .kubernetes.pod_namespace != null &&
          starts_with(
            string!(.kubernetes.pod_namespace),
            "user-"
          );
    """
    condition = compile_condition(text)
    assert isinstance(condition, Condition) and condition.source == text
    assert condition(K8S_RECORD) is True
