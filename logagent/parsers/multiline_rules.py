"""Built-in stack trace detectors: Java, Python, Go, Ruby, Node.js and .NET.

Each language is a small table: the rules that start a trace, and for each
named state the rules a following line may match (``(regex, next state)``,
``TENTATIVE`` for blank lines that only belong to the trace if it goes on).
The formats are those the runtimes print for an uncaught exception and their
usual logging libraries print for a caught one (``printStackTrace``,
``traceback``, ``runtime`` panics, ``Exception#full_message``, V8 stacks,
``Exception.ToString()``).

``language_machine(["java", "python"])`` joins the tables into one
:class:`Machine`; ``auto`` is every language at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from logagent.parsers.multiline_machine import DONE, Machine, Rule, Search, compile_builtin

TENTATIVE = "tentative"
END = "<done>"

_BLANK = r"^\s*$"
#: "java.lang.IllegalStateException: x", "TypeError: x", "Error [ERR_X]: x",
#: 'Exception in thread "main" java.lang.StackOverflowError', "System.FormatException: x"
_EXCEPTION = r"(?:Exception|Error|Throwable)(?: \[[\w.-]+\])?(?::\s|:?$)"
_AT_FRAME = r"^\s+at \S"

#: name -> (start rules, {state: rules}, lead); a rule is (regex, target state[, TENTATIVE]).
#: ``lead``: how many lines a group may begin with before its first empty or
#: indented line (see Machine.lead). The rules are written to keep to it (a
#: Java or Python trace needs a frame after its first line, a Go panic a blank
#: line before its goroutines, Node's source line joins only if a caret
#: follows): the fast path relies on it.
Table = tuple[list[tuple[str, ...]], dict[str, list[tuple[str, ...]]], int]

LANGUAGES: dict[str, Table] = {
    "java": (
        [(_EXCEPTION, "exception")],
        {
            "exception": [(_AT_FRAME, "frames")],  # a trace has a frame before any cause
            "frames": [
                (_AT_FRAME, "frames"),
                (r"^\s*(?:Caused by|Suppressed): \S", "frames"),
                (r"^\s+\.\.\. \d+ (?:more|common frames omitted)$", "frames"),
            ],
        },
        1,
    ),
    "python": (
        [
            (r"^Traceback \(most recent call last\):$", "first"),
            (r"^\s*\+ Exception Group Traceback \(most recent call last\):$", "first"),
        ],
        {
            "first": [(r"^\s+\S", "traceback")],  # a traceback has a frame before its exception line
            # frames, source lines, carets and the "| " lines of exception groups are indented
            "traceback": [(r"^\s+\S", "traceback"), (r"^[A-Za-z_][\w.]*(?::.*)?$", "raised")],
            "raised": [(_BLANK, "gap", TENTATIVE)],
            "gap": [
                (_BLANK, "gap", TENTATIVE),
                (
                    r"^(?:During handling of the above exception, another exception occurred"
                    r"|The above exception was the direct cause of the following exception):$",
                    "chained",
                ),
            ],
            "chained": [(_BLANK, "chained", TENTATIVE), (r"^Traceback \(most recent call last\):$", "first")],
        },
        1,
    ),
    "go": (
        [(r"^(?:panic|fatal error): ", "head")],
        {
            "head": [
                (r"^\[signal ", "head"),
                (r"^\s+panic: ", "head"),  # a panic while panicking: "panic: a [recovered]\n\tpanic: b"
                (_BLANK, "stacks", TENTATIVE),
            ],
            "stacks": [
                (_BLANK, "stacks", TENTATIVE),
                (r"^goroutine \d+ .*:$", "stack"),
                (r"^runtime stack:$", "stack"),
            ],
            "stack": [
                (r"^\t\S", "stack"),  # /app/main.go:12 +0x1d
                (r"^created by \S", "stack"),
                (r"^\S+\(.*\)$", "stack"),  # main.(*Server).Serve(0xc000010000, {0x6b2f40, 0x0})
                (r"^\.\.\.", "stack"),  # ...additional frames elided...
                (_BLANK, "gap", TENTATIVE),
                (r"^exit status \d+$", END),
            ],
            "gap": [
                (_BLANK, "gap", TENTATIVE),
                (r"^goroutine \d+ .*:$", "stack"),
                (r"^exit status \d+$", END),
            ],
        },
        2,  # "panic: ...", "[signal ...]", then a blank line
    ),
    "ruby": (
        [
            # /app/calc.rb:2:in `/': divided by 0 (ZeroDivisionError)   (also 'Integer#/' since 3.4)
            (r"^\S.*:\d+:in [`'][^`']*': ", "frames"),
            # Rails: "ZeroDivisionError (divided by 0):"
            (r"^[A-Z]\w*(?:::[A-Z]\w*)* \(.*\):$", "frames"),
        ],
        {
            "frames": [
                (r"^\s+from \S.*:\d+:in ", "frames"),
                (r"^\s+\S+:\d+:in [`']", "frames"),
                (r"^\s+\.\.\. \d+ levels\.\.\.$", "frames"),
            ],
        },
        1,
    ),
    "nodejs": (
        [
            # an uncaught exception: "/app/server.js:12", the source line, a caret, a blank, the error
            (r"^\S+\.(?:[cm]?[jt]s|[jt]sx):\d+$", "header"),
            (_EXCEPTION, "frames"),
        ],
        {
            "header": [(r"", "source", TENTATIVE)],  # the source line, if a caret follows
            "source": [(r"^\s*\^+\s*$", "caret")],
            "caret": [(_BLANK, "caret", TENTATIVE), (_EXCEPTION, "frames")],
            "frames": [
                (r"^\s+at .* \{$", "properties"),  # error properties follow: "  code: 'ENOENT'" ... "}"
                (_AT_FRAME, "frames"),
                (r"^\s+\.\.\. \d+ lines? matching cause stack trace \.\.\.$", "frames"),
                (_BLANK, "tail", TENTATIVE),
            ],
            "properties": [(r"^\s+\S", "properties"), (r"^\}$", "frames")],
            "tail": [(_BLANK, "tail", TENTATIVE), (r"^Node\.js v\d+\S*$", END)],
        },
        3,  # "file.js:N", the source line, a caret at column 0, then a blank line
    ),
    "dotnet": (
        [(r"^Unhandled [eE]xception\. ", "frames"), (_EXCEPTION, "frames")],
        {
            "frames": [
                (_AT_FRAME, "frames"),
                (r"^\s*---> \S", "frames"),  # an inner exception
                (r"^\s*--- End of .*---$", "frames"),
            ],
        },
        1,
    ),
}

#: what ``mode: auto`` detects
AUTO = tuple(LANGUAGES)


def language_machine(languages: Iterable[str]) -> Machine:
    """One machine detecting the traces of every language named (a cached object per set)."""
    return _build(tuple(sorted(set(languages))))


@lru_cache(maxsize=None)
def _build(languages: tuple[str, ...]) -> Machine:
    unknown = [name for name in languages if name not in LANGUAGES]
    if unknown or not languages:
        raise ValueError(f"unknown language {unknown[0] if unknown else ''!r}; expected some of {', '.join(AUTO)}")
    index: dict[tuple[str, str], int] = {}
    for name in languages:
        for state in LANGUAGES[name][1]:
            index[name, state] = len(index)
    searches: dict[str, Search] = {}

    def rule(name: str, spec: tuple[str, ...]) -> Rule:
        pattern, target = spec[0], spec[1]
        if pattern not in searches:
            searches[pattern] = compile_builtin(pattern)
        number = DONE if target == END else index[name, target]
        return Rule(searches[pattern], number, tentative=TENTATIVE in spec[2:])

    starts = [rule(name, spec) for name in languages for spec in LANGUAGES[name][0]]
    states: list[list[Rule]] = [[] for _ in index]
    for (name, state), number in index.items():
        states[number] = [rule(name, spec) for spec in LANGUAGES[name][1][state]]
    start_patterns = dict.fromkeys(spec[0] for name in languages for spec in LANGUAGES[name][0])
    lead = max(LANGUAGES[name][2] for name in languages)
    return Machine(_any_of(list(start_patterns)), starts, states, lead=lead)


def _any_of(patterns: list[str]) -> Search:
    """One test for "some pattern matches": anchored ones tried once at the start of
    the line (as one alternation inside an unanchored search they would be tried at
    every position: ten times slower), the others as one search."""
    anchored = [pattern[1:] for pattern in patterns if pattern.startswith("^")]
    floating = [pattern for pattern in patterns if not pattern.startswith("^")]
    at_start = compile_builtin("^(?:" + "|".join(f"(?:{pattern})" for pattern in anchored) + ")")
    anywhere = compile_builtin("|".join(f"(?:{pattern})" for pattern in floating)) if floating else None
    if anywhere is None:
        return at_start

    def search(line: str) -> object:
        return at_start(line) or anywhere(line)

    return search
