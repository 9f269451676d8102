"""Differential test: our conditions against Vector's own VRL runtime (vrl-python).

Every condition is evaluated by both on many generated records. VRL is stricter
at compile time (fields have type "any", so fallible calls must be handled); the
condition is therefore run in VRL as

    r, err = (CONDITION)
    if err != null { "__error__" } else { r }

(or bare, when VRL reports the expression cannot fail). Where VRL reports an
error or a non-boolean, ours must be False *and* count a runtime error; where
VRL gives a boolean, ours must give the same boolean without an error.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from logagent.conditions import compile_condition  # noqa: E402


ERROR = "__error__"

PATHS = [
    ".message",
    ".stream",
    ".level",
    ".count",
    ".ratio",
    ".flag",
    ".missing",
    ".tags",
    ".tags[0]",
    ".tags[-1]",
    ".kubernetes.pod_namespace",
    ".kubernetes.namespace_name",
    ".kubernetes.pod_labels.app",
    '.kubernetes.pod_labels."app.kubernetes.io/name"',
    ".kubernetes.namespace_labels.userNS",
    ".kubernetes.pod_ips[0]",
    ".kubernetes.pod_ips[-1]",
    ".kubernetes.pod_ips[5]",
    ".kubernetes.pod_labels",
]
STRINGS = ["", "user-", "kube-", "Hello", "hello", "ERROR", "error", "web", "true", "stderr", "ß", "é", "10.0.0.1"]
NUMBERS = ["0", "1", "5", "-3", "2.5", "5.0", "100"]
REGEXES = [
    r"^user-",
    r"(?i)error",
    r"\d+$",
    r"^[[:alpha:]]+$",
    r"o\z",
    r"(?<word>ll)o",
    r"^$",
    r"é|ß",
    r"[^a-z]",
    r"(?m)^x$",
    r"\bworld\b",
]


def random_string(rng: random.Random) -> str:
    prefix = rng.choice(["", "user-", "kube-", "Hello", "ERROR ", "error: ", "é", "10.0.0."])
    body = "".join(rng.choice("abcXYZ09 -_.ßé\n") for _ in range(rng.randint(0, 8)))
    suffix = rng.choice(["", "", "\n", "9\n", "o"])  # '$' differs between Rust and Python before a final newline
    return prefix + body + suffix


def random_scalar(rng: random.Random) -> Any:
    choice = rng.randrange(8)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.randint(-5, 105)
    if choice == 3:
        return rng.choice([2.5, 5.0, -0.5, 1e3])
    if choice == 4:
        return rng.choice(["5", "-3", "+7", " 5", "1_0", "12abc", ""])
    return random_string(rng)


def random_record(rng: random.Random) -> dict[str, Any]:
    record: dict[str, Any] = {}
    if rng.random() < 0.95:
        record["message"] = random_string(rng) if rng.random() < 0.9 else random_scalar(rng)
    if rng.random() < 0.8:
        record["stream"] = rng.choice(["stdout", "stderr", None, 1])
    for key in ("level", "count", "ratio", "flag"):
        if rng.random() < 0.7:
            record[key] = random_scalar(rng)
    if rng.random() < 0.5:
        record["tags"] = [random_scalar(rng) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.85:
        kube: dict[str, Any] = {}
        for key in ("pod_namespace", "namespace_name"):
            if rng.random() < 0.8:
                kube[key] = rng.choice(["user-alice", "user-", "kube-system", "default", None, 3, random_string(rng)])
        if rng.random() < 0.8:
            labels: dict[str, Any] = {}
            if rng.random() < 0.7:
                labels["app"] = rng.choice(["web", "db", "", None])
            if rng.random() < 0.5:
                labels["app.kubernetes.io/name"] = rng.choice(["nginx", "web"])
            kube["pod_labels"] = labels
        if rng.random() < 0.6:
            kube["namespace_labels"] = {"userNS": rng.choice(["true", "false", True])}
        if rng.random() < 0.7:
            kube["pod_ips"] = rng.choice([[], ["10.0.0.1"], ["10.0.0.1", "10.0.0.2"], "10.0.0.1"])
        record["kubernetes"] = kube
    return record


class ConditionGenerator:
    """Random conditions over the supported grammar (text in VRL syntax)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def literal(self) -> str:
        rng = self.rng
        kind = rng.randrange(6)
        if kind < 3:
            return '"' + rng.choice(STRINGS) + '"'
        if kind == 3:
            return rng.choice(NUMBERS)
        if kind == 4:
            return rng.choice(["true", "false"])
        return "null"

    def value(self) -> str:
        rng = self.rng
        kind = rng.randrange(10)
        if kind < 5:
            return rng.choice(PATHS)
        if kind < 7:
            return self.literal()
        if kind == 7:
            return f"{rng.choice(['to_int', 'length'])}({rng.choice(PATHS)})"
        if kind == 8:
            return f"{rng.choice(['downcase', 'upcase', 'string'])}({rng.choice(PATHS)})"
        return f'string!({rng.choice(PATHS)})'

    def boolean(self, depth: int) -> str:
        rng = self.rng
        kind = rng.randrange(9 if depth > 0 else 5)
        if kind == 0:
            op = rng.choice(["==", "!=", "==", "!=", "<", "<=", ">", ">="])
            return f"{self.value()} {op} {self.value()}"
        if kind == 1:
            function = rng.choice(["starts_with", "ends_with", "contains"])
            subject = rng.choice([rng.choice(PATHS), f"string!({rng.choice(PATHS)})"])
            needle = '"' + rng.choice(STRINGS) + '"' if rng.random() < 0.85 else rng.choice(PATHS)
            extra = ""
            if rng.random() < 0.4:
                extra = f", case_sensitive: {rng.choice(['true', 'false'])}"
            return f"{function}({subject}, {needle}{extra})"
        if kind == 2:
            return f"match({rng.choice(PATHS)}, r'{rng.choice(REGEXES)}')"
        if kind == 3:
            return f"{rng.choice(['exists', 'is_null'])}({rng.choice(PATHS)})"
        if kind == 4:
            if rng.random() < 0.5:
                return f"includes({rng.choice(PATHS)}, {self.value()})"
            items = ", ".join(self.literal() for _ in range(rng.randint(0, 3)))
            return f"includes([{items}], {self.value()})"
        if kind in (5, 6):
            op = rng.choice(["&&", "||"])
            return f"{self.boolean(depth - 1)} {op} {self.boolean(depth - 1)}"
        if kind == 7:
            inner = self.boolean(depth - 1)
            return f"!({inner})" if rng.random() < 0.5 else f"({inner})"
        return f"({self.boolean(depth - 1)}) ?? {rng.choice(['true', 'false', PATHS[0]])}"

    def any_value_condition(self) -> str:
        """Conditions that may resolve to a non-boolean, e.g. `.a || .b`."""
        return f"{self.value()} || {self.value()}"


