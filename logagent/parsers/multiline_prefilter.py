"""The cheap test before the start rules: which lines could begin a trace at all.

Most lines a grouper looks at begin no trace, and trying a dozen start rules
on each costs microseconds. What every line a rule takes must contain is read
off the rule's own regex (with the standard library's regex parser): the
literal runs it cannot match without (``Traceback (most recent call last):``),
or one of the words of an alternation (``Exception`` / ``Error`` /
``Throwable``). One substring search per such literal (C-speed, no regex)
rejects a line; a rule without a literal of two characters or more is tried
itself. So a start rule never needs a hand-written hint, and a new table
gets its prefilter for free.

The parser also tells which rules can take a line that begins with whitespace:
an indented line is tested against those only (most start rules are anchored
at a word, a path or a literal).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from re import _constants as sre  # type: ignore[attr-defined]  # the stdlib's own parser
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any, NamedTuple

Test = Callable[[str], bool]

#: a literal shorter than this is in nearly every line: no use as a filter
_MIN_LITERAL = 2

#: the first characters (``text[:1]``) of a text that is empty or begins with whitespace
BLANK_FIRST = frozenset([""] + [c for c in map(chr, range(0x3001)) if c.isspace()])


def required_literals(pattern: str) -> frozenset[str] | None:
    """Texts one of which every match of ``pattern`` contains, or None if none is known (conservative)."""
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & sre.SRE_FLAG_IGNORECASE:  # "(?i)" for the whole pattern
        return None
    return _sequence(list(parsed))


def first_characters(pattern: str) -> frozenset[str] | None:
    """The characters a match of ``pattern`` (at a line's start) can begin with; None when any may."""
    return _firsts(list(sre_parse.parse(pattern)))


def may_begin_with_space(pattern: str) -> bool:
    """Whether ``pattern`` (searched) can match a line that begins with whitespace or is empty.

    True unless it is anchored at the line's start and what follows the
    anchor cannot match whitespace (conservative: True when unsure).
    """
    items = list(sre_parse.parse(pattern))
    if not items or items[0] != (sre.AT, sre.AT_BEGINNING):
        return True
    return _may_take_space(items[1:])


class Prefilter(NamedTuple):
    """Tests true for every line some of the rules matches (and for few others)."""

    #: one line
    line: Test
    #: some of several lines (one substring search per literal over them all)
    lines: Callable[[list[str]], bool]


def prefilter(patterns: Iterable[str], search: Callable[[str], Callable[[str], object]]) -> Prefilter:
    """The prefilter of ``patterns``; ``search(pattern)`` compiles one that has no literal to filter
    on, to be tried itself."""
    literals: set[str] = set()
    direct: list[Callable[[str], object]] = []
    for pattern in dict.fromkeys(patterns):
        found = required_literals(pattern)
        if found is None:
            direct.append(search(pattern))
        else:
            literals |= found
    # a literal that contains another one is implied by it
    kept = tuple(sorted(lit for lit in literals if not any(o != lit and o in lit for o in literals)))
    tried = tuple(direct)

    def line(text: str) -> bool:
        for literal in kept:
            if literal in text:
                return True
        for rule in tried:
            if rule(text) is not None:
                return True
        return False

    def lines(texts: list[str]) -> bool:
        # no literal holds a newline, so none is found across two of the lines
        joined = "\n".join(texts)
        for literal in kept:
            if literal in joined:
                return True
        return any(rule(text) is not None for rule in tried for text in texts)

    return Prefilter(line, lines)


# -- reading the parse tree ------------------------------------------------------------


def _sequence(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    """The best required set of a sequence: a literal run, or what a group inside must contain."""
    found: list[frozenset[str]] = []
    run = ""
    for op, av in items:
        if op is sre.LITERAL and av != 10:  # (a newline would break the test of joined lines)
            run += chr(av)
            continue
        if len(run) >= _MIN_LITERAL:
            found.append(frozenset([run]))
        run = ""
        inner = _item(op, av)
        if inner is not None:
            found.append(inner)
    if len(run) >= _MIN_LITERAL:
        found.append(frozenset([run]))
    if not found:
        return None
    # the set whose shortest member is longest filters best; on a tie the later one (often rarer)
    return max(reversed(found), key=lambda s: (min(map(len, s)), -len(s)))


def _item(op: Any, av: Any) -> frozenset[str] | None:
    if op is sre.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        return None if add_flags & sre.SRE_FLAG_IGNORECASE else _sequence(list(sub))
    if op is sre.BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            found = _sequence(list(alternative))
            if found is None:
                return None
            union |= found
        return frozenset(union)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        low, _high, sub = av
        return _sequence(list(sub)) if low >= 1 else None
    if op is sre.ATOMIC_GROUP:
        return _sequence(list(av))
    return None


def _firsts(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    for op, av in items:
        if op is sre.LITERAL:
            return frozenset([chr(av)])
        if op is sre.BRANCH:
            found: set[str] = set()
            for alternative in av[1]:
                part = _firsts(list(alternative))
                if part is None:
                    return None
                found |= part
            return frozenset(found)
        if op is sre.SUBPATTERN and not av[1] & sre.SRE_FLAG_IGNORECASE:
            return _firsts(list(av[3]))
        if op is sre.IN and all(member_op is sre.LITERAL for member_op, _ in av):
            return frozenset(chr(code) for _, code in av)
        return None  # anything else: any character
    return None  # the empty pattern


def _may_take_space(items: Sequence[tuple[Any, Any]]) -> bool:
    """Whether the sequence ``items`` can match at a position holding whitespace, or the end."""
    for op, av in items:
        if op is sre.AT:
            continue  # an assertion consumes nothing: look at what follows
        if op is sre.LITERAL:
            return chr(av).isspace()
        if op is sre.IN:
            return not _class_without_space(av)
        if op is sre.BRANCH:
            return any(_may_take_space(list(alternative)) for alternative in av[1])
        if op is sre.SUBPATTERN:
            return _may_take_space(list(av[3]))
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            if _may_take_space(list(av[2])):
                return True
            if av[0] >= 1:
                return False
            continue  # an optional part that takes no whitespace: what follows decides
        return True  # ".", groups of other kinds, anything else: maybe
    return True  # the pattern can match the empty rest


def _class_without_space(members: Sequence[tuple[Any, Any]]) -> bool:
    """A ``[...]`` class that holds no whitespace character for sure."""
    if members and members[0][0] is sre.NEGATE:
        return members[1:] == [(sre.CATEGORY, sre.CATEGORY_SPACE)]  # [^\s] and \S
    for op, av in members:
        if op is sre.LITERAL and not chr(av).isspace():
            continue
        if op is sre.RANGE and (av[0] > 0x20 and av[1] < 0x7F):
            continue
        if op is sre.CATEGORY and av in (sre.CATEGORY_NOT_SPACE, sre.CATEGORY_DIGIT, sre.CATEGORY_WORD):
            continue
        return False
    return True
