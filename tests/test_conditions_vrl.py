"""Differential test: conditions against Vector's own VRL (vrl-python), compile errors and results.

Each condition of the corpus (hand-written and generated: every operator,
``exists``, ``match``, ``includes``, nulls, missing fields, nested paths,
unicode, fallible calls with ``!`` and ``??``, and the mistakes VRL refuses)
is compiled by both, as it is written:

- VRL refuses it: ours refuses it with the same error code at the same line
  and column (E202, a bad literal, is the one exception: VRL points at the
  program's start, ours at the literal).
- VRL accepts it: ours accepts it, or refuses it because its result may not be
  a boolean (Vector's "VRL conditions must return a boolean"; vrl-python does
  not tell the type), and then on every record our boolean is VRL's result,
  or, where VRL fails at run time, ours is false and counts the error.

Records are run as plain dicts and as ``LogEvent``s (fields split between a
shared ``FileContext`` and the record's own, objects as ``msgspec.Raw``) read
where they live; the filter transform's batch paths (per-context memo, field
split in C) must keep the same records.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from logagent.acks import AckGroup, Batch  # noqa: E402
from logagent.event import FileContext, LogEvent  # noqa: E402
from logagent.transforms.filter import FilterConfig, FilterTransform  # noqa: E402
from logagent.vrl.condition import ConditionError, compile_condition  # noqa: E402
from logagent.vrl.diagnostic import VrlError  # noqa: E402
from tests.vrl_oracle import vrl_outcome  # noqa: E402

PATHS = [
    ".message", ".stream", ".level", ".count", ".ratio", ".flag", ".missing", ".tags", ".tags[0]", ".tags[-1]",
    ".kubernetes.pod_namespace", ".kubernetes.namespace_name", ".kubernetes.pod_labels.app",
    '.kubernetes.pod_labels."app.kubernetes.io/name"', ".kubernetes.namespace_labels.userNS",
    ".kubernetes.pod_ips[0]", ".kubernetes.pod_ips[-1]", ".kubernetes.pod_ips[5]", ".kubernetes.pod_labels",
    '."naïve"', ".kubernetes.missing.deeper",
]
STRINGS = ["", "user-", "kube-", "Hello", "hello", "ERROR", "error", "web", "true", "stderr", "ß", "é", "10.0.0.1",
           "中文", "😀"]
NUMBERS = ["0", "1", "5", "-3", "2.5", "5.0", "100"]
REGEXES = [r"^user-", r"(?i)error", r"\d+$", r"^[[:alpha:]]+$", r"o\z", r"(?<word>ll)o", r"^$", r"é|ß", r"[^a-z]",
           r"(?m)^x$", r"\bworld\b", r"^\w+$", r"中"]


def random_string(rng: random.Random) -> str:
    prefix = rng.choice(["", "user-", "kube-", "Hello", "ERROR ", "error: ", "é", "10.0.0.", "中文"])
    body = "".join(rng.choice("abcXYZ09 -_.ßé\n😀") for _ in range(rng.randint(0, 8)))
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
        record["stream"] = rng.choice(["stdout", "stderr", None])
    for key in ("level", "count", "ratio", "flag", "naïve"):
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


def as_event(record: dict[str, Any], rng: random.Random) -> LogEvent:
    """The same record as the agent holds it: context fields, its own fields (objects still JSON text)."""
    shared: dict[str, Any] = {}
    own: dict[str, Any] = {}
    for key, value in record.items():
        if key in ("message", "stream"):
            continue
        if rng.random() < 0.6:
            shared[key] = value
        else:
            own[key] = msgspec.Raw(msgspec.json.encode(value)) if type(value) is dict else value
    message = record.get("message")
    if "message" in record and type(message) is not str:
        own["message"] = message
        message = None
    return LogEvent(message, record.get("stream"), None, FileContext(shared), False, own or None)


class ConditionGenerator:
    """Random conditions: mostly what VRL accepts, some of the mistakes it refuses."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def path(self) -> str:
        return self.rng.choice(PATHS)

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
        """An expression that cannot fail (or, rarely, one that can: VRL then refuses the condition)."""
        rng = self.rng
        kind = rng.randrange(12)
        if kind < 5:
            return self.path()
        if kind < 7:
            return self.literal()
        if kind == 7:
            return f"{rng.choice(['to_int!', 'length!', 'int!', 'float!'])}({self.path()})"
        if kind == 8:
            return f"{rng.choice(['downcase!', 'upcase!', 'string!'])}({self.path()})"
        if kind == 9:
            return f"(to_int({self.path()}) ?? {rng.choice(NUMBERS)})"
        if kind == 10:
            return f"upcase(string!({self.path()}))"
        return f"{rng.choice(['to_int', 'length', 'downcase'])}({self.path()})"  # fallible, unhandled

    def text(self) -> str:
        """A string argument: checked, asserted, or of unknown type (E110)."""
        rng = self.rng
        return rng.choice([f"string!({self.path()})", f'"{rng.choice(STRINGS)}"', self.path()])

    def boolean(self, depth: int) -> str:
        rng = self.rng
        kind = rng.randrange(11 if depth > 0 else 7)
        if kind == 0:
            return f"{self.value()} {rng.choice(['==', '!='])} {self.value()}"
        if kind == 1:
            op = rng.choice(["<", "<=", ">", ">="])
            return f"{self.value()} {op} {self.value()}"
        if kind == 2:
            function = rng.choice(["starts_with", "ends_with", "contains"])
            bang = rng.choice(["", "", "!"])
            needle = '"' + rng.choice(STRINGS) + '"' if rng.random() < 0.8 else self.text()
            extra = f", case_sensitive: {rng.choice(['true', 'false'])}" if rng.random() < 0.4 else ""
            return f"{function}{bang}({self.text()}, {needle}{extra})"
        if kind == 3:
            bang = rng.choice(["", "!"])
            return f"match{bang}({self.text()}, r'{rng.choice(REGEXES)}')"
        if kind == 4:
            return f"{rng.choice(['exists', 'is_null', 'is_string', 'is_integer', 'is_array'])}({self.path()})"
        if kind == 5:
            if rng.random() < 0.5:
                return f"includes{rng.choice(['', '!'])}({self.path()}, {self.value()})"
            items = ", ".join(self.literal() for _ in range(rng.randint(0, 3)))
            return f"includes([{items}], {self.value()})"
        if kind == 6:
            return f"{rng.choice(['to_bool', 'is_nullish'])}({self.path()}) ?? false" if rng.random() < 0.5 else \
                f"{rng.choice(['starts_with', 'contains'])}({self.path()}, \"{rng.choice(STRINGS)}\") ?? {self.literal()}"
        if kind in (7, 8):
            return f"{self.boolean(depth - 1)} {rng.choice(['&&', '||'])} {self.boolean(depth - 1)}"
        if kind == 9:
            inner = self.boolean(depth - 1)
            return f"!({inner})" if rng.random() < 0.5 else f"({inner})"
        return f"!{self.path()}" if rng.random() < 0.3 else f"!exists({self.path()})"


