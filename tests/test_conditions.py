"""Unit tests for conditions (``logagent.vrl.condition``): VRL programs compiled read-only, boolean results.

Compile errors are VRL's (codes and positions checked against vrl-python when
these cases were written; ``test_conditions_vrl.py`` compares a corpus).
"""

from __future__ import annotations

from typing import Any

import pytest

from logagent.event import PER_LINE_KEYS, FileContext, LogEvent
from logagent.vrl.condition import Condition, ConditionError, compile_condition
from logagent.vrl.diagnostic import VrlError

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


def compile_error(text: str) -> VrlError:
    with pytest.raises(VrlError) as info:
        compile_condition(text)
    return info.value


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


# -- the record read where it lives ------------------------------------------------


def test_works_on_log_events_and_file_contexts() -> None:
    ctx = FileContext({"kubernetes": {"pod_namespace": "user-x", "namespace_labels": {"userNS": "true"}}})
    event = LogEvent("boom", "stderr", None, ctx)
    assert compile_condition(USER_POD)(event) is True
    assert compile_condition(USER_POD)(ctx) is True
    assert compile_condition('.stream == "stderr" && .message == "boom"')(event) is True
    assert compile_condition("exists(.timestamp)")(event) is False
    assert compile_condition("exists(.message) && exists(.kubernetes.pod_namespace)")(event) is True
    assert compile_condition("exists(.) && is_object(.)")(event) is True
    assert compile_condition("length(.) == 1")(ctx) is True


