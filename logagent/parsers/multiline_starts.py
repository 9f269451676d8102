"""Which lines begin a trace: the start rules of one class, tried on many lines at once.

Most lines the grouper asks about begin no trace. What every line a rule
takes must contain is read off the rule's own regex (``required_literals``);
a line is tried against a rule only if it holds one of that rule's
literals, so a line without any is rejected without a regex, and a line
with ``Error`` in it meets the few rules that need ``Error``, not all of
them. Which literals a text holds is one pass of RE2's set matcher over it,
however many literals the rules have; for many lines at once that text is
the lines joined, and only the literals found are looked up line by line,
so only the lines they are in cost anything in Python. A rule without a
literal of two characters or more is tried on every line itself.

A rule whose every match begins with one of its literals (``Error: x``
for ``(?:Exception|Error|Throwable)...``) is searched from the first of
them in the line, not from its start.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate, chain
from typing import Protocol

from logagent.parsers.multiline_prefilter import leading_literals, required_literals

#: the states a group is in after a line
Active = tuple[int, ...]


class StartRule(Protocol):
    """What a start test reads of a rule (``multiline_machine.Rule``)."""

    search: Callable[..., object]
    target: int
    negate: bool
    pattern: str | None


class StartTest:
    """The start rules of one class, and the states a line opens a group in."""

    __slots__ = ("rules", "_units", "_literals", "_present", "_direct")

    def __init__(self, rules: Sequence[StartRule]) -> None:
        self.rules = tuple(rules)
        # a pattern several languages start with is one unit, tried once
        units: dict[object, tuple[StartRule, list[int]]] = {}
        for rule in self.rules:
            units.setdefault(rule.search, (rule, []))[1].append(rule.target)
        #: per unit: (search, negate, whether every match begins with one of its literals, its states);
        #: if so, the regex is searched from the first of them in the line on
        self._units: tuple[tuple[Callable[..., object], bool, bool, tuple[int, ...]], ...] = ()
        by_literal: dict[str, list[int]] = {}
        direct: list[int] = []
        plan = []
        for number, (rule, targets) in enumerate(units.values()):
            pattern = rule.pattern if not rule.negate else None
            literals = required_literals(pattern) if pattern is not None else None
            leading = leading_literals(pattern) if literals is not None and pattern is not None else None
            # the search may start at the first literal found only when those are the ones a match begins with
            begins = leading is not None and leading == literals and hasattr(rule.search, "__self__")
            plan.append((rule.search, rule.negate, begins, tuple(sorted(set(targets)))))
            if literals is None:
                direct.append(number)
            for literal in sorted(literals or ()):
                by_literal.setdefault(literal, []).append(number)
        self._units = tuple(plan)
        #: (literal, the units that need it)
        self._literals = tuple((literal, tuple(numbers)) for literal, numbers in sorted(by_literal.items()))
        #: UTF-8 text -> the indexes in ``_literals`` of those it holds (one pass, however many literals)
        self._present: Callable[[bytes], list[int]] | None = None
        if self._literals:
            from logagent.user_regex.re2_binding import literal_set  # noqa: PLC0415  # RE2 only with start rules

            self._present = literal_set([literal for literal, _ in self._literals])
        #: units without a literal: tried on every line
        self._direct = tuple(direct)

    def start(self, line: str) -> Active | None:
        """The states a group opened by ``line`` is in, or None if it opens none."""
        at: dict[int, int] = dict.fromkeys(self._direct, 0)
        literals = self._literals
        for which in self._present(line.encode("utf-8", "surrogatepass")) if self._present else ():
            literal, numbers = literals[which]
            position = line.find(literal)
            if position >= 0:
                for number in numbers:
                    if at.get(number, position) >= position:
                        at[number] = position
        return self._try(line, at) if at else None

    def starts(self, lines: list[str]) -> list[tuple[int, Active]]:
        """(position in ``lines``, states) of the lines that open a group, in order."""
        if not lines:
            return []
        hits: dict[int, dict[int, int]] = {}  # line -> unit -> where its first literal is in the line
        joined = "\n".join(lines)  # no literal holds a newline: none is found across two lines
        count = len(lines)
        literals = self._literals
        present = self._present(joined.encode("utf-8", "surrogatepass")) if self._present else ()
        # where each line begins in ``joined``
        bounds = [0, *accumulate(map((1).__add__, map(len, lines)))] if present else []
        for which in present:
            literal, numbers = literals[which]
            position = joined.find(literal)
            while position >= 0:
                index = bisect_right(bounds, position) - 1
                at = hits.setdefault(index, {})
                here = position - bounds[index]
                for number in numbers:
                    if at.get(number, here) >= here:
                        at[number] = here
                position = joined.find(literal, bounds[index + 1]) if index + 1 < count else -1
        for number in self._direct:
            search, negate = self._units[number][:2]
            for index, line in enumerate(lines):
                if (search(line) is None) is negate:
                    hits.setdefault(index, {})[number] = 0
        found: list[tuple[int, Active]] = []
        for index in sorted(hits):
            active = self._try(lines[index], hits[index])
            if active is not None:
                found.append((index, active))
        return found

    def _try(self, line: str, at: dict[int, int]) -> Active | None:
        """The states of the units in ``at`` (unit -> where its first literal is) that take ``line``."""
        found: list[Active] = []
        units = self._units
        for number, position in at.items():
            search, negate, begins, states = units[number]
            if begins:  # every match begins with one of the literals: none before the first one
                hit = search(line, position) is not None
            else:
                hit = (search(line) is None) is negate
            if hit:
                found.append(states)
        if len(found) < 2:  # the usual answer: no rule, or the states of one (sorted, once each)
            return found[0] if found else None
        return tuple(sorted(set(chain.from_iterable(found))))
