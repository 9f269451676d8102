"""String functions: case, search, replace, slice, split, join, strip (whitespace, ANSI codes), truncate, match."""

from __future__ import annotations

from typing import Any

from ..function import ArgumentError, FunctionError, TypeDef
from ..value import Kind
from .declare import ARR, BOOL, RE, Args, B, I, always, function, opt, req
from .display import value_kind
from .regex import Regex, matches

# Rust's char::is_whitespace (the White_Space property), what str::trim removes
WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def downcase(value: str) -> str:
    return value.lower()


def upcase(value: str) -> str:
    return value.upper()


def contains(value: str, substring: str, case_sensitive: bool | None) -> bool:
    if case_sensitive is False:
        return substring.lower() in value.lower()
    return substring in value


def ends_with(value: str, substring: str, case_sensitive: bool | None) -> bool:
    if case_sensitive is False:
        return value.lower().endswith(substring.lower())
    return value.endswith(substring)


def starts_with(value: str, substring: str, case_sensitive: bool | None) -> bool:
    if case_sensitive is not False:
        return value.startswith(substring)
    if len(value.encode()) < len(substring.encode()):
        return False
    # VRL compares character by character, each lowercased
    return all(a.lower() == b.lower() or all(x == y for x, y in zip(a.lower(), b.lower())) for a, b in zip(substring, value))


def contains_all(value: str, substrings: list[Any], case_sensitive: bool | None) -> bool:
    if any(type(item) is not str for item in substrings):
        bad = next(item for item in substrings if type(item) is not str)
        raise FunctionError(f"expected string, got {value_kind(bad)}")
    if case_sensitive is False:
        value = value.lower()
        return all(item.lower() in value for item in substrings)
    return all(item in value for item in substrings)


def replace(value: str, pattern: Any, with_: str, count: int | None) -> str:
    count = -1 if count is None else count
    if type(pattern) is str:
        if count == 0:
            return value
        return value.replace(pattern, with_, count if count > 0 else -1) if pattern else _replace_empty(value, with_, count)
    return pattern.replace(value, with_, count)


def _replace_empty(value: str, with_: str, count: int) -> str:
    # Rust's str::replace("") puts the replacement between every character and at both ends
    places = len(value) + 1 if count < 0 else min(count, len(value) + 1)
    return "".join(with_ + char for char in value[: places]) + (with_ if places > len(value) else "") + value[places:]


def split(value: str, pattern: Any, limit: int | None) -> list[str]:
    limit = 999_999_999 if limit is None else max(limit, 0)
    if type(pattern) is not str:
        return pattern.split(value, limit)
    if limit == 0:
        return []
    if pattern == "":
        pieces = ["", *value, ""]
        return pieces if limit >= len(pieces) else [*pieces[: limit - 1], value[limit - 2 :]] if limit > 1 else [value]
    return value.split(pattern, limit - 1)


def find(value: str, pattern: Any, start: int | None) -> int | None:
    """The byte offset of the first match at or after byte ``start`` (VRL's find; null when none)."""
    data = value.encode("utf-8", "surrogatepass")
    start = 0 if start is None else start
    if start < 0 or start > len(data):  # VRL casts a negative start to a huge unsigned one
        return None
    if type(pattern) is str:
        found = data.find(pattern.encode("utf-8", "surrogatepass"), start)
        return None if found < 0 else found
    while start < len(data) and 0x80 <= data[start] < 0xC0:  # a regex match starts on a character
        start += 1
    found = pattern._match(data, start, len(data))[0][0]
    return None if found < 0 else found


def join(value: list[Any], separator: str | None) -> str:
    for item in value:
        if type(item) is not str:
            raise FunctionError("all array items must be strings")
    return ("" if separator is None else separator).join(value)


def slice_(value: Any, start: int, end: int | None) -> Any:
    if type(value) is str:
        data = value.encode("utf-8", "surrogatepass") if not value.isascii() else None
        length = len(value) if data is None else len(data)
        first, last = _slice_range(length, start, end)
        if data is None:
            return value[first:last]
        return data[first:last].decode("utf-8", "replace")
    first, last = _slice_range(len(value), start, end)
    return value[first:last]


def _slice_range(length: int, start: int, end: int | None) -> tuple[int, int]:
    if start < 0:
        start += length
    end = length if end is None else end + length if end < 0 else end
    if start < 0 or start > length:
        raise FunctionError(f'"start" must be between "{-length}" and "{length}"')
    if end < start:
        raise FunctionError('"end" must be greater or equal to "start"')
    return start, min(end, length)


def _slice_type(args: Args) -> TypeDef:
    kinds = args[0].kinds if args[0] is not None else Kind.BYTES | Kind.ARRAY
    if kinds != Kind.BYTES and kinds != Kind.ARRAY:
        kinds = Kind.BYTES | Kind.ARRAY
    return TypeDef(kinds, True)


def strip_whitespace(value: str) -> str:
    return value.strip(WHITESPACE)



