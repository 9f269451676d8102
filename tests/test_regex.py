"""compile_regex: the RE2 engine behind VRL's match(), and its literal pre-check."""

from __future__ import annotations

import random

import pytest
import re2
from logagent.user_regex.re2_binding import UNANCHORED, compile_native

from logagent.user_regex import RegexError, compile_regex, required_literal


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"^level=error", "level=error"),
        (r"status=5\d\d", "status=5"),
        (r"ms=[0-9]+ seq=0+1", " seq=0"),
        (r"panic: .*goroutine", "goroutine"),
        ("abc?", "ab"),
        ("a{0,2}bc", "bc"),
        ("err(or)?!", "err"),
        ("ab+?cd", "ab"),
        (r"a\.b\.c", "a.b.c"),
        ("é€ab", "é€ab"),
        # nothing sure enough to check first
        ("(?i)timeout|refused", None),
        ("error|warn", None),
        ("ab*c", None),
        (r"\x{e9}abc", None),
        ("(?s:abc)x", None),
        ("[abc]", None),
        ("x(?i)abc", None),
    ],
)
def test_required_literal(pattern: str, literal: str | None) -> None:
    assert required_literal(pattern) == literal


def _random_pattern(rng: random.Random) -> str:
    atoms = ["a", "b", "ab", "ba", "\\.", ".", "[ab]", "[^a]", "(ab|b)", "(a)", "\\d", "^", "$", "(?:ba)", "é"]
    quantifiers = ["", "", "", "?", "*", "+", "{2}", "{0,2}", "{1,}", "??", "+?"]
    parts = []
    for _ in range(rng.randint(1, 6)):
        atom = rng.choice(atoms)
        quantifier = rng.choice(quantifiers) if atom not in ("^", "$") else ""
        parts.append(atom + quantifier)
    pattern = "".join(parts)
    return pattern if rng.random() < 0.9 else pattern + "|" + rng.choice(atoms)


def test_the_literal_check_never_changes_an_answer() -> None:
    """Pattern.search against RE2 alone, on random patterns and texts."""
    rng = random.Random(16)
    options = re2.Options()
    options.log_errors = False
    checked = with_literal = 0
    for _ in range(400):
        text_pattern = _random_pattern(rng)
        try:
            pattern = compile_regex(text_pattern)
        except RegexError:
            continue
        plain = compile_native(text_pattern.replace("\\d", "\\p{Nd}"), options)
        with_literal += pattern.required is not None
        for _ in range(30):
            text = "".join(rng.choice("ab.1é\n") for _ in range(rng.randint(0, 10)))
            data = text.encode()
            expected = plain.Match(UNANCHORED, data, 0, len(data))[0][0] >= 0
            assert pattern.search(text) == expected, (text_pattern, text, pattern.required)
            checked += 1
    assert checked > 5000 and with_literal > 50


def test_regex_error_carries_the_index() -> None:
    with pytest.raises(RegexError) as info:
        compile_regex("ab(?=c)")
    assert info.value.index == 2 and "unsupported group" in info.value.reason
    assert str(info.value) == f"{info.value.reason} (at character 3)"


def test_text_that_is_not_valid_utf8_does_not_raise() -> None:
    assert compile_regex("ab").search("xab\udcff") and not compile_regex("^ab$").search("a\udcffb")
