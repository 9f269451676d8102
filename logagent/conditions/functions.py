"""The VRL functions a condition may call.

Each function checks its argument types at run time (a path can hold any
type) and raises ConditionRuntimeError like VRL's "function call error".
Both ``f(...)`` and ``f!(...)`` are accepted: either way an error makes the
whole condition false.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import ConditionRuntimeError, ConditionSyntaxError
from .paths import Evaluator, make_exists
from .syntax import Call, Literal, Node, Path, RegexLiteral
from .values import kind_name, strict_equal

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DECIMAL = re.compile(r"[+-]?[0-9]+")


class CompileContext(Protocol):
    def compile(self, node: Node) -> Evaluator: ...
    def error(self, offset: int, reason: str) -> ConditionSyntaxError: ...
    def add_path(self, segments: tuple[str | int, ...]) -> None: ...


Builder = Callable[[CompileContext, Call, list[Node | None]], Evaluator]


@dataclass(frozen=True, slots=True)
class Function:
    params: tuple[str, ...]
    required: int
    build: Builder


def _type_error(function: str, expected: str, value: Any) -> ConditionRuntimeError:
    return ConditionRuntimeError(f'function call error for "{function}": expected {expected}, got {kind_name(value)}')


# -- starts_with / ends_with / contains ----------------------------------------


def _substring_test(name: str, test: Callable[[str, str], bool]) -> Builder:
    def build(ctx: CompileContext, call: Call, args: list[Node | None]) -> Evaluator:
        value_node, substring_node, case_node = args
        value = ctx.compile(value_node)  # type: ignore[arg-type]
        case_sensitive: Evaluator | None = None
        fold = False
        if case_node is not None:
            if isinstance(case_node, Literal):
                if type(case_node.value) is not bool:
                    raise ctx.error(case_node.offset, f"{name}(): case_sensitive must be true or false")
                fold = not case_node.value
            else:
                case_sensitive = ctx.compile(case_node)

        if isinstance(substring_node, Literal) and case_sensitive is None:
            if type(substring_node.value) is not str:
                raise ctx.error(substring_node.offset, f"{name}(): substring must be a string")
            return _literal_substring_test(name, test, value, substring_node.value, fold)

        substring_of = ctx.compile(substring_node)  # type: ignore[arg-type]

        def test_dynamic(record: Any) -> bool:
            text = value(record)
            sub = substring_of(record)
            if type(text) is not str:
                raise _type_error(name, "string", text)
            if type(sub) is not str:
                raise _type_error(name, "string", sub)
            folding = fold
            if case_sensitive is not None:
                flag = case_sensitive(record)
                if type(flag) is not bool:
                    raise _type_error(name, "boolean", flag)
                folding = not flag
            if folding:
                return test(text.lower(), sub.lower())
            return test(text, sub)

        return test_dynamic

    return build


def _literal_substring_test(
    name: str, test: Callable[[str, str], bool], value: Evaluator, substring: str, fold: bool
) -> Evaluator:
    """The common case: a literal substring and a literal (or no) case_sensitive."""
    if fold:
        folded = substring.lower()

        def test_folded_literal(record: Any) -> bool:
            text = value(record)
            if type(text) is not str:
                raise _type_error(name, "string", text)
            return test(text.lower(), folded)

        return test_folded_literal

    def test_literal(record: Any) -> bool:
        text = value(record)
        if type(text) is not str:
            raise _type_error(name, "string", text)
        return test(text, substring)

    return test_literal


# -- one-argument functions ----------------------------------------------------


def _unary(transform: Callable[[Any], Any]) -> Builder:
    def build(ctx: CompileContext, call: Call, args: list[Node | None]) -> Evaluator:
        value = ctx.compile(args[0])  # type: ignore[arg-type]
        return lambda record: transform(value(record))

    return build


def _string(value: Any) -> str:
    if type(value) is str:
        return value
    raise _type_error("string", "string", value)


def _to_int(value: Any) -> int:
    kind = type(value)
    if kind is int:
        return value
    if kind is str:
        if _DECIMAL.fullmatch(value) is None:
            raise ConditionRuntimeError(f'function call error for "to_int": invalid integer {value!r}')
        number = int(value)
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise ConditionRuntimeError(f'function call error for "to_int": {value!r} does not fit in 64 bits')
        return number
    if kind is float:
        if value != value:
            return 0
        if value >= 9.223372036854775807e18:  # float-to-int conversion saturates, as in Rust
            return _INT64_MAX
        if value <= -9.223372036854775808e18:
            return _INT64_MIN
        return int(value)
    if kind is bool:
        return 1 if value else 0
    if value is None:
        return 0
    raise ConditionRuntimeError(f'function call error for "to_int": unable to coerce {kind_name(value)} into integer')


def _length(value: Any) -> int:
    if type(value) is str:
        # VRL strings are bytes: length counts UTF-8 bytes
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, (list, tuple, dict)):
        return len(value)
    raise _type_error("length", "string, array or object", value)


def _downcase(value: Any) -> str:
    if type(value) is str:
        return value.lower()
    raise _type_error("downcase", "string", value)


def _upcase(value: Any) -> str:
    if type(value) is str:
        return value.upper()
    raise _type_error("upcase", "string", value)


def _type_test(*kinds: type) -> Builder:
    def test(value: Any) -> bool:
        return type(value) in kinds

    return _unary(test)


# -- functions taking special arguments ----------------------------------------


def _build_exists(ctx: CompileContext, call: Call, args: list[Node | None]) -> Evaluator:
    path = args[0]
    if not isinstance(path, Path):
        offset = path.offset if path is not None else call.offset
        raise ctx.error(offset, "exists() takes a field path, e.g. exists(.kubernetes.pod_labels.app)")
    ctx.add_path(path.segments)
    return make_exists(path.segments)


def _build_match(ctx: CompileContext, call: Call, args: list[Node | None]) -> Evaluator:
    value_node, pattern_node = args
    if not isinstance(pattern_node, RegexLiteral):
        offset = pattern_node.offset if pattern_node is not None else call.offset
        raise ctx.error(offset, "match() takes a regex literal as its pattern, e.g. r'^error'")
    value = ctx.compile(value_node)  # type: ignore[arg-type]
    search = pattern_node.pattern.search

    def match(record: Any) -> bool:
        text = value(record)
        if type(text) is not str:
            raise _type_error("match", "string", text)
        return search(text)

    return match


def _build_includes(ctx: CompileContext, call: Call, args: list[Node | None]) -> Evaluator:
    array = ctx.compile(args[0])  # type: ignore[arg-type]
    item = ctx.compile(args[1])  # type: ignore[arg-type]

    def includes(record: Any) -> bool:
        values = array(record)
        wanted = item(record)
        if not isinstance(values, (list, tuple)):
            raise _type_error("includes", "array", values)
        return any(strict_equal(candidate, wanted) for candidate in values)

    return includes


def _build_is_null(ctx: CompileContext, call: Call, args: list[Node | None]) -> Evaluator:
    value = ctx.compile(args[0])  # type: ignore[arg-type]
    return lambda record: value(record) is None


_SUBSTRING_PARAMS = ("value", "substring", "case_sensitive")

FUNCTIONS: dict[str, Function] = {
    "starts_with": Function(_SUBSTRING_PARAMS, 2, _substring_test("starts_with", str.startswith)),
    "ends_with": Function(_SUBSTRING_PARAMS, 2, _substring_test("ends_with", str.endswith)),
    "contains": Function(_SUBSTRING_PARAMS, 2, _substring_test("contains", str.__contains__)),
    "match": Function(("value", "pattern"), 2, _build_match),
    "exists": Function(("field",), 1, _build_exists),
    "is_null": Function(("value",), 1, _build_is_null),
    "includes": Function(("value", "item"), 2, _build_includes),
    "string": Function(("value",), 1, _unary(_string)),
    "to_int": Function(("value",), 1, _unary(_to_int)),
    "length": Function(("value",), 1, _unary(_length)),
    "downcase": Function(("value",), 1, _unary(_downcase)),
    "upcase": Function(("value",), 1, _unary(_upcase)),
    "is_string": Function(("value",), 1, _type_test(str)),
    "is_integer": Function(("value",), 1, _type_test(int)),
    "is_float": Function(("value",), 1, _type_test(float)),
    "is_boolean": Function(("value",), 1, _type_test(bool)),
    "is_array": Function(("value",), 1, _type_test(list, tuple)),
    "is_object": Function(("value",), 1, _type_test(dict)),
}
