"""What a start rule's regex tells without running it, read with the standard library's regex parser.

``required_literals``: the texts one of which every match contains (the
literal runs it cannot match without, ``Traceback (most recent call last):``,
or the words of an alternation, ``Exception`` / ``Error`` / ``Throwable``);
``leading_literals``: those a match begins with; ``may_begin_with_space``:
whether it can take a line that begins with whitespace; ``first_characters``:
what a match at a line's start begins with. ``multiline_starts`` uses them so
that a start rule never needs a hand-written hint: a new table gets its
cheap tests for free. ``flat_alternatives``: the top-level alternatives of
several patterns as one (the tables' marks), those that may begin with any
character last.
"""

from __future__ import annotations

from collections.abc import Sequence
from re import _constants as sre  # type: ignore[attr-defined]  # the stdlib's own parser
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any


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
    """The characters other than whitespace a match of ``pattern`` (at a line's start) can begin with;
    None when any may."""
    return _firsts(list(sre_parse.parse(pattern)))


def anchored_first_characters(pattern: str) -> frozenset[str] | None:
    """``first_characters`` of a *searched* ``pattern`` that is anchored at the line's start (``^...``);
    None when not so anchored or when any character may come first."""
    items = list(sre_parse.parse(pattern))
    if not items or items[0] != (sre.AT, sre.AT_BEGINNING):
        return None
    return _firsts(items)


def leading_literals(pattern: str) -> frozenset[str] | None:
    """Texts one of which every match of ``pattern`` begins with; None if not known (conservative)."""
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & sre.SRE_FLAG_IGNORECASE:
        return None
    return _leading(list(parsed))


def may_begin_with_space(pattern: str) -> bool:
    """Whether ``pattern`` (searched) can match a line that begins with whitespace or is empty.

    True unless it is anchored at the line's start and what follows the
    anchor cannot match whitespace (conservative: True when unsure).
    """
    items = list(sre_parse.parse(pattern))
    if not items or items[0] != (sre.AT, sre.AT_BEGINNING):
        return True
    return _may_take_space(items[1:])


def flat_alternatives(patterns: list[str]) -> str:
    """The top-level alternatives of ``patterns``, once each, those that may begin with any character last."""
    alternatives = dict.fromkeys(part for pattern in patterns if pattern for part in top_level_alternatives(pattern))
    return "|".join(sorted(alternatives, key=lambda part: first_characters(part) is None))


