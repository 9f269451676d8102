"""Batch forms of common functions: the implementations' results, with the per-record work done in C.

A form is called as ``form(run, sel, values, wrap, source)`` with the
arguments' values (kinds already checked) and returns the results aligned
with ``sel``, or raises ``BatchErrors`` for the records it fails for (with
the others' results). Each falls back to the implementation for anything
out of its fast case, so results and errors are the implementation's:

- ``is_*`` type tests and the ``string``/``object``/... assertions: a
  comprehension, or one look at the values' distinct types;
- ``parse_json`` of the texts of flat objects (no nested value, no integer
  outside i64): one typed msgspec decode per text, which checks both in C;
- ``is_json``: a first look at the first and last characters, then that
  decode for texts that start with ``{``; in a program that also calls
  ``parse_json``, the objects are kept in the run's cache, where
  ``parse_json`` of the same text (the same string object) finds them:
  DeepFlow's "parse JSON if it is JSON" decodes each message once;
- ``parse_regex`` with a constant pattern that ``re`` runs for ASCII texts
  (``regex_bounded.py``): the searches mapped in C, ``groupdict`` per match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import re
from itertools import compress, repeat
from operator import is_, not_
from typing import Annotated, Any, Union

import msgspec

from .ast import Call, Variable
from .batch_run import BatchRun
from .batch_values import FALSE, TRUE, BatchErrors, Uniform, Values, apply
from .function import ArgInfo, FunctionError
from .stdlib.types import _JSON_ENDS, _JSON_STARTS, _JSON_WHITESPACE
from .value import Timestamp

_I64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
#: an object whose values are all scalars, integers within i64 (else it fails and the implementation decides)
_flat_object = msgspec.json.Decoder(dict[str, Union[str, _I64, float, bool, None]]).decode
_JSON_CACHE = "is_json"
_groupdict = re.Match.groupdict
_DICT = {dict}
#: a text whose first or last character is not among these is no JSON (``types.could_be_json``)
_FIRST = frozenset(_JSON_STARTS) | frozenset(_JSON_WHITESPACE)
_LAST = frozenset(_JSON_ENDS) | frozenset(_JSON_WHITESPACE)

_TYPE_TESTS: dict[str, type] = {"is_string": str, "is_integer": int, "is_float": float, "is_boolean": bool,
                                "is_timestamp": Timestamp, "is_array": list, "is_object": dict,
                                "is_null": type(None)}
_ASSERTIONS: dict[str, type] = {"string": str, "int": int, "float": float, "bool": bool, "object": dict,
                                "array": list, "timestamp": Timestamp}

Form = Callable[[BatchRun, list[int], list[Values], Callable[[Exception], Exception], Any], Values]


def called_names(nodes: Any) -> frozenset[str]:
    """The names of every function called in a syntax tree (or a tuple of trees)."""
    return frozenset(node.name for node in _walk(nodes) if type(node) is Call)


def last_mentions(nodes: Any) -> dict[str, int]:
    """Variable name -> the offset of its last mention in a syntax tree, read, target or path base."""
    last: dict[str, int] = {}
    for node in _walk(nodes):
        if type(node) is Variable:
            last[node.name] = max(last.get(node.name, -1), node.offset)
    return last


def _walk(node: Any) -> Iterator[Any]:
    if isinstance(node, tuple):
        for item in node:
            yield from _walk(item)
    elif isinstance(node, msgspec.Struct):  # a syntax tree's node
        yield node
        for name in node.__struct_fields__:
            yield from _walk(getattr(node, name))


def batch_form(name: str, implementation: Callable[..., Any], infos: tuple[ArgInfo | None, ...],
               names: frozenset[str]) -> Form | None:
    """The batch form of a call of ``name`` with these arguments, or None (the implementation per record)."""
    kind = _TYPE_TESTS.get(name)
    if kind is not None:
        return _type_test(kind)
    kind = _ASSERTIONS.get(name)
    if kind is not None:
        return _assertion(kind, implementation)
    if name == "parse_json" and infos[1] is None:
        return _parse_json(implementation)
    if name == "is_json" and infos[1] is None:
        return _is_json(implementation, "parse_json" in names)
    if name == "parse_regex":
        return _parse_regex(implementation, infos)
    return None


def _type_test(kind: type) -> Form:
    def test(run: BatchRun, sel: list[int], values: list[Values], wrap: Any, source: Any) -> Values:
        items = values[0]
        if type(items) is Uniform:
            return Uniform(type(items.value) is kind)
        kinds = run.types(items)
        if kind not in kinds:
            return FALSE
        if len(kinds) == 1:
            return TRUE
        return [type(item) is kind for item in items]

    return test


def _assertion(kind: type, implementation: Callable[..., Any]) -> Form:
    def assertion(run: BatchRun, sel: list[int], values: list[Values], wrap: Any, source: Any) -> Values:
        items = values[0]
        if type(items) is not Uniform and run.types(items) <= {kind}:
            return items
        return apply(implementation, sel, values, wrap, True, source)

    return assertion


def _parse_json(implementation: Callable[..., Any]) -> Form:
    def parse_json(run: BatchRun, sel: list[int], values: list[Values], wrap: Any, source: Any) -> Values:
        texts, lossy = values[0], values[2]
        if type(texts) is Uniform or type(lossy) is not Uniform:
            return apply(implementation, sel, values, wrap, True, source)
        kept = run.cache.get(_JSON_CACHE)
        if kept is not None:
            candidates, decoded, by_id = kept
            if len(candidates) == len(texts) and all(map(is_, candidates, texts)) and None not in decoded:
                if by_id is not None:  # some of its dicts were handed out already
                    return run.know(decoded, _DICT)
                del run.cache[_JSON_CACHE]  # handed out once, so the place that stores them may change them
                return run.give(run.know(decoded, _DICT))  # is_json decoded exactly these texts
            if by_id is None:
                by_id = {id(text): value for text, value in zip(candidates, decoded) if value is not None}
                run.cache[_JSON_CACHE] = (candidates, decoded, by_id)
        else:
            by_id = None
            try:
                return run.give(run.know(list(map(_flat_object, texts)), _DICT))
            except (msgspec.DecodeError, UnicodeError):
                pass
        lossy_value = lossy.value

        def parse(text: Any) -> Any:
            if by_id is not None:
                value = by_id.get(id(text))  # the cache holds the texts: an id is theirs
                if value is not None:
                    return value
            try:
                return _flat_object(text)
            except (msgspec.DecodeError, UnicodeError):
                return implementation(text, None, lossy_value)

        return apply(parse, sel, values[:1], wrap, True, source)

    return parse_json


def _is_json(implementation: Callable[..., Any], keep: bool) -> Form:
    def is_json(run: BatchRun, sel: list[int], values: list[Values], wrap: Any, source: Any) -> Values:
        texts = values[0]
        if type(texts) is Uniform:
            return apply(implementation, sel, values, wrap, True, source)
        results = list(map(str.startswith, texts, repeat("{")))
        candidates = list(compress(texts, results))
        try:
            decoded: list[Any] = list(map(_flat_object, candidates))
        except (msgspec.DecodeError, UnicodeError):
            decoded = [_flat_or_none(text) for text in candidates]
            for p, value in zip(compress(range(len(texts)), results), decoded):
                if value is None:
                    results[p] = implementation(texts[p], None)
        if keep:
            run.cache[_JSON_CACHE] = (candidates, decoded, None)
        if len(candidates) < len(texts):  # the others: no JSON unless their ends could be JSON's
            for p in [p for p in compress(range(len(texts)), map(not_, results)) if texts[p][-1:] in _LAST]:
                if texts[p][:1] in _FIRST:
                    results[p] = implementation(texts[p], None)
        return results

    return is_json


def _flat_or_none(text: str) -> Any:
    try:
        return _flat_object(text)
    except (msgspec.DecodeError, UnicodeError):
        return None


def _parse_regex(implementation: Callable[..., Any], infos: tuple[ArgInfo | None, ...]) -> Form | None:
    pattern, numeric = infos[1], infos[2]
    if pattern is None or not pattern.constant or (numeric is not None and (not numeric.constant or numeric.value)):
        return None
    regex = pattern.value
    search = getattr(regex, "_search", None)
    if search is None or not getattr(regex, "_named", False):
        return None
    missing = FunctionError("could not find any pattern matches")

    def parse_regex(run: BatchRun, sel: list[int], values: list[Values], wrap: Any, source: Any) -> Values:
        texts = values[0]
        if type(texts) is Uniform or not all(map(str.isascii, texts)):
            return apply(implementation, sel, values, wrap, True, source)
        found = list(map(search, texts))
        if all(found):
            return run.know(list(map(_groupdict, found)), _DICT)
        error = wrap(missing)
        errors = {i: error for i, match in zip(sel, found) if match is None}
        ok = [i for i, match in zip(sel, found) if match is not None]
        raise BatchErrors(errors, [match.groupdict() for match in found if match is not None], ok, source)

    return parse_regex