HAND_WRITTEN = [
    '.kubernetes.pod_namespace != null && starts_with(string!(.kubernetes.pod_namespace), "user-")',
    '.stream == "stderr"',
    '.kubernetes.namespace_labels.userNS == "true"',
    '.kubernetes.namespace_name != null && starts_with(string!(.kubernetes.namespace_name), "user-")',
    "true || true && false",
    "false && true || true",
    ".flag || .count",
    ".flag && true",
    "true && .flag",
    ".missing || .flag == true",
    '!exists(.kubernetes.pod_labels."app.kubernetes.io/name")',
    ".count == 5",
    ".count == 5.0",
    ".ratio >= .count",
    ".tags == [1]",
    "includes(.tags, 5)",
    "includes(.tags, null)",
    'to_int(.level) ?? 0 == 0',
    "length(.kubernetes.pod_ips) > 1",
    "length(.message) == 0",
    'contains(.message, "ß", case_sensitive: false)',
    'contains(.message, "SS", case_sensitive: false)',
    'starts_with(.message, "hello", case_sensitive: false)',
    'downcase(.message) == "hello"',
    'upcase(.message) == "ERROR "',
    "match(.message, r'\\n$')",
    "match(.message, r'[a-z0-9]$')",
    "match(.message, r'(?m)[a-z0-9]$')",
    'contains(downcase(.message), "ss")',
    'contains(upcase(.message), "SS")',
    "match(.message, r'(?s)^E.*\\z')",
    '.kubernetes.pod_ips[-1] == "10.0.0.2"',
    "exists(.kubernetes.pod_ips[-2])",
    "exists(.tags[0])",
    'string(.message) == "Hello"',
    '.message < "M"',
]


