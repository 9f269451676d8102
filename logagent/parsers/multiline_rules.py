"""The multiline machine of the built-in trace detectors (``logagent.parsers.traces``).

``language_machine(["java", "python"])`` joins the languages' tables into one
:class:`Machine`; ``auto`` is every language at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from logagent.parsers.multiline_machine import DONE, Machine, Rule, Search, compile_builtin, compile_user_pattern
from logagent.parsers.multiline_prefilter import flat_alternatives, may_begin_with_space
from logagent.parsers.multiline_starts import StartTest
from logagent.parsers.traces import LANGUAGES
from logagent.parsers.traces.shapes import END, NOT, TENTATIVE, Language

__all__ = ["ALIASES", "AUTO", "LANGUAGES", "language_machine", "language_names"]

#: other names of a language (annotation values, ``languages``)
ALIASES = {"javascript": "nodejs"}

#: what ``mode: auto`` detects
AUTO = tuple(LANGUAGES)


def language_names() -> tuple[str, ...]:
    """Every name a language may be given by: its own, and the aliases."""
    return AUTO + tuple(ALIASES)


def language_machine(languages: Iterable[str]) -> Machine:
    """One machine detecting the traces of every language named (a cached object per set)."""
    return _build(tuple(sorted({ALIASES.get(name, name) for name in languages})))


@lru_cache(maxsize=None)
def _build(languages: tuple[str, ...]) -> Machine:
    unknown = [name for name in languages if name not in LANGUAGES]
    if unknown or not languages:
        raise ValueError(
            f"unknown language {unknown[0] if unknown else ''!r}; expected some of {', '.join(language_names())}"
        )
    index: dict[tuple[str, str], int] = {}
    for name in languages:
        for state in LANGUAGES[name].states:
            index[name, state] = len(index)
    searches: dict[str, Search] = {}

    def rule(name: str, spec: tuple[Any, ...]) -> Rule:
        pattern, target = spec[0], spec[1]
        if pattern not in searches:
            searches[pattern] = compile_builtin(pattern)
        number = DONE if target == END else index[name, target]
        own_lead = next((item for item in spec[2:] if isinstance(item, int)), LANGUAGES[name].lead)
        return Rule(searches[pattern], number, tentative=TENTATIVE in spec[2:], negate=NOT in spec[2:],
                    lead=own_lead, pattern=pattern)

    start_specs = [spec for name in languages for spec in LANGUAGES[name].starts]
    starts = [rule(name, spec) for name in languages for spec in LANGUAGES[name].starts]
    states: list[list[Rule]] = [[] for _ in index]
    for (name, state), number in index.items():
        states[number] = [rule(name, spec) for spec in LANGUAGES[name].states[state]]
    lead = max(r.lead for r in starts)  # a rule may reach further than its language (dart's printed stack)
    marks = _marks([LANGUAGES[name] for name in languages])

    def start_class(keep: list[bool]) -> StartTest:
        return StartTest([r for r, k in zip(starts, keep) if k])

    # distance 0 (a marked line): every rule; further: the rules whose traces reach that far
    classes = [start_class([distance == 0 or r.lead >= distance for r in starts]) for distance in range(lead + 1)]
    blank = start_class([may_begin_with_space(spec[0]) for spec in start_specs])
    machine = Machine(starts, states, lead=lead, marks=marks, classes=classes, blank_class=blank)
    # every state alone, the states each start pattern opens (several languages share one), and every
    # set a step leads to from those: no regex is compiled while lines wait
    opened: dict[Search, set[int]] = {}
    for r in starts:
        opened.setdefault(r.search, set()).add(r.target)
    machine.prepare(machine.reachable([(number,) for number in range(len(states))]
                                      + [tuple(sorted(t)) for t in opened.values()]))
    return machine


def _marks(languages: list[Language]) -> str:
    """The regex of the marked lines of ``languages``: empty or blank, indented and then one of
    their ``indented``, or beginning with one of their ``marks``. The tables' parts are checked
    with RE2, and may be matched on many lines at once: they hold no ``\\s`` nor any negated
    class that could take a line break, and the indentation is ``[^\\S\\n]``. Made for ``re``'s
    matcher: the indentation is taken possessively (``++``), so an
    ordinary indented line is turned down without going back over it for every alternative, and
    the alternatives are flat, each tried only if the line's next character can begin it, the
    ones that can begin with any character last."""
    indented = flat_alternatives([lang.indented for lang in languages])
    others = flat_alternatives([lang.marks for lang in languages])
    for part in (indented, others):
        if part:
            compile_user_pattern(part, "built-in multiline marks")
    return "|".join([rf"[^\S\n]++(?:$|{indented})" if indented else r"[^\S\n]++$", "$", *([others] if others else [])])