class OnlyGet:
    """A record that can only be asked for one top-level field at a time (no ``to_dict``)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields
        self.asked: list[str] = []

    def get(self, key: str) -> Any:
        self.asked.append(key)
        return self.fields.get(key)

    def has(self, key: str) -> bool:
        return key in self.fields


def test_fields_are_read_through_get_without_making_a_dict() -> None:
    record = OnlyGet({"message": "x", "kubernetes": {"pod_labels": {"app": "web"}}, "gone": None})
    text = ('.kubernetes.pod_labels.app == "web" && contains(string!(.message), "x") && exists(.gone) '
            '&& !exists(.nope) && is_null(.kubernetes.pod_labels.nope)')
    assert compile_condition(text)(record) is True
    assert set(record.asked) == {"kubernetes", "message", "gone", "nope"}


def test_a_log_events_timestamp_is_a_timestamp() -> None:
    event = LogEvent("m", "stdout", "2026-12-02T10:00:00.123456789Z", FileContext({}))
    assert compile_condition("is_timestamp(.timestamp)")(event) is True
    assert compile_condition(".timestamp == t'2026-12-02T10:00:00.123456789Z'")(event) is True
    assert compile_condition("timestamp!(.timestamp) > t'2026-12-02T09:59:59Z'")(event) is True
    assert compile_condition('.timestamp == "2026-12-02T10:00:00.123456789Z"')(event) is False
    assert compile_condition('format_timestamp!(.timestamp, "%Y") == "2026"')(event) is True
    assert compile_condition("is_timestamp(.timestamp)")({"timestamp": "2026-12-02T10:00:00Z"}) is False


def test_the_whole_record_sees_the_timestamp_as_one_too() -> None:
    event = LogEvent("m", "stdout", "2026-12-02T10:00:00Z", FileContext({"file": "/x"}))
    assert compile_condition("is_timestamp(get!(., [\"timestamp\"]))")(event) is True
    assert compile_condition("length(.) == 4")(event) is True


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
    assert both.paths == frozenset({("stream",), ("kubernetes", "pod_ips")})  # exists reads the array
    assert not both.reads_only_outside(PER_LINE_KEYS)
    assert not compile_condition("length(.) > 1").reads_only_outside(PER_LINE_KEYS)
    assert compile_condition("true").reads_only_outside(PER_LINE_KEYS)
    assert compile_condition('.kubernetes.pod_namespace == "x"').reads_only(PER_LINE_KEYS)
    variable = compile_condition('k = .kubernetes\nk.pod_namespace == "x"')
    assert variable.paths == frozenset({("kubernetes",)}) and variable.reads_only_outside(PER_LINE_KEYS)


def test_a_condition_calling_an_impure_function_is_never_answered_per_context() -> None:
    condition = compile_condition('.kubernetes.pod_namespace == "x" && now() > t\'2020-01-01T00:00:00Z\'')
    assert not condition.pure and not condition.reads_only_outside(PER_LINE_KEYS)


# -- literals ----------------------------------------------------------------------


def test_string_escapes_and_raw_strings() -> None:
    assert run('.v == "a\\tb\\nc\\r\\0\\"\\\\\\\'\\{"', {"v": "a\tb\nc\r\0\"\\'{"})
    assert run(".v == s'raw\\n'", {"v": "raw\\n"})
    assert compile_error('.v == "a\\qb"').code == "E202"
    assert compile_error('.v == "{{ x }}"').code == "E701"  # a template naming an undefined variable


def test_numbers_and_equality_across_types() -> None:
    assert run(".count == 5") and run(".count == 5.0") and run(".ratio == 2.5")
    assert run("int!(.count) > 4.5") and run("float!(.ratio) < 3") and run("int!(.count) >= 5")
    assert run(".n == -3", {"n": -3}) and run(".n == 1000", {"n": 1_000}) and run(".n == 1_000", {"n": 1000})
    assert not run('.count == "5"')  # no coercion
    assert not run(".flag == 1")  # a boolean is not an integer
    assert run(".flag == true") and run(".flag != false")
    assert run(".a == [1, 2]", {"a": [1, 2]})
    assert not run(".a == [1.0, 2]", {"a": [1, 2]})  # inside arrays types must match
    assert run('.a == .b', {"a": {"x": [1]}, "b": {"x": [1]}})
    assert not run('.a == .b', {"a": {"x": [1]}, "b": {"x": [True]}})
    assert run('string!(.v) < "b"', {"v": "a"}) and not run('string!(.v) > "b"', {"v": "a"})
    assert compile_error(".n == 99999999999999999999").code == "E202"


# -- operators ------------------------------------------------------------------------


def test_logical_operators_share_one_precedence_level_left_to_right() -> None:
    # VRL parses a || b && c as (a || b) && c
    assert run("true || true && false") is False
    assert run("false && true || true") is True
    assert run("true || (true && false)") is True
    assert run("1 == 1 || 1 == 2 && false") is False


def test_error_coalescing() -> None:
    assert run('starts_with(.count, "a") ?? true') is True
    assert run('(to_int(.message) ?? 42) == 42') is True
    assert run('starts_with(.count, "a") ?? false || true') is True
    assert errors_of('starts_with(.message, "Hello") ?? false') == (True, 0)
    # ?? has the lowest precedence: the result is an integer or a boolean, not a condition
    assert isinstance(compile_error("to_int(.message) ?? 42 == 42"), ConditionError)


def test_negation() -> None:
    assert run("!false") and not run("!true") and run("!!true")
    assert run("!exists(.missing)") and not run("!exists(.message)")
    assert run('!(.stream == "stdout")')
    assert run("!bool!(.flag) == false")
    assert (compile_error("!.count").code, compile_error("!.flag == false").code) == ("E660", "E660")


def test_null_semantics_of_and_or() -> None:
    assert run("null && true") is False and run("true && null") is False
    assert errors_of("is_null(.missing) || .missing == true") == (True, 0)
    assert errors_of('.missing == null && .nothing == null') == (True, 0)
    # a value of unknown type may not be a boolean: VRL refuses it as an operand of && (E100)
    assert compile_error(".missing && true").code == "E100"
    assert errors_of("true && .count") == (False, 1)  # as VRL: a constant left side makes && unchecked


def test_fallible_comparisons_need_their_types_asserted() -> None:
    error = compile_error(".count > 4")
    assert (error.code, error.line, error.column) == ("E100", 1, 1)
    assert errors_of('int!(.count) < 1 || string!(.message) < "a"') == (True, 0)
    assert errors_of("int!(.message) > 1") == (False, 1)
    assert errors_of("int!(.count) > 1 || string!(.count) < \"a\"") == (True, 0)  # right side never evaluated


def test_runtime_errors_count_and_reason() -> None:
    condition = compile_condition('string!(.missing) == "x"')
    assert condition({}) is False
    assert condition({}) is False
    assert condition.runtime_errors == 2
    assert "expected string, got null" in (condition.last_error or "")


def test_abort_makes_the_condition_false_and_is_counted() -> None:
    condition = compile_condition('if .stream == "stderr" { abort } else { true }')
    assert condition({"stream": "stdout"}) is True
    assert condition({"stream": "stderr"}) is False
    assert condition.runtime_errors == 1


def test_a_broken_record_never_raises() -> None:
    class Broken:
        def get(self, key: str) -> object:
            raise KeyError(key)

    condition = compile_condition('.stream == "x"')
    assert condition(Broken()) is False
    assert condition.runtime_errors == 1


# -- the result must be a boolean (Vector: "VRL conditions must return a boolean") ----


@pytest.mark.parametrize(("text", "fix"), [
    (".message", ".message == true"),
    (".flag || .count", "(.flag || .count) == true"),
    ('if .stream == "stderr" { true }', '(if .stream == "stderr" { true }) == true'),
    ('parse_json!(string!(.message))', 'parse_json!(string!(.message)) == true'),
    ("", None),
])
def test_a_result_that_may_not_be_a_boolean_is_a_compile_error(text: str, fix: str | None) -> None:
    error = compile_error(text)
    assert isinstance(error, ConditionError)
    assert str(error).startswith("line 1, column 1: VRL conditions must return a boolean")
    assert error.fix == fix


# -- read-only, as Vector compiles conditions ------------------------------------------


def test_assignments_to_the_record_are_refused() -> None:
    for text, column in [(".x = 1\ntrue", 1), ("%m = 1\ntrue", 1), ("x, .err = to_int(.a)\nx == 1", 4),
                         (". |= {}\ntrue", 1)]:
        error = compile_error(text)
        assert (error.code, error.line, error.column) == ("E315", 1, column), text
        assert "mutation of read-only value" in str(error)
    error = compile_error("del(.x) == null")
    assert error.code == "E610" and ".x is read-only, and cannot be deleted" in str(error)


def test_local_variables_blocks_and_every_function_of_remap() -> None:
    text = """
        parsed, err = parse_json(string!(.message))
        level = if err == null { downcase(string(parsed.level) ?? "") } else {
          downcase(parse_regex(string!(.message), r'^(?P<level>[A-Z]+) ').level ?? "")
        }
        includes(["error", "fatal"], level)
    """
    condition = compile_condition(text)
    assert condition({"message": '{"level": "ERROR"}'}) is True
    assert condition({"message": "FATAL disk full"}) is True
    assert condition({"message": "INFO ok"}) is False
    assert condition({"message": 5}) is False  # string!() fails inside what err captures
    assert condition.runtime_errors == 0
    assert run("x = {}\ndel(x.a) == null")  # deleting in a variable changes no record
    assert compile_error("x = 1\ndel(x) == 1").code == "E610"  # as VRL: a variable alone is no path


# -- functions -----------------------------------------------------------------------


def test_starts_with_ends_with_contains() -> None:
    assert run('starts_with(string!(.message), "Hello")') and not run('starts_with(string!(.message), "hello")')
    assert run('starts_with(string!(.message), "hello", case_sensitive: false)')
    assert run('starts_with(string!(.message), "hello", false)')
    assert run('ends_with(string!(.message), "World")')
    assert run('ends_with(string!(.message), "WORLD", case_sensitive: false)')
    assert run('contains(string!(.message), "lo Wo")') and not run('contains(string!(.message), "LO WO")')
    assert run('contains(string!(.message), "LO WO", case_sensitive: false)')
    assert run('contains(value: string!(.message), substring: "lo")')
    record = {"message": "ABC", "needle": "b", "cs": False}
    assert run('contains(string!(.message), string!(.needle), case_sensitive: bool!(.cs))', record)
    assert errors_of('contains!(.message, .needle, case_sensitive: .cs)', {"message": "A", "needle": "a", "cs": 1}) == (
        False, 1)
    assert errors_of('starts_with!(.count, "5")') == (False, 1)
    assert errors_of("starts_with!(.message, .missing)") == (False, 1)
    assert run('starts_with!(.message, "")')


def test_an_argument_of_unknown_type_is_e110_with_the_fix() -> None:
    error = compile_error('.stream == "stderr" && starts_with(.message, "x")')
    assert (error.code, error.line, error.column) == ("E110", 1, 36)
    assert 'but the parameter "value" expects the exact type string' in str(error)
    assert error.fix == 'starts_with(string!(.message), "x")'
    assert compile_error("length(.x) > 1").fix == "length!(.x)"


def test_match_and_regex_semantics() -> None:
    assert run("match!(.message, r'^Hel+o W')")
    assert not run("match(string!(.message), r'^World')")
    assert run("match!(.message, r'(?i)hello')")
    assert errors_of("match!(.count, r'5')") == (False, 1)
    # Rust '$' is the end of the text, not before a final newline
    assert not run("match!(.v, r'c$')", {"v": "abc\n"})
    assert run("match!(.v, r'(?m)c$')", {"v": "abc\nd"})
    assert run("match!(.v, r'c\\z')", {"v": "abc"}) and not run("match!(.v, r'c\\z')", {"v": "abc\n"})
    assert run("match!(.v, r'^[[:alpha:]]+[[:digit:]]$')", {"v": "abc1"})
    assert not run("match!(.v, r'^[[:alpha:]]+$')", {"v": "ab-c"})
    assert run("match!(.v, r'(?<word>b)c')", {"v": "abc"})
    assert run("match!(.v, r'a\\x{e9}')", {"v": "aé"})
    assert run("match!(.v, r'it\\'s')", {"v": "it's"})
    # flags scope to the rest of their group, across alternatives
    assert run("match!(.v, r'(?i)^ab|cd$')", {"v": "CD"})
    assert run("match!(.v, r'^x|(?i)ab|cd$')", {"v": "CD"}) and not run("match!(.v, r'^X|(?i)ab')", {"v": "x"})
    assert run("match!(.v, r'^(?s:a.b)$')", {"v": "a\nb"})
    assert run("match!(.v, r'^\\pL+$')", {"v": "été"}) and not run("match!(.v, r'\\pL')", {"v": "42"})
    assert run("match!(.v, r'ab(?i)c')", {"v": "abC"}) and not run("match!(.v, r'ab(?i)c')", {"v": "ABc"})


def test_perl_classes_are_unicode_as_in_rust() -> None:
    assert run("match!(.v, r'^\\d+$')", {"v": "١٢٣"}) and not run("match!(.v, r'\\D')", {"v": "١٢٣"})
    assert run("match!(.v, r'^\\w+$')", {"v": "éß_ｘ"}) and run("match!(.v, r'^[\\w-]+$')", {"v": "é-ß"})
    assert run("match!(.v, r'^\\s$')", {"v": "\u00a0"}) and run("match!(.v, r'^[\\s]$')", {"v": "\u3000"})
    assert not run("match!(.v, r'\\S')", {"v": " \t\u2028"})
    assert run("match!(.v, r'\\u00e9\\U0001F600\\u{41}')", {"v": "é😀A"})
    assert run("match!(.v, r'^a{ 2 , 3 }$')", {"v": "aaa"}) and run("match!(.v, r'(?u)^a$')", {"v": "a"})


def test_pathological_pattern_does_not_hang() -> None:
    # catastrophic backtracking in a backtracking engine; linear time in RE2
    condition = compile_condition("match!(.v, r'^(a+)+$') || match!(.v, r'(x+x+)+y')")
    assert not condition({"v": "a" * 50_000 + "b"})
    assert not condition({"v": "x" * 50_000})
    assert condition({"v": "a" * 50_000})


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("a(?=b)", "unsupported group"),
        ("(a)\\1", "unsupported escape"),
        ("\\p{Alphabetic}", "invalid character class range"),
        ("\\Q.\\E", "unsupported escape"),
        ("a{,3}", "a literal '{' must be escaped"),
        ("\\<word", "word boundary"),
        ("[\\W]", "not supported inside"),
        ("[a-z&&[^aeiou]]", "set operation"),
        ("a++", "possessive"),
        ("(?x) a", "unsupported flag"),
        ("ab)", "unopened group"),
        ("[ab", "unclosed character class"),
    ],
)
def test_regex_constructs_that_differ_are_rejected_at_the_literal(pattern: str, reason: str) -> None:
    error = compile_error(f".stream == \"x\" ||\n  match!(.message, r'{pattern}')")
    assert (error.code, error.line, error.column) == ("E101", 2, len("  match!(.message, ") + 1)
    assert reason in str(error)


def test_exists_and_is_null() -> None:
    assert run("exists(.message)") and run("exists(.nothing)") and not run("exists(.missing)")
    assert run("exists(.kubernetes.pod_labels.app)") and not run("exists(.kubernetes.pod_labels.nope)")
    assert run("exists(.kubernetes.pod_ips[-2])") and not run("exists(.kubernetes.pod_ips[2])")
    assert run("is_null(.nothing)") and run("is_null(.missing)") and not run("is_null(.count)")
    assert compile_error("exists(string!(.message))").code == "E610"


def test_conversions_length_case_and_includes() -> None:
    assert run('string!(.message) == "Hello World"') and run('(string(.message) ?? "") == "Hello World"')
    assert errors_of('string!(.count) == "5"') == (False, 1)
    assert run('to_int!(.v) == 42', {"v": "42"}) and run('to_int!(.v) == -7', {"v": "-7"})
    assert run('to_int!(.v) == 5', {"v": "+5"}) and run("to_int!(.v) == 2", {"v": 2.9})
    assert run('to_int!(.v) == 1', {"v": True}) and run('to_int!(.v) == 0', {})
    for bad in (" 5", "1_000", "", "0x10", "99999999999999999999", "٣"):
        assert errors_of("to_int!(.v) == 0", {"v": bad}) == (False, 1), bad
    assert errors_of("to_int!(.v) == 0", {"v": [1]}) == (False, 1)
    assert run("length!(.message) == 11") and run("length!(.kubernetes.pod_ips) == 2")
    assert run("length!(.kubernetes.pod_labels) == 2")
    assert run('length!(.v) == 2', {"v": "é"})  # VRL counts UTF-8 bytes
    assert errors_of("length!(.count) == 1") == (False, 1)
    assert run('downcase!(.message) == "hello world"') and run('upcase!(.message) == "HELLO WORLD"')
    assert errors_of('downcase!(.count) == "5"') == (False, 1)
    assert run('includes!(.kubernetes.pod_ips, "10.0.0.2")') and not run('includes!(.kubernetes.pod_ips, "x")')
    assert run('includes(["kube-system", "default"], .ns)', {"ns": "default"})
    assert not run("includes([1, 2], 1.0)") and run("includes([1, null], .missing)")
    assert run("includes([.a, 2], 3)", {"a": 3})
    assert errors_of('includes!(.message, "H")') == (False, 1)
    assert run("is_string(.message) && is_integer(.count) && is_float(.ratio) && is_boolean(.flag)")
    assert run("is_array(.kubernetes.pod_ips) && is_object(.kubernetes) && !is_integer(.flag)")


@pytest.mark.parametrize(("text", "code", "column"), [
    ("starts_with(string!(.message))", "E107", 1),
    ('starts_with(string!(.message), "a", case: false)', "E108", 37),
    ('starts_with(string!(.message), "a", true, 1)', "E106", 13),
    ('starts_with(string!(.message), "a", case_sensitive: 1)', "E110", 53),
    ('match(string!(.message), "a")', "E110", 26),
    ("nosuch(.message)", "E105", 1),
])
def test_function_argument_errors(text: str, code: str, column: int) -> None:
    error = compile_error(text)
    assert (error.code, error.line, error.column) == (code, 1, column)


# -- syntax errors ---------------------------------------------------------------------


def test_an_error_shows_line_column_and_caret() -> None:
    error = compile_error('.stream == "stderr" &&\n  starts_with(.message, "x")')
    assert (error.line, error.column) == (2, 15)
    assert str(error).startswith(
        "line 2, column 15: error[E110]: invalid argument type\n"
        '    starts_with(.message, "x")\n'
        "                ^^^^^^^^\n"
    )


@pytest.mark.parametrize(
    ("text", "line", "column", "code"),
    [
        (".a == 1 .b == 2", 1, 9, "E203"),
        (".a == 1 == 2", 1, 9, "E650"),
        ("1 < 2 == true", 1, 7, "E650"),
        (".a + 1 == 2", 1, 1, "E100"),
        ("x == 1", 1, 1, "E701"),
        (".a[x] == 1", 1, 4, "E203"),
        (".a == 'x'", 1, 7, "E203"),
        ('starts_with(.a "x")', 1, 16, "E203"),
    ],
)
def test_syntax_errors(text: str, line: int, column: int, code: str) -> None:
    error = compile_error(text)
    assert (error.code, error.line, error.column) == (code, line, column)
    assert "^" in str(error)


def test_several_statements_the_last_one_decides() -> None:
    assert run('.stream == "stdout"\n.stream == "stderr"') is True
    assert run('.stream == "stderr"; false') is False


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


def test_each_compile_gives_its_own_counters() -> None:
    first, second = compile_condition('string!(.x) == "a"'), compile_condition('string!(.x) == "a"')
    assert first({}) is False and first.runtime_errors == 1 and second.runtime_errors == 0


def test_every_bad_condition_of_a_config_is_named_with_its_key_path() -> None:
    from logagent.config import ConfigError, parse_config

    text = """
        data_dir: /tmp/x
        api: {enabled: false}
        kubernetes: {node_name: n, snapshot: /tmp/s.json}
        sources:
          pods: {type: kubernetes_logs, log_dir: /tmp/pods}
        transforms:
          keep: {type: filter, inputs: [pods], condition: 'starts_with(.message, "x")'}
          r:
            type: route
            inputs: [pods]
            route: {a: '.x = 1', ok: '.stream == "stderr"', b: {type: vrl, source: '.flag'}}
          t: {type: throttle, inputs: [pods], threshold: 10, window_secs: 1, exclude: {type: vrl, source: '!.x'}}
        sinks:
          out: {type: console, inputs: [keep, r.a, t], encoding: json}
    """
    with pytest.raises(ConfigError) as info:
        parse_config(text, {})
    found = {(error.path, error.message.split("\n")[0]) for error in info.value.errors}
    assert found == {
        ("transforms.keep.condition", "line 1, column 13: error[E110]: invalid argument type"),
        ("transforms.r.route.a", "line 1, column 1: error[E315]: mutation of read-only value"),
        ("transforms.r.route.b.source", "line 1, column 1: VRL conditions must return a boolean"),
        ("transforms.t.exclude.source", "line 1, column 1: error[E660]: non-boolean negation"),
    }