_FALLIBLE_CALL = re.compile(r"\b(string|to_int|length|downcase|upcase|starts_with|ends_with|contains|match|includes)\(")


def _wrap(condition: str) -> str:
    return f"r, err = ({condition})\nif err != null {{ \"{ERROR}\" }} else {{ r }}"


class Vrl:
    def __init__(self) -> None:
        self.runtime = vrl_python.VRLRuntime()
        self.program: dict[str, str | None] = {}

    def compile(self, condition: str) -> str | None:
        """The VRL program to run for ``condition``, or None if VRL rejects it."""
        if condition in self.program:
            return self.program[condition]
        program: str | None = None
        # VRL also insists that a fallible function argument is handled (E630):
        # aborting with f!(...) there fails the whole program, as our f(...) does
        aborting = _FALLIBLE_CALL.sub(r"\1!(", condition)
        candidates = [_wrap(condition), condition, _wrap(aborting), aborting]
        for candidate in candidates:
            try:
                self.runtime.compile(candidate)
            except (ValueError, vrl_python.VRLCompileError):
                continue
            program = candidate
            break
        self.program[condition] = program
        return program

    def evaluate(self, program: str, record: dict[str, Any]) -> Any:
        try:
            return self.runtime.execute(program, dict(record)).runtime_result
        except (RuntimeError, vrl_python.VRLRuntimeError):
            return ERROR


def compare(vrl: Vrl, condition_text: str, records: list[dict[str, Any]]) -> bool:
    """Check one condition on all records; returns False if VRL rejects it at compile time."""
    program = vrl.compile(condition_text)
    ours = compile_condition(condition_text)  # we accept everything VRL accepts, and more
    if program is None:
        return False
    for record in records:
        expected = vrl.evaluate(program, record)
        errors_before = ours.runtime_errors
        got = ours(record)
        failed = ours.runtime_errors != errors_before
        context = f"condition {condition_text!r} on record {record!r}: VRL gave {expected!r}"
        if type(expected) is bool:
            assert (got, failed) == (expected, False), f"{context}, ours {got} (error: {ours.last_error})"
        else:
            assert (got, failed) == (False, True), f"{context}, ours {got} without a counted error"
    return True


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    rng = random.Random(20240601)
    return [random_record(rng) for _ in range(80)]


def test_hand_written_conditions_match_vrl(records: list[dict[str, Any]]) -> None:
    vrl = Vrl()
    rejected = [text for text in HAND_WRITTEN if not compare(vrl, text, records)]
    assert rejected == []


def test_generated_conditions_match_vrl(records: list[dict[str, Any]]) -> None:
    vrl = Vrl()
    generator = ConditionGenerator(random.Random(7))
    compared = 0
    total = 700
    for index in range(total):
        text = generator.any_value_condition() if index % 10 == 0 else generator.boolean(depth=3)
        compared += compare(vrl, text, records)
    # VRL rejects a few generated shapes at compile time (e.g. negating a value of
    # unknown type, or ?? after an expression that cannot fail); most must be compared
    assert compared >= total * 0.8, f"only {compared} of {total} generated conditions were accepted by VRL"