HAND_WRITTEN = [
    '.kubernetes.pod_namespace != null && starts_with(string!(.kubernetes.pod_namespace), "user-")',
    '.stream == "stderr"',
    '"stderr" == .stream',
    '.kubernetes.namespace_labels.userNS == "true"',
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
    "float!(.ratio) >= int!(.count)",
    ".tags == [1]",
    "includes!(.tags, 5)",
    "includes(.tags, null)",
    "(to_int(.level) ?? 0) == 0",
    "to_int(.level) ?? 0 == 0",
    "length!(.kubernetes.pod_ips) > 1",
    "length(.message) == 0",
    'contains!(.message, "ß", case_sensitive: false)',
    'contains(string!(.message), "SS", case_sensitive: false)',
    'starts_with(.message, "hello", case_sensitive: false) ?? false',
    'downcase!(.message) == "hello"',
    'upcase(string!(.message)) == "ERROR "',
    "match!(.message, r'\\n$')",
    "match(string!(.message), r'[a-z0-9]$')",
    "match!(.message, r'(?m)[a-z0-9]$')",
    "match(.message, r'x')",
    'contains(downcase!(.message), "ss")',
    "match!(.message, r'(?s)^E.*\\z')",
    '.kubernetes.pod_ips[-1] == "10.0.0.2"',
    "exists(.kubernetes.pod_ips[-2])",
    "exists(.tags[0])",
    'string!(.message) == "Hello"',
    '.message < "M"',
    'string!(.message) < "M"',
    "!.flag",
    "!is_null(.flag)",
    "to_int(.count) > 3",
    "to_int!(.count) > 3",
    "x = .kubernetes.pod_labels\nexists(x.app) && x.app == \"web\"",
    'ns, err = string(.kubernetes.pod_namespace)\nerr == null && starts_with(ns, "user-")',
    'if exists(.level) { .level == "error" } else { .stream == "stderr" }',
    'parsed = parse_json(string!(.message)) ?? {}\nis_object(parsed)',
    '!includes(["kube-system", "default"], .kubernetes.pod_namespace)',
    'match_any(string!(.message), [r"^ERROR", r"(?i)fatal"])',
    'includes(keys(object!(.kubernetes)), "pod_labels")',
    '."naïve" == "é"',
    'contains!(."naïve", "中")',
    '.kubernetes.pod_labels.app == "web"; .stream == "stdout"',
    '.a.0 == 1',
    '(.a == 1',
    '.n == 99999999999999999999',
    '.a == "x',
    '.a == 1 == 2',
    'nosuch(.message)',
    'starts_with(.message)',
    'abort',
    'if .stream == "stderr" { abort } else { true }',
]