# The states of the VT500 parser (Paul Williams' table, as the vte crate runs it) that matter for what is kept
_GROUND, _ESCAPE, _ESCAPE_INTERMEDIATE, _CSI, _OSC, _STRING, _DCS, _DCS_DATA = range(8)
_ESCAPE_TO = {"[": _CSI, "]": _OSC, "P": _DCS, "X": _STRING, "^": _STRING, "_": _STRING}


def strip_ansi_escape_codes(value: str) -> str:
    """VRL's (the strip-ansi-escapes crate): drop escape sequences and every control character but newline.

    The text goes through a terminal parser; printable characters of the
    ground state are kept, and a newline wherever the parser executes one.
    Non-ASCII characters inside a sequence are ignored; C1 controls (U+0080
    to U+009F) are never sequence introducers (the parser reads UTF-8), but
    the byte 0x9C ends a DCS's data, even inside a character's encoding.
    """
    if "\x1b" not in value and value.isprintable():
        return value
    out: list[str] = []
    state = _GROUND
    for char in value:
        code = ord(char)
        if code == 0x1B:
            state = _ESCAPE
        elif code in (0x18, 0x1A):
            state = _GROUND
        elif state == _GROUND:
            if code == 0x0A or 0x20 <= code <= 0x7F or code > 0x9F:
                out.append(char)
        elif state in (_OSC, _STRING):
            if code == 0x07 and state == _OSC:
                state = _GROUND
        elif state == _DCS_DATA:
            # the parser reads bytes: a 0x9C byte (ST) of any character's UTF-8 ends the data
            if code > 0x7F and 0x9C in char.encode():
                state = _GROUND
        elif code < 0x20:  # executed (a DCS's header ignores them)
            if code == 0x0A and state != _DCS:
                out.append(char)
        elif code >= 0x7F:
            continue
        elif state == _ESCAPE:
            state = _ESCAPE_INTERMEDIATE if code < 0x30 else _ESCAPE_TO.get(char, _GROUND)
        elif state == _ESCAPE_INTERMEDIATE:
            if code >= 0x30:
                state = _GROUND
        elif code >= 0x40:  # the final byte of a control sequence, or of a DCS's header
            state = _GROUND if state == _CSI else _DCS_DATA
    return "".join(out)

def truncate(value: str, limit: int, suffix: str | None) -> str:
    limit = max(limit, 0)
    if len(value) <= limit:
        return value
    return value[:limit] + (suffix or "")


def strlen(value: str) -> int:
    return len(value)


def match_any(value: str, patterns: list[Regex]) -> bool:
    return any(pattern.is_match(value) for pattern in patterns)


def _check_regex_array(keyword: str) -> Any:
    def check(args: Args) -> None:
        arg = args[1]
        if arg is None or not arg.constant:
            raise ArgumentError(f'expected static expression for argument "{keyword}"')
        for item in arg.value:
            if not getattr(item, "is_vrl_regex", False):
                raise ArgumentError(f"expected regex, got {value_kind(item)}")

    return check


def _contains_all_type(args: Args) -> TypeDef:
    substrings = args[1]
    sure = substrings is not None and substrings.constant and all(type(item) is str for item in substrings.value)
    return TypeDef(BOOL, not sure)


_CASE = opt("case_sensitive", BOOL)
_SPLIT_RESULT = TypeDef(ARR, False, element=B)  # VRL: an array of strings


def _split_type(args: Args) -> TypeDef:
    return _SPLIT_RESULT

FUNCTIONS = [
    function("downcase", (req("value", B),), always(B), downcase),
    function("upcase", (req("value", B),), always(B), upcase),
    function("contains", (req("value", B), req("substring", B), _CASE), always(BOOL), contains),
    function("starts_with", (req("value", B), req("substring", B), _CASE), always(BOOL), starts_with),
    function("ends_with", (req("value", B), req("substring", B), _CASE), always(BOOL), ends_with),
    function("contains_all", (req("value", B), req("substrings", ARR), _CASE), _contains_all_type, contains_all),
    function("replace", (req("value", B), req("pattern", B | RE), req("with", B), opt("count", I)), always(B), replace),
    function("split", (req("value", B), req("pattern", B | RE), opt("limit", I)), _split_type, split),
    function("find", (req("value", B), req("pattern", B | RE), opt("from", I)), always(I), find),
    function("join", (req("value", ARR), opt("separator", B)), always(B, True), join),
    function("slice", (req("value", B | ARR), req("start", I), opt("end", I)), _slice_type, slice_),
    function("strip_whitespace", (req("value", B),), always(B), strip_whitespace),
    function("strip_ansi_escape_codes", (req("value", B),), always(B), strip_ansi_escape_codes),
    function("truncate", (req("value", B), req("limit", I), opt("suffix", B)), always(B), truncate),
    function("strlen", (req("value", B),), always(I), strlen),
    function("match", (req("value", B), req("pattern", RE)), always(BOOL), matches),
    function("match_any", (req("value", B), req("patterns", ARR)), always(BOOL), match_any, check=_check_regex_array("patterns")),
]
