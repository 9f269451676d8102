"""``parse_groks`` (VRL's Datadog grok: patterns tried in order, aliases, filters) and ``parse_grok``.

Patterns and aliases must be constants (VRL requires it); they are compiled
once when the program is (``grok_rules``). ``parse_groks``: the first
pattern matching the whole value wins; each non-empty capture with a
destination goes to its path, filtered; a destination written twice holds
an array; empty objects are left out. ``parse_grok`` (VRL's Logstash grok) takes
one pattern searched anywhere in the value, with the upper-case library only,
and gives each named capture that took part under its name as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..function import ArgumentError, FunctionError
from .declare import ARR, OBJ, Args, B, always, function, opt, req
from .grok_filters import FilterFailed
from .grok_library import LOGSTASH, PARSE_GROKS_LIBRARY
from .grok_rules import Field, GrokRule, compile_rules
from .regex_deadline import within_deadline

_MISSING = object()


def _get(parsed: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = parsed
    for segment in path:
        if type(value) is not dict or segment not in value:
            return _MISSING
        value = value[segment]
    return value


def _insert(parsed: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    target = parsed
    for segment in path[:-1]:
        inner = target.get(segment)
        if type(inner) is not dict:
            inner = target[segment] = {}
        target = inner
    target[path[-1]] = value


def _filtered(text: str, field: Field) -> Any:
    value: Any = text
    try:
        for apply in field.filters:
            value = apply(value)
            if value is None:
                return None
    except FilterFailed:
        return None
    return value


def _put(parsed: dict[str, Any], field: Field, value: Any) -> None:
    if not field.path:
        if type(value) is dict:
            parsed.update(value)
        return
    existing = _get(parsed, field.path)
    if existing is _MISSING:
        _insert(parsed, field.path, value)
    elif type(existing) is list:
        existing.append(value)
    else:
        _insert(parsed, field.path, [existing, value])


def _without_empty(value: Any) -> Any:
    """VRL's clean-up of a grok result: no empty object, no null, in objects at any depth."""
    if type(value) is dict:
        cleaned = {key: _without_empty(item) for key, item in value.items()}
        return {key: item for key, item in cleaned.items() if item is not None and item != {}}
    if type(value) is list:
        return [_without_empty(item) for item in value]
    return value


def _apply(rule: GrokRule, value: str) -> dict[str, Any] | None:
    found = within_deadline(rule.regex.fullmatch, value)
    if found is None:
        return None
    parsed: dict[str, Any] = {}
    for key, index, field in rule.captures:
        text = found.group(index)
        if not text:
            continue
        if field is None:
            parsed[key] = text
            continue
        result = _filtered(text, field)
        if result is not None:
            _put(parsed, field, result)
    return _without_empty(parsed)


def _groks(rules: tuple[GrokRule, ...]) -> Callable[..., dict[str, Any]]:
    def parse_groks(value: str, _patterns: Any, _aliases: Any, _alias_sources: Any) -> dict[str, Any]:
        for rule in rules:
            parsed = _apply(rule, value)
            if parsed is not None:
                return parsed
        raise FunctionError("unable to parse grok: value does not match any rule")

    return parse_groks


def _static(arg: Any, name: str) -> Any:
    if arg is not None and not arg.constant:
        raise ArgumentError(f'expected static expression for argument "{name}"')
    return arg.value if arg is not None else None


def _rules(args: Args) -> tuple[GrokRule, ...]:
    patterns = _static(args[1], "patterns")
    aliases = _static(args[2], "aliases") or {}
    if _static(args[3], "alias_sources"):
        raise ArgumentError('"alias_sources" (aliases read from files) is not implemented by logagent')
    if type(patterns) is not list or any(type(item) is not str for item in patterns):
        raise ArgumentError('invalid argument "patterns": grok pattern should be a string')
    if type(aliases) is not dict or any(type(item) is not str for item in aliases.values()):
        raise ArgumentError('invalid argument "aliases": alias pattern should be a string')
    return compile_rules(patterns, aliases, PARSE_GROKS_LIBRARY)


def _check_groks(args: Args) -> None:
    _rules(args)


def _specialize_groks(args: Args) -> Callable[..., Any]:
    return _groks(_rules(args))


def parse_groks(value: str, patterns: Any, aliases: Any, alias_sources: Any) -> dict[str, Any]:
    """Unspecialised form (the compiler always specialises: the patterns are constants)."""
    return _groks(compile_rules(patterns, aliases or {}, PARSE_GROKS_LIBRARY))(value, None, None, None)


def _grok_rule(args: Args) -> GrokRule:
    pattern = _static(args[1], "pattern")
    if type(pattern) is not str:
        raise ArgumentError('invalid argument "pattern": grok pattern should be a string')
    rules = compile_rules([pattern], {}, LOGSTASH, datadog=False)
    if not rules:
        raise ArgumentError(f'The given pattern "{pattern}" ended up compiling into an empty regex')
    return rules[0]


def _grok(rule: GrokRule) -> Callable[..., dict[str, Any]]:
    def parse_grok(value: str, _pattern: Any) -> dict[str, Any]:
        found = within_deadline(rule.regex.search, value)
        if found is None:
            raise FunctionError("unable to parse input with grok pattern")
        result = {}
        for key, index, field in rule.captures:
            text = found.group(index)
            if text is not None:
                result[".".join(field.path) if field is not None else key] = text
        return result

    return parse_grok


def parse_grok(value: str, pattern: str) -> dict[str, Any]:
    return _grok(_grok_rule((None, _Constant(pattern))))(value, pattern)  # type: ignore[arg-type]


class _Constant:
    constant = True

    def __init__(self, value: Any) -> None:
        self.value = value


FUNCTIONS = [
    function("parse_groks", (req("value", B), req("patterns", ARR), opt("aliases", OBJ), opt("alias_sources", ARR)),
             always(OBJ, True), parse_groks, check=_check_groks, specialize=_specialize_groks),
    function("parse_grok", (req("value", B), req("pattern", B)), always(OBJ, True), parse_grok,
             check=lambda args: _grok_rule(args) and None, specialize=lambda args: _grok(_grok_rule(args))),
]
