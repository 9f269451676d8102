"""String functions against Vector's VRL."""

import pytest

from logagent.vrl.stdlib.regex import Regex
from tests.vrl_function_oracle import Event, same

TEXTS = ["", "foobar", "FooBar", "ÉCOLE été", "ΑΣ ΟΔΟΣ", "straße", "İx", "  \t padded \n\u00a0", "\x1c x \x1c", "a{b}c",
         "quote\"s\\ and\nlines", "日本語テキスト", "🙂 emoji 🙃"]
SUBS = ["", "o", "OB", "bar", "été", "É", "ς", "日本", "🙃"]


@pytest.mark.parametrize("name", ["downcase", "upcase", "strip_whitespace", "strlen"])
@pytest.mark.parametrize("text", TEXTS)
def test_one_string(name, text):
    same(name, text)
    same(name, Event(text))


def test_wrong_kind():
    same("downcase", Event(3))
    same("upcase", Event(None))
    same("contains", Event([1]), "a")


@pytest.mark.parametrize("name", ["contains", "starts_with", "ends_with"])
@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("sub", SUBS)
def test_search(name, text, sub):
    same(name, text, sub)
    same(name, text, sub, case_sensitive=False)
    same(name, text, sub, case_sensitive=True)


@pytest.mark.parametrize("subs", [[], ["o"], ["o", "BAR"], ["x"], [1]], ids=repr)
def test_contains_all(subs):
    same("contains_all", "foobar", subs)
    same("contains_all", "FOOBAR", subs, case_sensitive=False)


@pytest.mark.parametrize("pattern", ["o", "", "oo", "é", Regex("o|a"), Regex(r"foo(?P<num>\d+)bar"), Regex("a*"), Regex(r"\s+"),
                                     Regex(r"(\w)(\w)?")], ids=repr)
@pytest.mark.parametrize("text", ["foobar", "foo123bar", "", "été à la plage", "baaa"])
@pytest.mark.parametrize("count", [None, -1, 0, 1, 2])
def test_replace(pattern, text, count):
    for with_ in ["i", "$num", "<$1|${2}|$$|$x|$1a>", ""]:
        if count is None:
            same("replace", text, pattern, with_)
        else:
            same("replace", text, pattern, with_, count=count)


@pytest.mark.parametrize("pattern", ["b", "ba", "", " ", "é", Regex("ba"), Regex(r"\s*"), Regex(",")], ids=repr)
@pytest.mark.parametrize("text", ["foobar", "barbaz", "", "a b  c", "été,été", "a,b,,c,"])
@pytest.mark.parametrize("limit", [None, -1, 0, 1, 2, 3, 100])
def test_split(pattern, text, limit):
    if limit is None:
        same("split", text, pattern)
    else:
        same("split", text, pattern, limit)


@pytest.mark.parametrize("value", [[], ["a"], ["a", "b", "c"], ["a", 1], ["é", ""]], ids=repr)
@pytest.mark.parametrize("separator", [None, ",", "", " - "])
def test_join(value, separator):
    if separator is None:
        same("join", value)
    else:
        same("join", value, separator)


@pytest.mark.parametrize("value", ["foobar", "", "été", [0, 1, 2], []], ids=repr)
@pytest.mark.parametrize("start", [0, 1, 2, 3, 6, 7, -1, -3, -7])
@pytest.mark.parametrize("end", [None, 0, 1, 4, 10, -1, -2])
def test_slice(value, start, end):
    if end is None:
        same("slice", value, start)
    else:
        same("slice", value, start, end)


@pytest.mark.parametrize("text", ["foobar", "foo bar zoo", "", "été", "🙂🙃🙂"])
@pytest.mark.parametrize("limit", [-1, 0, 1, 3, 4, 20])
def test_truncate(text, limit):
    same("truncate", text, limit)
    same("truncate", text, limit, suffix="...")
    same("truncate", text, limit, suffix="")


@pytest.mark.parametrize("pattern", [r"foo", r"^\d+$", r"(?i)BAR", r"\w+é", r"\bx\b", "^$", r"\p{Greek}"])
@pytest.mark.parametrize("text", ["foobar", "123", "été", "x y", "", "αβγ"])
def test_match(pattern, text):
    same("match", text, Regex(pattern))
    same("match_any", text, [Regex(pattern), Regex("zzz")])


def test_match_any_needs_regexes():
    assert same("match_any", "a", ["a"])[0] == "compile"
    same("match_any", "a", [])


@pytest.mark.parametrize("pattern", ["o", "", "bar", "l", "é", Regex("b.r"), Regex("^b"), Regex(r"\bx"), Regex("(?:)"), Regex("."),
                                     Regex("x$")], ids=repr)
@pytest.mark.parametrize("text", ["foobar", "", "héllo", "xaxb", "xax", "aéb"])
def test_find(pattern, text):
    """Byte offsets, a start inside a character, a start past the end, and ``^``/``\\b`` seeing the text before it."""
    same("find", text, pattern)
    for start in [0, 1, 2, 3, 5, 6, 7, 100, -1]:
        if isinstance(pattern, Regex) and not 0 <= start <= len(text.encode()):
            continue  # VRL's regex search panics on a start outside the text (ours: null, as for a text pattern)
        same("find", text, pattern, start)


def test_find_wrong_kind():
    same("find", Event(3), "a")
    same("find", "abc", Event(1))
