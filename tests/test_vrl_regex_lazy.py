"""A regex without repetition loads RE2 only when a search needs it, and is the same regex as compiled by RE2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from logagent.user_regex import RegexError
from logagent.vrl.stdlib.regex import Regex
from logagent.vrl.stdlib.regex_bounded import bounded_pattern
from tests.test_vrl_regex_bounded import BOUNDED

PATTERNS = BOUNDED + [
    r"\<a", r"a\>", r"(?P<b>x)(?P<a>y)", r"(?P<a>x)(?P<a>y)", r"[z-a]", r"\1", r"\Qa", r"(?P<9x>a)", r"(?<name>a)(b)",
    r"[\d\s]x\D", r"\x41", r"\ta\n", r"a|b|", r"()", r"[^]]", r"\/\#\&\~\ \'\!",
]


def _with_re2(pattern: str) -> Regex:
    regex = Regex.__new__(Regex)  # RE2 alone: no re for ASCII texts either
    regex.pattern = pattern
    regex._compile()
    regex._search, regex._named, regex._required = None, False, ""
    return regex


def _outcome(make: object, pattern: str) -> tuple[object, ...]:
    try:
        regex = make(pattern)  # type: ignore[operator]
    except RegexError as error:
        return ("error", error.reason, error.index)
    texts = ["xa by GET /api/ab INFO", "ünï [ERROR] code", "level=info x", "2026-12-02 a", ""]
    return ("ok", regex.group_count, list(regex.names.items()),
            [regex.find_all(text) for text in texts], [regex.captures(text) for text in texts])


@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_bounded_pattern_is_the_pattern_re2_compiles(pattern: str) -> None:
    assert _outcome(Regex, pattern) == _outcome(_with_re2, pattern)


def test_the_corpus_has_bounded_patterns_of_both_outcomes() -> None:
    bounded = [p for p in PATTERNS if bounded_pattern(p) is not None]
    assert len(bounded) >= 15
    assert any(_outcome(Regex, p)[0] == "error" for p in bounded)


def test_ascii_searches_of_a_bounded_pattern_do_not_load_re2() -> None:
    code = (
        "import sys\n"
        "from logagent.vrl.program import compile_program\n"
        "from logagent.vrl.batch_records import run_records\n"
        "p = compile_program(\"x = parse_regex(string!(.message), r'[\\\\s\\\\[](?<level>INFO|ERROR)[\\\\s\\\\]]') ?? {}\\n.l = x.level\")\n"
        "assert p.run({'message': 'a [INFO] b'})[1]['l'] == 'INFO'\n"
        "assert run_records(p.batch, [{'message': 'c [ERROR] d'}])[0][1]['l'] == 'ERROR'\n"
        "assert 'logagent.user_regex.re2_binding' not in sys.modules\n"
        "p.run({'message': 'ü [INFO] b'})\n"
        "assert 'logagent.user_regex.re2_binding' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
