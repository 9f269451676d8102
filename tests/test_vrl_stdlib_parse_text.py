"""Parsing functions on text against Vector's VRL."""

import pytest

from logagent.vrl.stdlib.regex import Regex
from tests.vrl_function_oracle import Event, outcome_of_ours, outcome_of_vrl, same

JSON_OK = ['{ "field": "value" }', "[true, 0]", '"hello"', "42", "42.13", "false", "null", "-0", "-0.0", "1e3", "1E-2",
           '{"a": {"b": [1, {"c": null}]}, "é": "\\u00e9\\n"}', "9223372036854775807", "9223372036854775808",
           "-9223372036854775809", "18446744073709551616", "123456789012345678901234567890", ' \n {"a":1} \t',
           '{"a":1,"a":2}', "\ufeff[1]", '"\\ud83d\\ude00"', "[" * 128 + "]" * 128, "0.1", "1.7976931348623157e308"]
JSON_BAD = ["{ INVALID }", "", "[1,2", "tru", "{'a': 1}", "1 2", "NaN", '{"a" 1}', "[1,]", '"\\x"', "01", "1e400",
            "[" * 129 + "]" * 129]


@pytest.mark.parametrize("text", JSON_OK)
def test_parse_json(text):
    same("parse_json", text)
    same("parse_json", Event(text))


@pytest.mark.parametrize("text", JSON_BAD)
def test_parse_json_errors_fail_alike(text):
    ours, theirs = outcome_of_ours("parse_json", text), outcome_of_vrl("parse_json", text)
    assert ours[0] == theirs[0] == "error"
    assert ours[1].split(":")[0] == theirs[1].split(":")[0] == "unable to parse json"


@pytest.mark.parametrize("text", ['{"first_level":{"second_level":"finish"}}', '{"a": {"b" : [1, 2]}, "c": 3}',
                                  '[1, [2, [3]], {"x": {}}]', '"s"', "5"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_parse_json_max_depth(text, depth):
    same("parse_json", text, max_depth=depth)


@pytest.mark.parametrize("depth", [0, 129, -1])
def test_parse_json_bad_depth(depth):
    same("parse_json", "{}", max_depth=depth)


@pytest.mark.parametrize("text", ["-42", "42", "+7", "0x2a", "0b101", "0o17", "017", "0", "08", "", "abc", "0x",
                                  "99999999999999999999", "-9223372036854775808", "1.5", " 1"])
def test_parse_int(text):
    same("parse_int", text)
    for base in (2, 10, 16, 36):
        same("parse_int", text, base)


def test_parse_int_bad_base():
    same("parse_int", "10", 1)
    same("parse_int", "10", 37)


@pytest.mark.parametrize("text", ["-42", "42.38", "2.5e3", "", "abc", "inf", "NaN", "1e400", ".5", "1_0"])
def test_parse_float(text):
    same("parse_float", text)


PATTERNS = [r"^(?P<host>[\w\.]+) - (?P<user>[\w]+)", r"(?P<fruit>[\w\.]+) and (?P<veg>[\w]+)", r"(a)?(b)(?P<c>c)?",
            r"(?P<level>INFO|WARN|ERROR)", r"^(?P<ts>\S+) (?P<lvl>\w+) (?P<msg>.*)$", r"x*"]
TEXTS = ["8.7.6.5 - zorp", "apples and carrots, peaches and peas", "b", "abc bc", "2024-01-01T00:00:00Z ERROR é boom",
         "", "nothing here"]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("text", TEXTS)
def test_parse_regex(pattern, text):
    for numeric in (None, True, False):
        named = {} if numeric is None else {"numeric_groups": numeric}
        same("parse_regex", text, Regex(pattern), **named)
        same("parse_regex_all", text, Regex(pattern), **named)


@pytest.mark.parametrize("text", ["1005ms", "1s", "1.5h", "1h30m", "2 d", "100µs", "100us", "1w", "x1s", "1S", "1min",
                                  "abc", "", "1", ".5s", "3ns 2s"])
@pytest.mark.parametrize("unit", ["s", "ms", "h", "ns", "y"])
def test_parse_duration(text, unit):
    same("parse_duration", text, unit)


KV = ["zork=zook zonk=nork", 'zork: zoog, nonk: "nink nork"', "app=my-app ip=1.2.3.4 user= msg=hello-world",
      "foo=bar foobar", "foo=bar foo=nor foo=baz", "foo=bar foo", "a = b c= d", '"quoted key"=v k="v \\" esc"',
      "k='single quoted' x=1", "  lead=1   trail=2  ", "", "=x", "a=1,b=2", 'msg="unterminated', "é=ü ñ",
      'level=info msg="Stopping all fetchers" tag=stopping_fetchers id=ConsumerFetcherManager-1382721708341',
      "k=v\tk2=v2", "a==b"]


@pytest.mark.parametrize("text", KV)
def test_parse_logfmt(text):
    ours, theirs = outcome_of_ours("parse_logfmt", text), outcome_of_vrl("parse_logfmt", text)
    assert ours[0] == theirs[0], (text, ours, theirs)
    if ours[0] == "ok" or "whole line" in theirs[1]:
        assert ours == theirs


@pytest.mark.parametrize("text", KV)
@pytest.mark.parametrize("options", [{}, {"key_value_delimiter": ":", "field_delimiter": ","}, {"whitespace": "strict"},
                                     {"accept_standalone_key": False}, {"field_delimiter": ","},
                                     {"whitespace": "strict", "accept_standalone_key": False}], ids=repr)
def test_parse_key_value(text, options):
    ours, theirs = outcome_of_ours("parse_key_value", text, **options), outcome_of_vrl("parse_key_value", text, **options)
    assert ours[0] == theirs[0], (text, options, ours, theirs)
    if ours[0] == "ok" or "whole line" in theirs[1]:
        assert ours == theirs
