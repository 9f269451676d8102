"""Patterns without repetition on Python's re give RE2's (and VRL's) captures on ASCII texts."""

from __future__ import annotations

import random

import pytest
import vrl_python

from logagent.vrl.stdlib.regex import Regex
from logagent.vrl.stdlib.regex_bounded import MAX_PATHS, bounded_pattern

BOUNDED = [
    r"[\s\[](?<level>INFO|WARN|WARNING|DEBUG|ERROR|TRACE|FATAL)[\s\]]",
    r"^(?P<year>\d\d\d\d)-(?<month>\d\d)",
    r"(?<kind>GET|POST|PUT) (?<path>/api/\w\w)",
    r"level=(?:info|warn|error)\b",
    r"[^a-z0-9 ][A-Z]\.$",
    r"(a|ab)(c|bcd)(d)",
    r"[]x-]\S\W\D",
    r"x$",
]
REFUSED = [r"a+", r"a*", r"a?", r"a{2}", r"(?i)a", r"(?m)^a", r"[[:alpha:]]", r"\pL", r"é", r"[a&&b]", r"\Aa",
           r"(?=a)", "(a|b)" * 7]


@pytest.mark.parametrize("pattern", BOUNDED)
def test_accepted(pattern: str) -> None:
    assert bounded_pattern(pattern) is not None


@pytest.mark.parametrize("pattern", REFUSED)
def test_refused(pattern: str) -> None:
    assert bounded_pattern(pattern) is None


def test_paths_bounded() -> None:
    assert bounded_pattern("(a|b)" * 6) is not None  # 64 paths
    assert 2 ** 7 > MAX_PATHS


def _texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = "ab cdx-[]\n\t./_:=0123456789AZINFOWRGETPOS" + "\x1c\x0b"
    words = ["INFO", "WARN", "WARNING", "ERROR", "GET ", "POST ", "/api/", "level=", "info", "warn", "2026-", "12"]
    texts = []
    for _ in range(400):
        parts = [rng.choice(words) if rng.random() < 0.5 else rng.choice(alphabet) for _ in range(rng.randrange(0, 14))]
        texts.append("".join(parts))
    return texts + ["x\n", "2026-12-04 [INFO] y", " INFO\n", "é INFO "]


@pytest.mark.parametrize("pattern", BOUNDED)
def test_same_captures_as_re2(pattern: str) -> None:
    fast = Regex(pattern)
    slow = Regex(pattern)
    slow._search = None
    slow._named = False
    for text in _texts(len(pattern)):
        assert fast.captures(text) == slow.captures(text), text
        assert fast.named_captures(text) == slow.named_captures(text), text
        assert fast.is_match(text) == slow.is_match(text), text


@pytest.mark.parametrize("pattern", BOUNDED[:4])
def test_same_as_vrl(pattern: str) -> None:
    runtime = vrl_python.VRLRuntime()
    source = f".r = parse_regex(.m, r'{pattern}') ?? null"
    regex = Regex(pattern)
    for text in _texts(7)[:150]:
        expected = runtime.execute(source, {"m": text}).processed_event["r"]
        ours = regex.named_captures(text)
        assert ours == expected, text
