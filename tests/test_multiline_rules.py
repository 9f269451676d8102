"""The built-in tables as data: both regex engines agree on them, and the start tests never hide a start.

The rules are matched with Python's ``re`` and compiled with RE2 too (Rust's
syntax, as users' patterns): on every line of the trace fixtures and of
ordinary container logs both must give the same answer. The start tests (the
literals read off each start rule, one line or many at once) must give what
trying every start rule gives: checked on the fixtures' lines and on lines
hypothesis makes from each rule.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logagent.parsers.multiline_machine import compile_user_pattern
from logagent.parsers.multiline_prefilter import leading_literals, may_begin_with_space, required_literals
from logagent.parsers.multiline_rules import AUTO, LANGUAGES, language_machine

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
ORDINARY = [
    '10.0.0.1 - - [02/Dec/2026:10:00:00 +0000] "GET /api/items/1 HTTP/1.1" 200 512 "-" "curl/8.5.0"',
    '{"level":"info","msg":"request handled","path":"/items/1","status":200}',
    'level=info msg="handled" path=/api/items/1 status=200 ms=3',
    "I1203 10:00:00.000000       1 controller.go:12] synced pod default/web-1",
    "2026-12-02 10:00:00.001 ERROR [http-nio-8080-exec-1] c.e.shop.OrderService - order 1 failed",
    "retrying upstream call 1 after Error: connection reset by peer",
    "WARN the NullPointerException fix from yesterday is live",
    "  server:", "    port: 8080", '  "items": [', "", "    ", "}",
]


def lines() -> list[str]:
    out = list(ORDINARY)
    for path in sorted(FIXTURES.rglob("*.txt")):
        out += path.read_text().split("\n")
    return out


def patterns() -> list[str]:
    found: dict[str, None] = {}
    for language in LANGUAGES.values():
        for spec in language.starts:
            found[spec[0]] = None
        for rules in language.states.values():
            for spec in rules:
                found[spec[0]] = None
    return list(found)


STARTS = list(dict.fromkeys(spec[0] for language in LANGUAGES.values() for spec in language.starts))


@pytest.mark.parametrize("pattern", patterns())
def test_re_and_re2_agree_on_every_fixture_line(pattern: str) -> None:
    ours, rust = re.compile(pattern).search, compile_user_pattern(pattern, "rule")
    differ = [line for line in lines() if (ours(line) is not None) != (rust(line) is not None)]
    assert not differ, differ[:3]


def test_required_literals() -> None:
    assert required_literals(r"^Traceback \(most recent call last\):$") == {"Traceback (most recent call last):"}
    assert required_literals(r"(?:Exception|Error|Throwable)(?::\s|$)") == {"Exception", "Error", "Throwable"}
    assert required_literals(r"^(?:panic|fatal error): ") == {"panic: ", "fatal error: "}
    assert required_literals(r"^\S.*:\d+:in [`']") == {":in `", ":in '"}
    assert required_literals(r"^\s+at \S") == {"at "}
    assert required_literals(r"^\d+$") is None  # nothing of two characters to look for
    assert required_literals(r"^(?:a|bc)x") == {"ax", "bcx"}  # a run goes on through a few fixed texts
    assert required_literals(r"^(?:a|\d)x") is None  # one alternative without a literal: no set
    assert required_literals(r"\.(?:[cm]?js|ts):") == {".js:", ".cjs:", ".mjs:", ".ts:"}
    assert required_literals(r"(?i)error") is None and required_literals(r"x(?i:error)") is None


def test_may_begin_with_space() -> None:
    assert may_begin_with_space(r"Error: ")  # not anchored
    assert may_begin_with_space(r"^\s*[A-Z]\w* \(.*\):$")
    assert may_begin_with_space(r"^ ?x") and may_begin_with_space(r"^$") and may_begin_with_space(r"^.x")
    assert not may_begin_with_space(r"^Traceback")
    assert not may_begin_with_space(r"^\S.*:\d+:in ")
    assert not may_begin_with_space(r"^(?:PHP )?exception '")
    assert not may_begin_with_space(r"^(?:panic|fatal error): ")


def every_rule(line: str) -> tuple[int, ...] | None:
    """The reference: the states of every start rule that takes ``line``, tried one by one."""
    machine = language_machine(AUTO)
    found = {rule.target for rule in machine.starts if rule.search(line) is not None}
    return tuple(sorted(found)) or None


def test_leading_literals() -> None:
    assert leading_literals(r"(?:Exception|Error|Throwable)(?::\s|$)") == {"Exception", "Error", "Throwable"}
    assert leading_literals(r"http: panic serving \S+: ") == {"http: panic serving "}
    assert leading_literals(r"^Traceback") is None and leading_literals(r"x?Error") is None
    assert leading_literals(r"(?:a|\d)b") is None


def test_start_tests_give_what_every_rule_gives_on_every_fixture_line() -> None:
    test = language_machine(AUTO).classes[0]
    every = lines()
    assert [test.start(line) for line in every] == [every_rule(line) for line in every]
    # many lines at once: the same answers, at the right positions
    many = test.starts(every)
    assert many == [(i, every_rule(line)) for i, line in enumerate(every) if every_rule(line) is not None]
    assert len(many) > 30
    assert test.starts(["    port: 8080", "  server:"]) == [] and test.starts(["x", "java.io.IOException: disk full"])
    # the literals are found in UTF-8 bytes, the positions in the text: wide characters and lone surrogates
    wide = ["日本語 \udcff", 'Exception in thread "主" java.lang.RuntimeException: 😀',
            "\udcff java.io.IOException: disk full"]
    assert test.starts(wide) == [(i, every_rule(line)) for i, line in enumerate(wide) if every_rule(line)]
    assert [i for i, _ in test.starts(wide)] == [1, 2]


@pytest.mark.parametrize("pattern", STARTS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_start_tests_take_what_hypothesis_makes_from_each_start_rule(pattern: str, data: st.DataObject) -> None:
    test = language_machine(AUTO).classes[0]
    line = data.draw(st.from_regex(re.compile(pattern), fullmatch=False).filter(lambda s: "\n" not in s))
    assert test.start(line) == every_rule(line) is not None, line
    assert test.starts(["GET / 200", line, "x"]) == [(1, every_rule(line))], line


def test_blank_class_holds_every_rule_that_takes_an_indented_start() -> None:
    machine = language_machine(AUTO)
    for line in [" NoMethodError (undefined method `x' for nil):", "  + Exception Group Traceback (most recent call last):",
                 "    java.lang.IllegalStateException: x", '  File "<stdin>", line 1']:
        assert machine.start(line) is not None, line


def test_a_self_loop_match_means_the_step_leaves_the_states_as_they_are() -> None:
    """``Machine.loop`` (the fast way through a trace's lines) agrees with ``step`` on every line."""
    machine = language_machine(AUTO)
    every = lines()
    reached: set[tuple[int, ...]] = set()
    for line in every:
        active = machine.start(line)
        for following in every[every.index(line) + 1:][:40] if active else []:
            step = machine.step(active, following)
            if step is None or not step[0]:
                break
            active = step[0]
            reached.add(active)
    assert len(reached) > 20
    loops = 0
    for active in reached:
        same = machine.loop(active)
        for line in every:
            if same is not None and same(line) is not None:
                loops += 1
                assert machine.step(active, line) == (active, False), (active, line)
    assert loops > 100


def test_no_false_joins_in_ordinary_container_logs() -> None:
    """The benchmark's corpus of ordinary lines (access logs, JSON, logfmt, klog, logback, "Error:" mid-sentence,
    YAML and pretty JSON dumps): every line comes out as its own record, in batches of several sizes."""
    from benchmarks.multiline_logs import ordinary_record

    from logagent.event import FileContext, LogEvent
    from logagent.parsers.multiline import MultilineGrouper, MultilineStats

    ctx = FileContext({"file": "x"})
    messages = [line for seq in range(12_000) for line in ordinary_record(seq)]
    events = [LogEvent(m, "stderr" if i % 5 == 0 else "stdout", "t", ctx) for i, m in enumerate(messages)]
    for batch in (1, 7, 500, len(events)):
        grouper = MultilineGrouper(language_machine(AUTO), MultilineStats())
        out: list[LogEvent] = []
        for start in range(0, len(events), batch):
            out += grouper.feed(events[start:start + batch], ctx, 0.0)
        out += grouper.flush(ctx)
        assert [e.message for e in out if "\n" in e.message] == [] and len(out) == len(events), batch


def test_every_set_a_step_reaches_is_compiled_with_the_machine() -> None:
    """``Machine.reachable``: following every fixture trace from its start leaves no set of states without
    its step and self-loop regexes (they were compiled when the machine was built, not while lines wait)."""
    machine = language_machine(AUTO)
    prepared = set(machine._plans)
    every = lines()
    seen = 0
    for number, line in enumerate(every):
        active = machine.start(line)
        if active is None or active not in prepared:  # a line several start rules take: see the next test
            continue
        for following in every[number + 1:number + 41]:
            step = machine.step(active, following)
            if step is None or not step[0]:
                break
            active = step[0]
            seen += 1
            assert active in prepared and active in machine.loops, active
    assert seen > 200


def test_a_set_of_states_not_compiled_steps_and_loops_as_its_compiled_regexes_would() -> None:
    """A line two start rules take opens a union of their states: stepped state by state
    (``_step_each``) and looped with each state's own self-loop, it answers what one regex would."""
    from logagent.parsers.multiline_machine import Machine

    machine = language_machine(AUTO)
    fresh = Machine(machine.starts, machine.states, lead=machine.lead, marks=machine.marks)
    opened: dict[object, set[int]] = {}
    for rule in machine.starts:
        opened.setdefault(rule.search, set()).add(rule.target)
    pairs = {tuple(sorted(a | b)) for a in opened.values() for b in opened.values()}
    unions = sorted(active for active in pairs if active not in machine._plans)
    assert len(unions) > 10
    every = lines()
    compared = 0
    for active in unions:
        fresh.prepare([active])
        same, compiled = machine.loop(active), fresh.loop(active)
        for line in every:
            assert machine.step(active, line) == fresh.step(active, line), (active, line)
            if compiled is not None:
                assert (same(line) is not None) == (compiled(line) is not None), (active, line)  # type: ignore[misc]
                compared += 1
    assert compared > 500


def test_reachable_leaves_out_what_no_line_can_do() -> None:
    """Two rules anchored at the line's start whose first characters differ never take one line: their
    targets together are no set a step can give (fewer regexes compiled with the machine)."""
    from logagent.parsers.multiline_machine import Machine, Rule, compile_builtin

    def rule(pattern: str, target: int) -> Rule:
        return Rule(compile_builtin(pattern), target, pattern=pattern)

    states = [[rule(r"^x", 2)], [rule(r"^y", 3), rule(r"z", 4)], [], [], []]
    found = set(Machine([], states, lead=None).reachable([(0, 1)]))
    assert found == {(0, 1), (2,), (3,), (4,), (2, 4)}  # "z" is searched anywhere: it may be in an "x..." line
    blank = [[rule(r"^\s+at \S", 1)], [rule(r"^\s*$", 2)], [], []]
    assert (1, 2) in Machine([], blank, lead=None).reachable([(0, 1)])  # both may begin with a space