def top_level_alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|`` (outside groups and character classes)."""
    parts, depth, start, index, in_class = [], 0, 0, 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            index += pattern.startswith("]", index + 1)  # "[]...]": the first "]" is a member
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and not depth:
            parts.append(pattern[start:index])
            start = index + 1
        index += 1
    return [*parts, pattern[start:]]


# -- reading the parse tree ------------------------------------------------------------


def _sequence(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    """The best required set of a sequence: a literal run, or what a group inside must contain.

    A run goes on through parts that match one of a few fixed texts (``[cm]``,
    ``(?:js|ts)``, ``x?``), as every combination of them: ``\\.(?:[cm]?js|ts)``
    gives ``.js``, ``.cjs``, ``.mjs``, ``.ts``.
    """
    found: list[frozenset[str]] = []
    run: set[str] = {""}
    for op, av in items:
        texts = _texts(op, av)
        if texts is not None and len(run) * len(texts) <= _MAX_TEXTS:
            run = {a + b for a in run for b in texts}
            continue
        _close(run, found)
        run = set(texts) if texts is not None and len(texts) <= _MAX_TEXTS else {""}
        inner = _item(op, av) if texts is None else None
        if inner is not None:
            found.append(inner)
    _close(run, found)
    if not found:
        return None
    # the set whose shortest member is longest filters best; on a tie the later one (often rarer)
    return max(reversed(found), key=lambda s: (min(map(len, s)), -len(s)))


#: the most texts a run of alternatives is spelt out into
_MAX_TEXTS = 32


def _close(run: set[str], found: list[frozenset[str]]) -> None:
    if min(map(len, run)) >= _MIN_LITERAL:
        found.append(frozenset(run))


def _texts(op: Any, av: Any) -> set[str] | None:
    """The texts one item matches when they are few and fixed (no newline), else None."""
    if op is sre.LITERAL:
        return {chr(av)} if av != 10 else None
    if op is sre.IN:
        if av and all(member_op is sre.LITERAL and code != 10 for member_op, code in av):
            return {chr(code) for _, code in av}
        return None
    if op is sre.SUBPATTERN:
        return None if av[1] & sre.SRE_FLAG_IGNORECASE else _sequence_texts(list(av[3]))
    if op is sre.BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            texts = _sequence_texts(list(alternative))
            if texts is None:
                return None
            union |= texts
        return union if len(union) <= _MAX_TEXTS else None
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and av[0] == 0 and av[1] == 1:
        texts = _sequence_texts(list(av[2]))
        return None if texts is None else texts | {""}
    return None


def _sequence_texts(items: Sequence[tuple[Any, Any]]) -> set[str] | None:
    run: set[str] = {""}
    for op, av in items:
        texts = _texts(op, av)
        if texts is None or len(run) * len(texts) > _MAX_TEXTS:
            return None
        run = {a + b for a in run for b in texts}
    return run


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


def _leading(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    if not items:
        return None
    op, av = items[0]
    if op is sre.LITERAL:
        run = ""
        for item_op, item_av in items:
            if item_op is not sre.LITERAL or item_av == 10:
                break
            run += chr(item_av)
        return frozenset([run]) if run else None
    if op is sre.BRANCH:
        union: set[str] = set()
        for alternative in av[1]:
            found = _leading(list(alternative))
            if found is None:
                return None
            union |= found
        return frozenset(union)
    if op is sre.SUBPATTERN and not av[1] & sre.SRE_FLAG_IGNORECASE:
        return _leading(list(av[3]))
    return None


def _firsts(items: Sequence[tuple[Any, Any]]) -> frozenset[str] | None:
    """The characters other than whitespace a match of ``items`` can begin with (None: any)."""
    for number, (op, av) in enumerate(items):
        rest = list(items[number + 1:])
        if op is sre.LITERAL:
            return frozenset() if chr(av).isspace() else frozenset([chr(av)])
        if op is sre.AT:
            if av in (sre.AT_END, sre.AT_END_LINE, sre.AT_END_STRING):
                return frozenset()  # "\s*$": an empty (or blank) line
            if av in (sre.AT_BEGINNING, sre.AT_BEGINNING_LINE, sre.AT_BEGINNING_STRING):
                continue
            return None
        if op is sre.BRANCH:
            found: set[str] = set()
            for alternative in av[1]:
                part = _firsts(list(alternative) + rest)
                if part is None:
                    return None
                found |= part
            return frozenset(found)
        if op is sre.SUBPATTERN and not av[1] & sre.SRE_FLAG_IGNORECASE:
            return _firsts(list(av[3]) + rest)
        if op is sre.IN and _space_class(av):
            return frozenset()  # whitespace
        if op is sre.IN and all(member_op is sre.LITERAL for member_op, _ in av):
            return frozenset(chr(code) for _, code in av if not chr(code).isspace())
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT) and len(av[2]) == 1 and (
            av[2][0][0] is sre.IN and _space_class(av[2][0][1])
        ):
            if av[0] == 0:
                continue  # "\s*": what follows may come first
            return frozenset()
        return None  # anything else: any character
    return None  # the pattern matches an empty text: any line


def _space_class(members: Sequence[tuple[Any, Any]]) -> bool:
    """A ``[...]`` class of whitespace only: ``\\s``, or ``[^\\S\\n]`` (whitespace but a line break)."""
    return list(members) in (
        [(sre.CATEGORY, sre.CATEGORY_SPACE)],
        [(sre.NEGATE, None), (sre.CATEGORY, sre.CATEGORY_NOT_SPACE), (sre.LITERAL, 10)],
    )


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