UNICODE_TEXTS = ["١٢٣", "é", "ß_x", "\u00a0", "\u3000", "\u2028", "\t", "Ⓐ", "\u200d", "x\u0301", "😀", "中文", "٣a", "K", "\u212a"]
UNICODE_REGEXES = [r"^\d+$", r"\D", r"^\w+$", r"\W", r"^\s$", r"\S", r"^[\w\s]+$", r"[\d]", r"\pL", r"\p{Greek}",
                   r"(?i)^k$", r"^\u00e9$", r"\x{1F600}", r"ab(?i)c", r"^.$", r"^(?U)a+"]


def test_regex_unicode_semantics_match_vrl() -> None:
    vrl = Vrl()
    records = [{"message": text} for text in UNICODE_TEXTS + ["abC", "ABc", "aaa"]]
    rejected = [p for p in UNICODE_REGEXES if not compare(vrl, f"match(.message, r'{p}')", records)]
    assert rejected == []


@pytest.mark.parametrize("perl_class", [r"\d", r"\s", r"\w"])
def test_perl_classes_cover_what_vrl_does_in_every_plane_0_and_1_character(perl_class: str) -> None:
    """Same characters as Rust's class, except those the RE2 build's Unicode tables are too old for."""
    import unicodedata

    from logagent.user_regex import compile_regex

    chars = [chr(c) for c in range(0x20000) if not 0xD800 <= c <= 0xDFFF]
    rest = vrl_python.VRLRuntime().execute(f"replace!(.v, r'{perl_class}', \"\")", {"v": "".join(chars)}).runtime_result
    theirs = set(chars) - set(rest)
    pattern = compile_regex(perl_class)
    ours = {ch for ch in chars if pattern.search(ch)}
    assert ours <= theirs
    # the rest are characters newer than RE2's tables, unassigned in Python 3.11's too
    missing = [ch for ch in theirs - ours if unicodedata.category(ch) != "Cn"]
    assert missing == [], [hex(ord(ch)) for ch in missing[:20]]


REGEX_ATOMS = [
    "a", "é", "ß", "K", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "[\\w-]", "[^\\s\\d]", ".", "[[:alpha:]]",
    "[[:^digit:]]", "\\pL", "\\p{Nd}", "^", "$", "\\A", "\\z", "(?i)k", "(?i:é)", "(?s:.)", "(?m:$)", "(a|é)",
    "(?:\\d|ß)", "(?<g>a)", "\\x{e9}", "\\u00df", "[a-zé]", "\\.", "\\-",
]
REGEX_QUANTIFIERS = ["", "", "", "?", "*", "+", "{2}", "{0,2}", "{ 1 , }", "??", "+?"]


def test_generated_regexes_match_vrl() -> None:
    """Random patterns of the constructs where RE2 and Rust's crate could differ, on Unicode text."""
    rng = random.Random(1616)
    runtime = vrl_python.VRLRuntime()
    texts = ["".join(rng.choice("aAéÉßsK\u212a1٣_- \t\n\u00a0.") for _ in range(rng.randint(0, 7))) for _ in range(40)]
    compared = 0
    for _ in range(150):
        parts = [rng.choice(REGEX_ATOMS) for _ in range(rng.randint(1, 4))]
        pattern = "".join(p + (rng.choice(REGEX_QUANTIFIERS) if p not in ("^", "$", "\\A", "\\z") else "") for p in parts)
        program = f"match!(.v, r'{pattern}')"
        try:
            runtime.compile(program)
        except (ValueError, vrl_python.VRLCompileError):
            continue
        condition = compile_condition(f"match(.v, r'{pattern}')")
        for text in texts:
            expected = runtime.execute(program, {"v": text}).runtime_result
            assert condition({"v": text}) is expected, (pattern, text, expected)
        compared += 1
    assert compared >= 100