def vrl_result(vrl: Any, text: str, record: dict[str, Any]) -> tuple[str, Any]:
    """("ok", the program's result) or ("error", None) for a runtime error or abort."""
    try:
        return "ok", vrl.execute(text, dict(record)).runtime_result
    except (RuntimeError, vrl_python.VRLRuntimeError):
        return "error", None


def compare(vrl: Any, text: str, records: list[dict[str, Any]], events: list[LogEvent]) -> str:
    """'compared', 'refused' (both) or 'not boolean' (ours only); fails on any difference."""
    expected = vrl_outcome(vrl, text, {})
    if expected[0] == "compile":
        with pytest.raises(VrlError) as info:
            compile_condition(text)
        code, position = expected[1]
        got = info.value
        assert got.code == code, f"{text!r}: VRL {code}, ours {got}"
        if code != "E202":
            assert (got.line, got.column) == position, f"{text!r}: VRL {code} at {position}, ours {got}"
        return "refused"
    try:
        condition = compile_condition(text)
    except ConditionError:
        return "not boolean"
    for record, event in zip(records, events):
        for target in (record, event):
            # an event is the record it encodes (a stream of null, for one, is no stream)
            outcome, result = vrl_result(vrl, text, record if target is record else event.to_dict())
            errors = condition.runtime_errors
            got = condition(target)
            failed = condition.runtime_errors != errors
            where = f"{text!r} on {record!r} ({type(target).__name__}): VRL gave {outcome} {result!r}"
            if outcome == "ok":
                assert type(result) is bool, f"{where}: not a boolean, yet ours compiled it"
                assert (got, failed) == (result, False), f"{where}, ours {got} (error: {condition.last_error})"
            else:
                assert (got, failed) == (False, True), f"{where}, ours {got} without a counted error"
    return "compared"


