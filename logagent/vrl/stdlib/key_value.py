"""``parse_key_value`` / ``parse_logfmt`` (a family of their own): VRL's grammar (its nom parser) as plain index-walking functions.

Each ``_p_*`` function takes the text and a start index and returns
``(end, result)`` or None where the nom parser would fail; the order of the
alternatives and the backtracking are VRL's.
"""

from __future__ import annotations

from typing import Any

from ..function import ArgumentError, FunctionError
from .declare import ANY, BOOL, OBJ, Args, B, always, function, opt, req
from .strings import WHITESPACE

Parsed = tuple[int, Any] | None


def _space0(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t":
        i += 1
    return i


def _field_delimiter(s: str, i: int, fd: str) -> int | None:
    if fd == " ":
        j = i
        while s.startswith(" ", j):
            j += 1
        return j if j > i else None
    while s.startswith(" ", i):
        i += 1
    return i + len(fd) if s.startswith(fd, i) else None


def _unescape(inner: str) -> str:
    if "\\" not in inner:
        return inner
    out, i = [], 0
    while i < len(inner):
        c = inner[i]
        if c == "\\" and i + 1 < len(inner) and inner[i + 1] in 'n\\"':
            out.append({"n": "\n", "\\": "\\", '"': '"'}[inner[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _delimited(s: str, i: int, quote: str, terminator: str) -> Parsed:
    if not s.startswith(quote, i):
        return None
    j = i + 1
    while j < len(s) and s[j] != quote:
        if s[j] == "\\":
            if j + 1 >= len(s):
                j = i + 1  # nom's `escaped` fails, `opt` gives an empty inner part
                break
            j += 2
        else:
            j += 1
    if j >= len(s) or s[j] != quote:
        return None
    inner, end = _unescape(s[i + 1 : j]), j + 1
    if _field_delimiter(s, end, terminator) is None and _space0(s, end) != len(s):
        return None
    return end, inner


def _undelimited(s: str, i: int, delimiter: str) -> Parsed:
    found = s.find(delimiter, i)
    end = len(s) if found == -1 else found
    return end, s[i:end].strip(WHITESPACE)


def _key(s: str, i: int, kvd: str, fd: str, standalone: bool) -> Parsed:
    if standalone:
        found = _delimited(s, i, "'", kvd) or _delimited(s, i, "'", fd) or _delimited(s, i, '"', kvd) or _delimited(s, i, '"', fd)
        if found is None:
            found = _undelimited(s, i, kvd)
            if not found[1] or fd in found[1]:
                found = _undelimited(s, i, fd)
    else:
        found = _delimited(s, i, "'", kvd) or _delimited(s, i, '"', kvd) or _undelimited(s, i, kvd)
    return found if found[1] else None


def _value(s: str, i: int, fd: str) -> Parsed:
    return _delimited(s, i, "'", fd) or _delimited(s, i, '"', fd) or _undelimited(s, i, fd)


def _pair(s: str, i: int, kvd: str, fd: str, lenient: bool, standalone: bool) -> Parsed:
    key = _key(s, _space0(s, i), kvd, fd, standalone)
    if key is None:
        return None
    i, name = key
    j = _space0(s, i) if lenient else i
    separated = s.startswith(kvd, j) and bool(kvd)
    if separated:
        i = j + len(kvd)
        if lenient:
            i = _space0(s, i)
    elif not standalone:
        return None
    end, value = _value(s, i, fd)
    return end, (name, value if separated else True)


def parse_pairs(s: str, kvd: str, fd: str, lenient: bool, standalone: bool) -> list[tuple[str, Any]]:
    first = _pair(s, 0, kvd, fd, lenient, standalone)
    if first is None:
        raise FunctionError("0: at line 1, in Tag:\n" + s + "\n^\n\n")
    i, pair = first
    pairs = [pair]
    while True:
        after = _field_delimiter(s, i, fd)
        if after is None:
            break
        found = _pair(s, after, kvd, fd, lenient, standalone)
        if found is None or found[0] == i:
            break
        i, pair = found
        pairs.append(pair)
    if s[i:].strip(WHITESPACE):
        raise FunctionError("could not parse whole line successfully")
    return pairs


def parse_key_value(
    value: str, key_value_delimiter: Any, field_delimiter: Any, whitespace: str | None, accept_standalone_key: bool | None
) -> dict[str, Any]:
    kvd = "=" if key_value_delimiter is None else key_value_delimiter
    fd = " " if field_delimiter is None else field_delimiter
    for delimiter in (kvd, fd):
        if type(delimiter) is not str:
            from .display import value_kind

            raise FunctionError(f"expected string, got {value_kind(delimiter)}")
    pairs = parse_pairs(value, kvd, fd, whitespace != "strict", accept_standalone_key is not False)
    result: dict[str, Any] = {}
    for key, item in pairs:
        if key not in result:
            result[key] = item
        elif item is True:
            continue
        elif result[key] is True:
            result[key] = item
        elif type(result[key]) is list:
            result[key] = [*result[key], item]
        else:
            result[key] = [result[key], item]
    return result


def parse_logfmt(value: str) -> dict[str, Any]:
    return parse_key_value(value, "=", " ", "lenient", True)


def _check_whitespace(args: Args) -> None:
    arg = args[3]
    if arg is not None and (not arg.constant or arg.value not in ("strict", "lenient")):
        raise ArgumentError('invalid enum variant for argument "whitespace"; expected one of: "strict", "lenient"')


FUNCTIONS = [
    function(
        "parse_key_value",
        (req("value", B), opt("key_value_delimiter", ANY), opt("field_delimiter", ANY), opt("whitespace", B), opt("accept_standalone_key", BOOL)),
        always(OBJ, True),
        parse_key_value,
        check=_check_whitespace,
    ),
    function("parse_logfmt", (req("value", B),), always(OBJ, True), parse_logfmt),
]
