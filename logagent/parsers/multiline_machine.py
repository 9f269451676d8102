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
with RE2, the engine the conditions use (linear time).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from logagent.conditions.regex import RegexError, compile_regex

#: the target of a rule that completes the group with the line it takes
DONE = -1

Search = Callable[[str], object]

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
    """``search`` (or, with ``negate``, its failure) moves the group to ``target``."""

    __slots__ = ("search", "target", "tentative", "negate")

    def __init__(self, search: Search, target: int, *, tentative: bool = False, negate: bool = False) -> None:
        self.search = search
        self.target = target
        self.tentative = tentative
        self.negate = negate

    def takes(self, line: str) -> bool:
        return (self.search(line) is None) is self.negate


#: the states a group is in after a line; a tuple so it can be compared and reused
Active = tuple[int, ...]


class Machine:
    """Start rules plus continuation rules per state (states are indexes)."""

    __slots__ = ("start_any", "starts", "states", "lead", "marks", "marked", "start_groups")

    def __init__(
        self,
        start_any: Search,
        starts: Sequence[Rule],
        states: Sequence[Sequence[Rule]],
        *,
        lead: int | None,
        marks: str | None = None,
        start_groups: Sequence[tuple[Search, Sequence[Rule]]] | None = None,
    ) -> None:
        #: one search over every start rule at once: the cheap rejection
        self.start_any = start_any
        self.starts = tuple(starts)
        #: (a search, the start rules worth trying only if it matches): e.g. the
        #: rules anchored at the line's start behind one alternation of them all
        self.start_groups = tuple((test, tuple(rules)) for test, rules in start_groups or [(start_any, starts)])
        self.states = tuple(tuple(rules) for rules in states)
        #: when not None: a group of two lines or more has a marked line (empty,
        #: indented, or matching ``marks``) among its first ``lead + 1`` lines. In a batch without such
        #: lines, only the last ``lead`` records of each stream can then begin
        #: a group (see MultilineGrouper.feed); None: no such promise
        self.lead = lead
        #: an RE2 regex of line beginnings that count as marked like empty and
        #: indented lines (the parser flags them too); None: only those
        self.marks = marks
        self.marked: Search | None = compile_builtin(f"^(?:{marks})") if marks else None

    def start(self, line: str) -> Active | None:
        """The states a group opened by ``line`` is in, or None if it opens none."""
        found: dict[int, None] = {}
        for test, rules in self.start_groups:
            if test(line) is not None:
                seen: dict[Search, bool] = {}  # a pattern several languages start with is tried once
                for rule in rules:
                    hit = seen.get(rule.search)
                    if hit is None:
                        hit = seen[rule.search] = rule.takes(line)
                    if hit:
                        found[rule.target] = None
        return tuple(found) or None

    def step(self, active: Active, line: str) -> tuple[Active, bool] | None:
        """``(states after the line, tentative)`` if ``line`` continues the group, else None.

        The states may be empty: the group is complete with this line.
        """
        targets: list[int] = []
        tentative = True
        for state in active:
            for rule in self.states[state]:
                if rule.takes(line):
                    if rule.target not in targets:
                        targets.append(rule.target)
                    tentative = tentative and rule.tentative
                    break
        if not targets:
            return None
        return tuple(target for target in targets if target != DONE), tentative


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
    return Machine(start, [Rule(start, OPEN)], [rules], lead=None)


def compile_builtin(pattern: str) -> Search:
    """A built-in rule's regex (RE2 with Rust's syntax, as a user's) -> its ``search``.

    The built-in patterns are written in the syntax Python's ``re`` and Rust's
    ``regex`` share, with the same meaning in both; a call into RE2 costs about
    0.5 µs, several times what ``re`` takes to reject a short line, and most
    lines a rule is tried on do not match it. So ``re`` rejects first, and RE2
    decides on the lines it lets through.
    """
    reject = re.compile(pattern).search
    decide = compile_user_pattern(pattern, "built-in multiline rule")
    return lambda line: decide(line) if reject(line) is not None else None