@pytest.fixture(scope="module")
def records() -> tuple[list[dict[str, Any]], list[LogEvent]]:
    rng = random.Random(20240601)
    plain = [random_record(rng) for _ in range(60)]
    return plain, [as_event(record, rng) for record in plain]


@pytest.fixture(scope="module")
def vrl() -> Any:
    return vrl_python.VRLRuntime()


def test_hand_written_conditions_match_vrl(vrl: Any, records: Any) -> None:
    outcomes = {text: compare(vrl, text, *records) for text in HAND_WRITTEN}
    assert (outcomes["!.flag"], outcomes["to_int(.count) > 3"]) == ("refused", "refused")  # E660, E100
    assert outcomes[".flag || .count"] == outcomes["to_int(.level) ?? 0 == 0"] == "not boolean"
    assert list(outcomes.values()).count("compared") >= 40


def test_generated_conditions_match_vrl(vrl: Any, records: Any) -> None:
    generator = ConditionGenerator(random.Random(7))
    outcomes: dict[str, int] = {}
    for _ in range(600):
        outcome = compare(vrl, generator.boolean(depth=3), *records)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    # most are compared record by record; VRL refuses a share (E100, E110, E660 ...), as it should
    assert outcomes.get("compared", 0) >= 300, outcomes
    assert outcomes.get("refused", 0) >= 60, outcomes


def test_the_filter_keeps_what_vrl_keeps_on_batches(vrl: Any, records: Any) -> None:
    """Through the batch paths: metadata-only answers per context, ``.key == "text"`` split in C."""
    plain, _ = records
    rng = random.Random(3)
    contexts = [FileContext({"kubernetes": {"pod_namespace": ns, "pod_labels": {"app": app}}, "file": f"/f{i}"})
                for i, (ns, app) in enumerate([("user-a", "web"), ("kube-system", "db"), ("user-b", None)])]
    events = [LogEvent(r["message"] if type(r.get("message")) is str else None, r.get("stream"), None,
                       rng.choice(contexts)) for r in plain]
    for text in ['.stream == "stderr"', '.kubernetes.pod_labels.app == "web"',
                 'starts_with(string!(.kubernetes.pod_namespace), "user-") && .stream != "stdout"',
                 'contains!(.message, "e") || exists(.kubernetes.pod_labels.app)', "is_null(.kubernetes.pod_labels.app)"]:
        expected = [vrl_result(vrl, text, event.to_dict()) == ("ok", True) for event in events]
        kept = FilterTransform("f", FilterConfig(inputs=["s"], condition=text)).process(
            Batch(list(events), [AckGroup()], 1000))
        kept_events = kept[0][1].events if kept else []
        assert [event in kept_events for event in events] == expected, text


UNICODE_TEXTS = ["١٢٣", "é", "ß_x", "\u00a0", "\u3000", "\u2028", "\t", "Ⓐ", "\u200d", "x\u0301", "😀", "中文", "٣a", "K",
                 "\u212a"]
UNICODE_REGEXES = [r"^\d+$", r"\D", r"^\w+$", r"\W", r"^\s$", r"\S", r"^[\w\s]+$", r"[\d]", r"\pL", r"\p{Greek}",
                   r"(?i)^k$", r"^\u00e9$", r"\x{1F600}", r"ab(?i)c", r"^.$", r"^(?U)a+"]


def test_regex_unicode_semantics_match_vrl(vrl: Any) -> None:
    records = [{"message": text} for text in UNICODE_TEXTS + ["abC", "ABc", "aaa"]]
    events = [as_event(record, random.Random(1)) for record in records]
    outcomes = [compare(vrl, f"match!(.message, r'{p}')", records, events) for p in UNICODE_REGEXES]
    assert outcomes == ["compared"] * len(UNICODE_REGEXES)


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
        condition = compile_condition(program)
        for text in texts:
            expected = runtime.execute(program, {"v": text}).runtime_result
            assert condition({"v": text}) is expected, (pattern, text, expected)
        compared += 1
    assert compared >= 100
