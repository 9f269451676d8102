"""User regexes on Google's RE2, with the meaning of Rust's ``regex`` crate.

``compile_regex`` is the one way the agent compiles a regex from a config
(VRL regex values; multiline ``start_pattern`` and ``condition_pattern``). RE2 matches
in time linear in the text, whatever the pattern, so no pattern can hang the
agent, and its syntax is that of Rust's crate (which VRL uses): no look-around,
no backreferences, ``$`` is the end of the text unless ``(?m)``, ``\\z``,
``(?<name>...)``, ``[[:alpha:]]``, ``\\pL``, scoped ``(?flags)`` anywhere.

Where the two still differ, the pattern is rewritten before RE2 sees it, or
rejected with the position of the construct:

- ``\\d \\s \\w`` (and ``\\D \\S \\W``) are Unicode classes in Rust, ASCII in
  RE2: written out as Unicode classes. ``\\W`` and ``\\S`` inside ``[...]`` are
  rejected (RE2 cannot put a negated class inside a class).
- ``\\uHHHH``, ``\\UHHHHHHHH``, ``\\u{H..}`` become ``\\x{H..}``; ``a{ 2 , 3 }``
  loses its spaces; the flag ``u`` (on by default in Rust) is dropped.
- Rejected because RE2 would read them differently or Rust has no such thing:
  a ``{`` that starts no repetition, ``\\Q..\\E``, ``\\C``, ``\\0``-``\\9``,
  nested classes and class set operations (``&&`` ``--`` ``~~``), ``\\<``
  ``\\>`` ``\\b{...}``, possessive quantifiers, the flags ``x``, ``R``, ``-u``.
- Known difference, not rewritten: ``\\b`` and ``\\B`` take only ASCII letters,
  digits and ``_`` as word characters (Rust: Unicode ones).

Everything else RE2 rejects (e.g. ``\\p{Alphabetic}``) is reported with RE2's
reason at the position of the fragment RE2 names.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .re2_binding import NativeRegex, Options

# Rust's Unicode \w: Alphabetic, marks, decimal digits, connector punctuation,
# join controls. RE2 has no Alphabetic property: letters, letter numbers, and
# the symbols that Other_Alphabetic adds (circled/squared Latin letters).
_WORD = (
    "\\p{L}\\p{M}\\p{Nd}\\p{Nl}\\p{Pc}\\x{200C}\\x{200D}"
    "\\x{24B6}-\\x{24E9}\\x{1F130}-\\x{1F149}\\x{1F150}-\\x{1F169}\\x{1F170}-\\x{1F189}"
)
# Rust's Unicode \s: the White_Space property
_SPACE = "\\t-\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
_PERL_CLASSES = {
    "d": ("\\p{Nd}", "\\p{Nd}"),
    "D": ("\\P{Nd}", "\\P{Nd}"),
    "w": (f"[{_WORD}]", _WORD),
    "W": (f"[^{_WORD}]", None),
    "s": (f"[{_SPACE}]", _SPACE),
    "S": (f"[^{_SPACE}]", None),
}
_HEX_ESCAPE = re.compile(r"u\{([0-9A-Fa-f]{1,8})\}|U\{([0-9A-Fa-f]{1,8})\}|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})")
_REPETITION = re.compile(r"\{\s*([0-9]+)\s*(?:(,)\s*([0-9]*)\s*)?\}")
_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_UNSUPPORTED_GROUPS = ("(?=", "(?!", "(?<=", "(?<!", "(?#", "(?>", "(?(", "(?|")
_CASE_FLAG = re.compile(r"\(\?[a-zA-Z]*-?[a-zA-Z]*i")
# escapes that stand for a class or an assertion, never for text the run could contain
_CLASS_ESCAPES = frozenset("dDwWsSbBAzntrfva")
_RE2_REASONS = {"missing )": "unclosed group", "unexpected )": "unopened group", "missing ]": "unclosed character class"}

#: (the binding module, options for yes/no searches) once the first pattern is
#: compiled: a config without regexes never loads the RE2 library (a few MB of
#: resident memory)
_RE2: tuple[Any, Any] | None = None


def _native() -> tuple[Any, Any]:
    global _RE2
    if _RE2 is None:
        from . import re2_binding

        options = re2_binding.Options()
        options.log_errors = False  # RE2 would print parse errors to stderr, outside the agent's logs
        options.never_capture = True  # a yes/no answer needs no groups
        _RE2 = (re2_binding, options)
    return _RE2


class RegexError(ValueError):
    """A pattern that cannot be compiled: ``reason`` at ``index`` in the pattern."""

    def __init__(self, reason: str, index: int) -> None:
        self.reason = reason
        self.index = index
        super().__init__(f"{reason} (at character {index + 1})")


class Pattern:
    """A compiled user regex; ``search(text) -> bool`` tells whether it matches anywhere in ``text``.

    A call into RE2 costs about 0.4 µs whatever the pattern, several times what
    Python's ``re`` needs for a short line; so when every match must contain a
    literal (``status=5`` in ``status=5\\d\\d``), a line without it is answered
    by ``in`` without calling RE2 (``required``, see :func:`required_literal`).
    """

    __slots__ = ("pattern", "required", "search")

    def __init__(self, pattern: str, compiled: NativeRegex) -> None:
        #: the pattern as the user wrote it
        self.pattern = pattern
        self.required = required_literal(pattern)
        match, required = compiled.Match, self.required or ""
        unanchored = _native()[0].UNANCHORED

        def search(text: str) -> bool:
            if required not in text:
                return False
            data = text.encode("utf-8", "surrogatepass")
            return match(unanchored, data, 0, len(data))[0][0] >= 0

        self.search = search

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"


def compile_regex(pattern: str) -> Pattern:
    """Compile a Rust-syntax regex with RE2; :class:`RegexError` names what is wrong and where."""
    return Pattern(pattern, compile_rust_pattern(pattern, _native()[1]))


def compile_rust_pattern(pattern: str, options: Options) -> NativeRegex:
    """A Rust-syntax regex rewritten for RE2 and compiled with ``options`` (the binding's object)."""
    rewritten = _Rewriter(pattern)
    text = rewritten.run()
    compiled = _native()[0].compile_native(text, options)
    if not compiled.ok():
        raise rewritten.re2_error(compiled.error().decode("utf-8", "replace"), text)
    return compiled


def required_literal(pattern: str) -> str | None:
    """The longest text every match of a valid ``pattern`` contains, or None (conservative).

    Only the top level counts, as a sequence of literal characters: an
    alternation, a case-insensitive flag or an escape that is not a plain
    class or punctuation gives up; groups, classes, ``.``, anchors and
    repetitions end a run (``?``, ``*`` and ``{0,..}`` also take the character
    before them out of it).
    """
    if "|" in pattern or _CASE_FLAG.search(pattern):
        return None
    best, run, depth, i, n = "", "", 0, 0, len(pattern)
    while i < n:
        c, atom = pattern[i], None
        if c == "\\":
            escaped = pattern[i + 1 : i + 2]
            if escaped.isascii() and not escaped.isalnum():
                atom = escaped
            elif escaped not in _CLASS_ESCAPES:
                return None
            i += 2
        elif c == "[":
            i = _class_end(pattern, i)
        elif c in "*?{":
            repetition = _REPETITION.match(pattern, i) if c == "{" else None
            if repetition is None or int(repetition.group(1)) == 0:
                run = run[:-1]  # the character before may be absent
            i = repetition.end() if repetition is not None else i + 1
        else:
            depth += (c == "(") - (c == ")")
            atom = None if c in "()+.^$" else c
            i += 1
        if atom is not None and depth == 0:
            run += atom
            continue
        best, run = max(best, run, key=len), ""
    best = max(best, run, key=len)
    return best if len(best) >= 2 else None


def _class_end(pattern: str, i: int) -> int:
    """The index after the class that starts at ``pattern[i]`` (valid: the rewriter checked it)."""
    j = i + 1
    j += pattern.startswith("^", j)
    j += pattern.startswith("]", j)
    while pattern[j] != "]":
        if pattern[j] == "\\":
            j += 2
        elif pattern.startswith("[:", j):
            j = pattern.index(":]", j) + 2
        else:
            j += 1
    return j + 1


class _Rewriter:
    """One left-to-right pass that rewrites or rejects what RE2 reads unlike Rust."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.out: list[str] = []
        #: where each piece of ``out`` starts, in the output and in the pattern
        self.out_starts: list[int] = []
        self.origins: list[int] = []
        self.out_len = 0

    def emit(self, text: str, origin: int) -> None:
        self.out.append(text)
        self.out_starts.append(self.out_len)
        self.origins.append(origin)
        self.out_len += len(text)

    def origin_of(self, out_index: int) -> int:
        """The pattern index that produced ``out_index`` of the rewritten text."""
        piece = bisect.bisect_right(self.out_starts, out_index) - 1
        return self.origins[piece] if piece >= 0 else 0

    def run(self) -> str:
        pattern, n = self.pattern, len(self.pattern)
        i = 0
        while i < n:
            c = pattern[i]
            if c == "\\":
                i = self.escape(i, in_class=False)
            elif c == "[":
                i = self.char_class(i)
            elif c == "(":
                i = self.group(i)
            elif c == "{":
                i = self.repetition(i)
            else:
                self.emit(c, i)
                i += 1
            if c in "*+?{" and pattern.startswith("+", i):
                raise RegexError("possessive quantifiers are not supported", i)
        return "".join(self.out)

    def escape(self, i: int, in_class: bool) -> int:
        """Rewrite the escape sequence starting at ``pattern[i]`` (a backslash)."""
        pattern = self.pattern
        c = pattern[i + 1 : i + 2]
        if c in _PERL_CLASSES:
            outside, inside = _PERL_CLASSES[c]
            if in_class and inside is None:
                raise RegexError(f"\\{c} is not supported inside [...]; write a negated class [^...] instead", i)
            self.emit(inside if in_class else outside, i)
            return i + 2
        hex_escape = _HEX_ESCAPE.match(pattern, i + 1) if c in ("u", "U") else None
        if hex_escape:
            self.emit(f"\\x{{{next(g for g in hex_escape.groups() if g)}}}", i)
            return hex_escape.end()
        if c in ("<", ">") or (c == "b" and pattern.startswith("{", i + 2)):
            raise RegexError(f"word boundary assertion \\{c}{'{...}' if c == 'b' else ''} is not supported; use \\b", i)
        if c.isdigit():
            raise RegexError(f"unsupported escape \\{c} (backreferences and octal escapes do not exist in VRL)", i)
        if c in ("Q", "E", "C"):
            raise RegexError(f"unsupported escape \\{c}", i)
        end = i + 2
        if c in ("x", "p", "P") and pattern.startswith("{", end):  # \x{HHHH}, \p{Greek}: RE2 checks the inside
            close = pattern.find("}", end)
            end = len(pattern) if close == -1 else close + 1
        self.emit(pattern[i:end], i)
        return end

    def char_class(self, i: int) -> int:
        """Rewrite the bracketed class starting at ``pattern[i]`` ('[')."""
        pattern, n = self.pattern, len(self.pattern)
        j = i + 1
        j += pattern.startswith("^", j)
        j += pattern.startswith("]", j)  # a leading ']' is a literal
        self.emit(pattern[i:j], i)
        while j < n:
            c = pattern[j]
            if c == "]":
                self.emit("]", j)
                return j + 1
            if c == "\\":
                j = self.escape(j, in_class=True)
            elif c == "[":
                end = pattern.find(":]", j + 2) if pattern.startswith("[:", j) else -1
                if end == -1:
                    raise RegexError("nested character classes are not supported; write \\[ for a literal '['", j)
                self.emit(pattern[j : end + 2], j)  # [:alpha:] and [:^alpha:] mean the same in RE2
                j = end + 2
            elif pattern.startswith(("&&", "--", "~~"), j):
                raise RegexError(f"character class set operation {pattern[j:j + 2]!r} is not supported", j)
            else:
                self.emit(c, j)
                j += 1
        return j  # unclosed: RE2 reports it

    def group(self, i: int) -> int:
        """Pass a group opener on, with its flags made RE2's; reject what RE2 lacks."""
        pattern = self.pattern
        if pattern.startswith(_UNSUPPORTED_GROUPS, i):
            raise RegexError(
                "unsupported group (look-around, atomic groups, comments and conditionals do not exist in VRL)", i
            )
        flags = _FLAGS.match(pattern, i)
        if flags is None:  # '(', '(?:' is matched above, named groups go to RE2 as they are
            self.emit("(", i)
            return i + 1
        enabled, disabled, end = flags.group(1), flags.group(2), flags.group(3)
        for flag in enabled + (disabled or ""):
            if flag == "x":
                raise RegexError("unsupported flag 'x' (verbose mode); remove the spaces and comments instead", i)
            if flag == "R":
                raise RegexError("unsupported flag 'R' (CRLF mode); write \\r?$ instead", i)
        if disabled is not None and "u" in disabled:
            raise RegexError("unsupported flag '-u' (ASCII-only mode)", i)
        enabled = enabled.replace("u", "")
        text = enabled + (f"-{disabled}" if disabled is not None else "")
        if text or end == ":":
            self.emit(f"(?{text}{end}", i)
        return flags.end()

    def repetition(self, i: int) -> int:
        """``{n}``, ``{n,}``, ``{n,m}`` (Rust allows spaces inside); any other ``{`` is an error in Rust."""
        found = _REPETITION.match(self.pattern, i)
        if found is None:
            raise RegexError("a literal '{' must be escaped as \\{ (or start a repetition {n}, {n,} or {n,m})", i)
        low, comma, high = found.groups()
        self.emit(f"{{{low}{comma or ''}{high or ''}}}", i)
        return found.end()

    def re2_error(self, message: str, rewritten: str) -> RegexError:
        """RE2's 'reason: fragment' as a RegexError at the fragment's place in the pattern."""
        reason, _, fragment = message.partition(": ")
        if reason == "missing )":
            return RegexError(_RE2_REASONS[reason], len(self.pattern))
        found = rewritten.find(fragment) if fragment else -1
        if found == -1:
            return RegexError(message, 0)
        if reason == "unexpected )":
            found += len(fragment) - 1
        return RegexError(_RE2_REASONS.get(reason, reason), self.origin_of(found))
