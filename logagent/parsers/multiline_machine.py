"""The state machine that decides which lines make one multiline record.

A ``Machine`` has start rules and, per state, continuation rules. A line that
matches a start rule opens a group; each later line of the same stream either
matches a rule of one of the group's current states (it joins, and the group
moves to that rule's target states) or it ends the group. Several candidate
states can be active at once: in ``auto`` mode the line ``TypeError: x`` may
begin a Java, a Node.js or a .NET trace, and the lines that follow decide.

A rule may be *tentative* (blank lines between the parts of a Go panic or of a
chained Python traceback): such a line joins only if a later line continues
the group; otherwise the group ends before it and it is emitted on its own.
A rule whose target is ``DONE`` completes the group with the line it takes.

Patterns given by users (``start_pattern``, ``condition_pattern``) are
compiled by :func:`compile_user_pattern` only, so the regex engine can be
changed in one place. They are read in Vector's (Rust ``regex``) syntax,
with RE2 through ``logagent.user_regex``, as VRL's regexes (linear time).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import product
from typing import Literal

from logagent.parsers.multiline_prefilter import (
    BLANK_FIRST,
    anchored_first_characters,
    first_characters,
    may_begin_with_space,
)
from logagent.parsers.multiline_starts import Active, StartTest
from logagent.user_regex import RegexError, compile_regex

#: the target of a rule that completes the group with the line it takes
DONE = -1
#: how many answers ``Machine.step`` keeps per set of states (a bound on what odd lines can make)
_MAX_ANSWERS = 4096

Search = Callable[[str], object]
#: ``Machine.step``'s regex for a set of states, its answers so far, the first characters of the lines it takes
_Plan = tuple[Callable[[str], "re.Match[str] | None"] | None, dict[tuple, object], frozenset[str] | None]

ConditionMode = Literal["continue_through", "continue_past", "halt_before", "halt_with"]


def compile_user_pattern(text: str, key: str) -> Search:
    """A user's regex (Rust syntax, as Vector's ``multiline``) -> its ``search``.

    Raises ``ValueError("<key>: invalid regex ...")`` for a pattern that does
    not compile, so the config error names the key.
    """
    try:
        search = compile_regex(text).search
    except RegexError as exc:
        raise ValueError(f"{key}: invalid regex at column {exc.index + 1}: {exc.reason}") from None
    # RE2's search answers a bool; the rules read "no match" as None.
    return lambda line: True if search(line) else None


class Rule:
    """``search`` (or, with ``negate``, its failure) moves the group to ``target``.

    ``lead`` (start rules of the built-in tables): the most lines a trace this
    rule begins can have before its first marked line (see ``Machine.lead``).
    ``pattern``: the ``re`` pattern ``search`` is of, when it is one (built-in rules).
    """

    __slots__ = ("search", "target", "tentative", "negate", "lead", "pattern")

    def __init__(
        self, search: Search, target: int, *, tentative: bool = False, negate: bool = False, lead: int = 0,
        pattern: str | None = None,
    ) -> None:
        self.search = search
        self.target = target
        self.tentative = tentative
        self.negate = negate
        self.lead = lead
        self.pattern = pattern

    def takes(self, line: str) -> bool:
        return (self.search(line) is None) is self.negate



class Machine:
    """Start rules plus continuation rules per state (states are indexes)."""

    __slots__ = ("starts", "states", "lead", "marks", "marked", "mark_firsts", "classes", "blank_class", "loops",
                 "_plans")

    def __init__(
        self,
        starts: Sequence[Rule],
        states: Sequence[Sequence[Rule]],
        *,
        lead: int | None,
        marks: str | None = None,
        classes: Sequence[StartTest] | None = None,
        blank_class: StartTest | None = None,
    ) -> None:
        self.starts = tuple(starts)
        self.states = tuple(tuple(rules) for rules in states)
        #: when not None: a group of two lines or more has a marked line (one
        #: matching ``marks``) among its first ``lead + 1`` lines. In a batch without such
        #: lines, only the last ``lead`` records of each stream can then begin
        #: a group (see MultilineGrouper.feed); None: no such promise
        self.lead = lead
        #: an RE2 regex of the line beginnings that are marked (empty and blank
        #: lines, the tables' frames and other marks; the parser lists them too)
        self.marks = marks
        self.marked: Search | None = re.compile(f"(?:{marks})").match if marks else None
        firsts = first_characters(marks) if marks else None
        #: the first characters (``text[:1]``) a marked line can have: whitespace, "" and the marks';
        #: None: any
        self.mark_firsts = BLANK_FIRST | firsts if firsts is not None else None
        #: per distance d from the next marked line of its stream (0: the line is
        #: marked), the start rules whose traces can have their first marked
        #: line that far (``lead >= d``), behind tests that reject most lines cheaply
        self.classes = tuple(classes) if classes else (StartTest(self.starts),)
        #: the same for a marked line that is empty or begins with whitespace
        self.blank_class = blank_class or self.classes[0]
        #: ``loop``'s answers so far (every prepared set's): read directly on a hot path, ``loop`` if absent
        self.loops: dict[Active, Search | None] = {}
        self._plans: dict[Active, _Plan] = {}

    def prepare(self, sets: Sequence[Active]) -> None:
        """Compile ``step``'s and ``loop``'s regexes for ``sets`` now (at configuration) rather than on
        the first trace that needs them."""
        for active in sets:
            if active not in self._plans:
                self._plans[active] = self._plan(active)
            if active not in self.loops:
                self.loops[active] = self._compile_loop(active)

    def reachable(self, sets: Sequence[Active]) -> list[Active]:
        """``sets`` and every set of states ``step`` can move one of them to, in any number of steps.

        A state's line is taken by one of its rules or by none, so the sets a step can give are the
        targets of every such choice per state (in the states' order, once each); ``prepare`` on them
        leaves no regex to compile while lines wait. A choice no line can make is left out: rules
        anchored at the line's start whose first characters have none in common never take the same
        line (a Java "Caused by: " and a .NET "  Exception data:"). A set left out that a line does reach
        after all is still stepped correctly, state by state (``step``)."""
        options: dict[int, list[tuple[int | None, frozenset[str] | None]]] = {}
        for state in {state for active in sets for state in active} | {
                rule.target for rules in self.states for rule in rules if rule.target != DONE}:
            firsts: dict[int, frozenset[str] | None] = {}
            for rule in self.states[state]:
                own = _line_firsts(rule)
                known = firsts.get(rule.target, frozenset())
                firsts[rule.target] = None if own is None or known is None else known | own
            options[state] = [(None, None), *firsts.items()]
        found = dict.fromkeys(sets)
        todo = list(found)
        while todo:
            active = todo.pop()
            for choice in product(*(options[state] for state in active)):
                common: frozenset[str] | None = None
                for target, firsts_of in choice:
                    if target is not None and firsts_of is not None:
                        common = firsts_of if common is None else common & firsts_of
                if common is not None and not common:
                    continue
                after = tuple(dict.fromkeys(target for target, _ in choice if target is not None and target != DONE))
                if after and after not in found:
                    found[after] = None
                    todo.append(after)
        return list(found)

    def start(self, line: str, distance: int = 0) -> Active | None:
        """The states a group opened by ``line`` is in, or None if it opens none.

        ``distance``: how many records of its stream there are, at least, between the
        line and the next marked one (0: unknown, or the line is marked).
        """
        test = self.blank_class if distance == 0 and (not line or line[0].isspace()) else self.classes[distance]
        return test.start(line)

    def step(self, active: Active, line: str) -> tuple[Active, bool] | None:
        """``(states after the line, tentative)`` if ``line`` continues the group, else None.

        The states may be empty: the group is complete with this line. Per
        state the first rule that takes the line counts. With the built-in
        tables one regex per set of states answers which rule of each state
        takes the line (an empty group per rule), and the answer for each
        combination is worked out once.
        """
        plan = self._plans.get(active)
        if plan is None:
            if len(active) > 1:  # a set not prepared (a line two start rules took): its states' own steps
                return self._step_each(active, line)
            plan = self._plans[active] = self._plan(active)
        match, answers, firsts = plan
        if firsts is not None and line[:1] not in firsts:
            return None  # no rule of these states takes a line that begins so
        if match is None:
            return self._step(active, lambda number, rule: rule.takes(line))  # user patterns: RE2, one by one
        taken = match(line).groups()  # type: ignore[union-attr]  # every part is optional: always a match
        answer = answers.get(taken, answers)
        if answer is answers:
            if len(answers) > _MAX_ANSWERS:
                answers.clear()
            answer = answers[taken] = self._step(active, lambda number, rule: taken[number] is not None)
        return answer  # type: ignore[return-value]

    def _step_each(self, active: Active, line: str) -> tuple[Active, bool] | None:
        """``step`` for a set of states from each state's own step: the same answer (targets in the
        states' order, once each; tentative only if every rule that took the line is)."""
        targets: list[int] = []
        tentative = True
        taken = False
        for state in active:
            answer = self.step((state,), line)
            if answer is not None:
                taken = True
                targets += [target for target in answer[0] if target not in targets]
                tentative = tentative and answer[1]
        return (tuple(targets), tentative) if taken else None

    def _plan(self, active: Active) -> _Plan:
        """The regex of ``step`` for ``active`` (None if a rule has no ``re`` pattern), its answers so
        far, and the first characters (``line[:1]``) a line some rule takes can have (None: any)."""
        parts = []
        firsts: set[str] | None = set(BLANK_FIRST)
        for state in active:
            rules = self.states[state]
            if any(rule.pattern is None for rule in rules):
                return None, {}, None
            alternatives = [
                f"(?{'!' if rule.negate else '='}{_at_start(rule.pattern)})()" for rule in rules  # type: ignore[arg-type]
            ]
            parts.append(f"(?:{'|'.join(alternatives)})?" if alternatives else "")
            for rule in rules:
                first = None if rule.negate else anchored_first_characters(rule.pattern)  # type: ignore[arg-type]
                firsts = None if first is None or firsts is None else firsts | first
        return re.compile("".join(parts)).match, {}, frozenset(firsts) if firsts is not None else None

    def _step(self, active: Active, takes: Callable[[int, Rule], bool]) -> tuple[Active, bool] | None:
        """``step``'s answer; ``takes(number, rule)``: whether the rule (numbered across the states of
        ``active`` in turn) takes the line, asked up to the first that does in each state."""
        targets: list[int] = []
        tentative = True
        position = 0
        for state in active:
            rules = self.states[state]
            rule = next((rule for number, rule in enumerate(rules, position) if takes(number, rule)), None)
            position += len(rules)
            if rule is not None:
                if rule.target not in targets:
                    targets.append(rule.target)
                tentative = tentative and rule.tentative
        if not targets:
            return None
        return tuple(target for target in targets if target != DONE), tentative

    def loop(self, active: Active) -> Search | None:
        """A match for the lines that leave a group in ``active`` as it is (a frame after a frame), or None.

        One regex per set of states, made of their rules (a line every state
        takes with one of its rules back to itself, no earlier rule of the
        state taking it), so the lines of a long trace cost one match each.
        """
        if active not in self.loops:
            if len(active) > 1:  # a set not prepared: every state's own self-loop
                loops = [self.loop((state,)) for state in active]
                self.loops[active] = None if None in loops else _all_of(loops)  # type: ignore[arg-type]
            else:
                self.loops[active] = self._compile_loop(active)
        return self.loops[active]

    def _compile_loop(self, active: Active) -> Search | None:
        parts = [_self_loop(self.states[state], state) for state in active]
        return re.compile("".join(f"(?={part})" for part in parts)).match if all(parts) and active else None


def _line_firsts(rule: Rule) -> frozenset[str] | None:
    """The first characters (``line[:1]``) of the lines ``rule`` takes, or None when any may be."""
    if rule.negate or rule.pattern is None:
        return None
    firsts = anchored_first_characters(rule.pattern)
    if firsts is None:
        return None
    return firsts | BLANK_FIRST if may_begin_with_space(rule.pattern) else firsts


def _all_of(searches: list[Search]) -> Search:
    """A search that matches (True) where every one of ``searches`` does, else None."""
    return lambda line: True if all(search(line) is not None for search in searches) else None


def _self_loop(rules: Sequence[Rule], state: int) -> str | None:
    """A regex (matched at the line's start) of the lines ``state``'s rules take back to ``state``."""
    alternatives: list[str] = []
    for number, rule in enumerate(rules):
        if rule.pattern is None or rule.negate:
            return None
        if rule.target == state and not rule.tentative:
            earlier = "".join(f"(?!{_at_start(r.pattern)})" for r in rules[:number])  # type: ignore[arg-type]
            alternatives.append(f"{earlier}{_at_start(rule.pattern)}")
    return "|".join(f"(?:{alternative})" for alternative in alternatives) or None


def _at_start(pattern: str) -> str:
    """``pattern`` (searched) as a regex matched at the start of the line, with the same answer."""
    return f"(?:{pattern[1:]})" if pattern.startswith("^") else f".*?(?:{pattern})"


def pattern_machine(
    start: Search, condition: Search | None = None, mode: ConditionMode | None = None
) -> Machine:
    """``mode: pattern``: a line matching ``start`` opens a group.

    Without a condition, every following line that does not match ``start``
    joins (a matching one opens the next group). With one, ``mode`` says how
    ``condition`` decides, with the meanings of Vector's ``multiline.mode``:
    ``continue_through`` (matching lines join), ``continue_past`` (matching
    lines join, and the first one that does not match is the last line),
    ``halt_before`` (lines join until one matches, which is not included),
    ``halt_with`` (lines join until one matches, which is the last line).
    """
    OPEN = 0
    if condition is None or mode is None:
        rules = [Rule(start, OPEN, negate=True)]
    elif mode == "continue_through":
        rules = [Rule(condition, OPEN)]
    elif mode == "continue_past":
        rules = [Rule(condition, OPEN), Rule(condition, DONE, negate=True)]
    elif mode == "halt_before":
        rules = [Rule(condition, OPEN, negate=True)]
    else:  # halt_with
        rules = [Rule(condition, OPEN, negate=True), Rule(condition, DONE)]
    return Machine([Rule(start, OPEN)], [rules], lead=None)


def compile_builtin(pattern: str) -> Search:
    """A built-in rule's regex -> its ``search``, matched with Python's ``re``.

    The built-in patterns are written in the syntax Python's ``re`` and Rust's
    ``regex`` share, with the same meaning in both, and without nested
    repetitions (no backtracking blow-up). Each is compiled with RE2 too, so a
    table that is no valid Rust regex fails at once (``tests/test_multiline_rules``
    checks that both engines answer alike on every line of the corpora). A call
    into RE2 costs 0.5-2 µs, several times what ``re`` needs for a short line,
    and the grouper calls a rule per line of a trace: ``re`` matches.
    """
    compile_user_pattern(pattern, "built-in multiline rule")
    return re.compile(pattern).search
