"""Built-in stack trace detectors, one table per language.

Each language is a :class:`Language`: the rules that start a trace, and for
each named state the rules a following line may match (``(regex, next
state)``, ``TENTATIVE`` for lines that only belong to the trace if a later line
continues it, ``END`` for the line a trace ends with). A line no rule of the
trace's states takes ends the trace and may start the next one, so two traces
back to back are two records. The formats are those the runtimes print for an
uncaught exception and their usual logging libraries print for a caught one.
The regexes are RE2 (Rust ``regex`` syntax, compiled once per machine): a new
runtime is a new table, not code in the grouper.

``language_machine(["java", "python"])`` joins the tables into one
:class:`Machine`; ``auto`` is every language at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any, NamedTuple

from logagent.parsers.multiline_machine import DONE, Machine, Rule, Search, compile_builtin, compile_user_pattern
from logagent.parsers.multiline_prefilter import flat_alternatives, may_begin_with_space
from logagent.parsers.multiline_starts import StartTest

TENTATIVE = "tentative"
#: a rule that takes the lines its regex does not match
NOT = "not"
END = "<done>"

_BLANK = r"^\s*$"
#: "java.lang.IllegalStateException: x", "TypeError: x", "Error [ERR_X]: x",
#: 'Exception in thread "main" java.lang.StackOverflowError', "System.FormatException: x", and .NET's
#: ExternalException (a DbException, a Win32Exception) with its HRESULT: "Npgsql.NpgsqlException (0x80004005): x"
_EXCEPTION = r"(?:Exception|Error|Throwable)(?: \[[\w.-]+\]| \(0x[0-9A-F]{8}\))?(?::\s|:?$)"
#: a line that begins with an exception's name, as a trace's first line does ("java.io.IOException: x",
#: "TypeError: x", 'Exception in thread "main" ...'): a line of a message never does
_EXCEPTION_FIRST = (
    r"^(?:\{ )?(?:[\w$.]*(?:Exception|Error|Throwable)(?: \[[\w.-]+\]| \(0x[0-9A-F]{8}\))?(?::\s|:?$)"
    r"|Exception in thread "
    r"|Unhandled [eE]xception(?:[.:] |:$))"
)
#: a line that begins with a log line's time ("2015-07-09 15:23:29", "Jul 09, 2015 3:23:29 PM",
#: "15:23:29.201", klog's "I0709 15:23"): a new log line, never a line of a message
_TIMESTAMP_FIRST = r"^(?:\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d|[A-Z][a-z]{2} \d\d?, \d{4} |\d\d:\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d)"
#: the header Fluent Bit's and detect-exceptions' java/js parsers take as a trace's start (a JS trace follows)
_V8_HEADER = r"^V8 errors stack trace$"
#: what a line of a Java exception's message never is
_NOT_MESSAGE = f"{_EXCEPTION_FIRST}|{_TIMESTAMP_FIRST}|{_V8_HEADER}"
#: a log line of level ERROR or WARN that may be followed by the exception it logged, as logback's and Spring
#: Boot's default layouts print it: "16:15:13.201 [main] ERROR c.x.Daemon - crashing!",
#: "2026-12-02 10:00:00.001 ERROR [exec-1] c.x.Service - failed"
_LOGGED = r"^(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d[.,]\d{3}\S* +(?:\[[^\]]+\] +)?(?:ERROR|WARN) "
#: JVM, V8 (``eval at``), .NET frames
_AT_FRAME = r"^\s+(?:eval )?at \S"
#: what follows a Node.js error's frame
_NODE_FRAMES = [
    (r"^\s+at .* \{$", "properties"),  # error properties follow: "  code: 'ENOENT'" ... "}"
    (_AT_FRAME, "frames"),
    # an EventEmitter's 'error': where it was emitted ("Emitted 'error' event on Server instance at:")
    (r"^Emitted '[^']+' event(?: on .+)? at:$", "frames"),
    (r"^\s+\.\.\. \d+ lines? matching cause stack trace \.\.\.$", "frames"),
    (_BLANK, "tail", TENTATIVE),
]
#: what follows a .NET exception's header (the trace's first line, or an inner exception's " ---> X: y")
#: and its frames, but a blank line
_DOTNET_NEXT = [
    (_AT_FRAME, "frames"),
    (r"^\s*---> .*<---$", "closed"),  # an inner exception without a stack trace
    (r"^\s*---> \S", "header"),  # an inner exception
    (r"^\s*--- End of .*---<---$", "closed"),
    (r"^\s*--- End of .*---$", "frames"),
]
#: what a line of a .NET exception's message after a blank line never is: indented (as the lines of the
#: next error that ASP.NET Core's console logger prints after its "fail: ..." line), empty, or a new
#: trace's (a log line's) first line
_NOT_DOTNET_MESSAGE = rf"^\s|^$|{_NOT_MESSAGE}"
#: what follows a .NET frame. AggregateException: after its own stack trace, its inner exceptions, each
#: " ---> (Inner Exception #1) X: y", its frames and "<---" after the last line, a blank line between them
_DOTNET_FRAMES = [
    *_DOTNET_NEXT,
    # Npgsql's PostgresException prints its fields after its frames: "  Exception data:", "    SqlState: 23503"
    (r"^  Exception data:$", "data"),
    (_BLANK, "inner", TENTATIVE),
]
#: the line Python ends its report of a SyntaxError in the code run with
_SYNTAX_ERROR = r"^(?:SyntaxError|IndentationError|TabError): "
#: a ruby frame: "app/models/x.rb:3:in `f'", "actionpack (5.1.4) lib/x.rb:63:in 'call'"
_RUBY_FRAME = r"^\s+(?:from )?\S.*:\d+:in [`']"
#: what follows a ruby frame (and an error's first line)
_RUBY_FRAMES = [
    (_RUBY_FRAME, "frames"),
    (r"^\s+from \S+:\d+$", "frames"),  # Ruby 1.8's top frame: "from x.rb:50"
    (r"^\s+\.\.\. \d+ levels\.\.\.$", "frames"),
    (_BLANK, "highlight", TENTATIVE),  # error_highlight: a blank, the source line, carets
]
_DID_YOU_MEAN = r"^Did you mean\?  \S"
#: the first line of rake's report of a task's error (``rails db:migrate`` runs rake as "rails")
_RAKE_ABORTED = r"^(?:rake|rails) aborted!$"
#: what ends the message of a task's error in rake's (and ``rails db:migrate``'s) report: its first frame
#: ("/app/lib/tasks/x.rake:5:in `block in <top (required)>'", not indented), or the last lines
_RAKE_AFTER_MESSAGE = [
    (r"^\S.*:\d+:in [`']", "rake_frames"),
    (r"^Tasks: \S", "rake_tasks"),
    (r"^\(See full trace by running task with --trace\)$", END),
]


class Language(NamedTuple):
    """One runtime's traces as data."""

    #: (regex, state) rules a line may start a trace with; a third item, a
    #: number, is that rule's own ``lead`` when smaller than the language's
    starts: list[tuple[Any, ...]]
    #: state -> the rules a following line may match
    states: dict[str, list[tuple[str, ...]]]
    #: a trace of two lines or more has a *marked* line (empty or blank, or
    #: matching ``marks``) among its first ``lead + 1`` lines (see Machine.lead):
    #: the fast path relies on it, and the rules are written to keep to it
    lead: int
    #: an RE2 regex of the beginnings of the marked lines that are not indented
    #: ("#0 " of PHP and Dart frames, a Rust panic's "thread '", "goroutine 1 [")
    marks: str = ""
    #: an RE2 regex of what follows the indentation of the marked indented lines,
    #: the language's frames ("at ", 'File "', "from "). Ordinary indented
    #: lines (YAML, pretty JSON) are not marked, so they cost nothing
    indented: str = ""


def _message_lines(
    prefix: str, count: int, then: list[tuple[str, ...]], line: tuple[str, ...] = (r"",)
) -> dict[str, list[tuple[str, ...]]]:
    """``count`` states for the lines of a message before ``then``: each line is held as tentative.

    ``line``: the rule (its regex, and ``NOT`` if the lines it does not match are meant) of such a line.
    """
    states: dict[str, list[tuple[str, ...]]] = {}
    for number in range(count):
        following = f"{prefix}{number + 1}" if number + 1 < count else None
        states[f"{prefix}{number}"] = then + ([(line[0], following, TENTATIVE, *line[1:])] if following else [])
    return states


LANGUAGES: dict[str, Language] = {
    "java": Language(
        [(_EXCEPTION, "exception"), (_LOGGED, "logged")],
        {
            # the exception a log line logged: its header right after it, at most one line of message, then
            # "at" (the lead: the log line, the header, a line, "at")
            "logged": [(_EXCEPTION_FIRST, "logged_exception", TENTATIVE)],
            "logged_exception": [
                (_AT_FRAME, "frames"),
                (f"{_NOT_MESSAGE}|{_BLANK}", "logged_message", TENTATIVE, NOT),
            ],
            "logged_message": [(_AT_FRAME, "frames")],
            # a trace has a frame (or a nested exception) before any cause
            "exception": [
                (_AT_FRAME, "frames"),
                (r"^\s*nested exception is:\s*$", "nested"),
                (_BLANK, "exception", TENTATIVE),  # a blank line between the header and its first "at"
                # a message of several lines ("### Cause: ..." of MyBatis); a line that begins with
                # an exception's name or a time is the next trace's (or log line's) first, not one of them
                (_NOT_MESSAGE, "message0", TENTATIVE, NOT),
            ],
            **_message_lines("message", 2, [(_AT_FRAME, "frames")], (_NOT_MESSAGE, NOT)),
            "nested": [(r"(?:Exception|Error|Throwable)", "exception")],
            "frames": [
                (_AT_FRAME, "frames"),
                (r"^\s*(?:Caused by|Suppressed): \S", "cause"),
                (r"^\s+\.\.\. \d+ (?:more|common frames omitted)$", "frames"),
            ],
            "cause": [
                (_AT_FRAME, "frames"),
                (r"^\s*(?:Caused by|Suppressed): \S", "cause"),
                (r"^\s*nested exception is:\s*$", "nested"),
                (r"^\s+\.\.\. \d+ (?:more|common frames omitted)$", "frames"),
                (_BLANK, "cause", TENTATIVE),
            ],
        },
        3,  # the header, two lines more of its message, then "at"
        indented=r"at \S|eval at \S",
    ),
    "python": Language(
        [
            (r"^Traceback \(most recent call last\):$", "first"),
            (r"^\s*\+ Exception Group Traceback \(most recent call last\):$", "first"),
            # a SyntaxError (IndentationError, TabError) in the code run, reported without a traceback:
            # '  File "x.py", line 1', the source line, a caret line, "SyntaxError: invalid syntax"
            (r'^  File "[^"]*", line \d+$', "syntax", 0),
        ],
        {
            "first": [(r'^\s+(?:File "|\| )', "traceback")],  # a traceback has a frame before its exception line
            # frames, source lines, carets and the "| " lines of exception groups are
            # indented; a new exception group's first line is not part of this one
            "traceback": [
                (r"^\s+(?:[^\s+]|\+[^ ]|\+ [^E])", "traceback"),
                (r"^[A-Za-z_][\w.]*:\s*$", "message"),  # "RuntimeError: " and its message on the next line
                (r"^[A-Za-z_][\w.]*(?::.*)?$", "raised"),
            ],
            "message": [(r"^\S", "raised")],
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
            # its lines join only with the error's (IndentationError "unexpected indent" has no caret)
            "syntax": [(_SYNTAX_ERROR, END), (r"^\s+\S", "syntax_source", TENTATIVE)],
            "syntax_source": [(_SYNTAX_ERROR, END), (r"^\s*\^+\s*$", "syntax_caret", TENTATIVE)],
            "syntax_caret": [(_SYNTAX_ERROR, END)],
        },
        1,  # "Traceback ...", then a frame
        indented=r'File "|\| ',  # '  File "app.py", line 1', an exception group's "  |   File ..."
    ),
    "go": Language(
        [
            (r"^(?:panic|fatal error): ", "head"),
            # net/http's log line for a handler's panic, its goroutine right after
            (r"http: panic serving \S+: ", "stacks"),
        ],
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
        1,  # "panic: x" or "[signal ...]" then a blank line; "http: panic serving" then "goroutine N"
        marks=r"goroutine \d|\[signal ",
        indented=r"panic: ",
    ),
    "ruby": Language(
        [
            # /app/calc.rb:2:in `/': divided by 0 (ZeroDivisionError)   (also 'Integer#/' since 3.4)
            (r"^\S.*:\d+:in [`'][^`']*': ", "header"),
            # Rails: "ZeroDivisionError (divided by 0):", " NoMethodError (undefined method ...):"
            (r"^\s*[A-Z]\w*(?:::[A-Z]\w*)* \(.*\):$", "rails"),
            # Ruby 1.8: "x.rb:52: undefined method `errors' for nil:NilClass (NoMethodError)"
            (r"^\S+:\d+: .* \([A-Z][\w:]*(?:Error|Exception)\)$", "frames"),
            # Ruby 2.5 to 2.7 on a terminal: the oldest frame first, "\t1: from x.rb:2:in `<main>'", the error last
            (r"^Traceback \(most recent call last\):$", "oldest"),
            # rake's report of a task's error: "rake aborted!", the error's message (one or several lines,
            # "Did you mean?"), the frames not indented, "Tasks: TOP => x", "(See full trace by ...)"
            (_RAKE_ABORTED, "rake0", 0),
        ],
        {
            # did_you_mean's suggestions after the message (and after error_highlight's carets): "Did you mean?  x",
            # each further one on a line of its own under the first
            "header": [(_DID_YOU_MEAN, "suggestions"), *_RUBY_FRAMES],
            "suggestions": [(r"^ {15}\S", "suggestions"), *_RUBY_FRAMES],
            "frames": _RUBY_FRAMES,
            # the source line as it is in the file (not indented at the top level), if carets follow
            "highlight": [(r"^\s*\S", "source", TENTATIVE)],
            "source": [(r"^\s*\^+\s*$", "header")],
            "rails": [(_BLANK, "rails", TENTATIVE), (_RUBY_FRAME, "frames")],
            "oldest": [(r"^\s+\d+: from \S", "reversed")],  # a frame at least, then the error
            "reversed": [
                (r"^\s+\d+: from \S", "reversed"),
                (r"^\s+\.\.\. \d+ levels\.\.\.$", "reversed"),
                (r"^\S.*:\d+:in [`']", END),
            ],
            # the message: any lines but the next report's first
            **_message_lines("rake", 8, _RAKE_AFTER_MESSAGE, (_RAKE_ABORTED, NOT)),
            "rake_frames": [
                *_RAKE_AFTER_MESSAGE,
                (_BLANK, "rake_gap", TENTATIVE),  # the cause follows: a blank line, "Caused by:", its report
                (r"^[A-Z]\w*(?:::[A-Z]\w*)*: ", "rake1", TENTATIVE),  # rake 10: the cause's report right after
            ],
            "rake_gap": [(r"^Caused by:$", "rake0")],
            "rake_tasks": [(r"^\(See full trace by running task with --trace\)$", END)],
        },
        1,  # the error, then "\tfrom ..." or a blank line; "Traceback ...", then "\t2: from ..."
        # frames: "from x.rb:3:in ...", Ruby 2.5's "2: from ...", a Rails error's "app/x.rb:69:in 'f'"
        # (a path without spaces or colons: an ordinary line is turned down at once)
        indented=r"from \S|\d+: from \S|[^\s:]+:\d+:in [`']",
        # rake's frames are not indented: its first line is marked; so is did_you_mean's line, which may
        # follow an error without frames
        marks=r"(?:rake|rails) aborted!$|Did you mean\?  ",
    ),
    "nodejs": Language(
        [
            # an uncaught exception: "/app/server.js:12", the source line, a caret, a blank, the error; code
            # run by the vm module ("evalmachine.<anonymous>:3") or by "node -e" ("[eval]:1", "file:///x/[eval1]:1")
            (r"^(?:\S+\.(?:[cm]?[jt]s|[jt]sx)|node:[\w/]+|evalmachine\.<anonymous>|\S*\[eval\d*\]):\d+$", "header"),
            (_EXCEPTION, "error", 1),  # its next line is a frame, indented, or "Require stack:" (marked)
            (_V8_HEADER, "frames", 1),
            # an error object printed by Node 11 and before: "{ Error: x", frames, "  code: 'X' }"
            (r"^\{ [\w$.]*(?:Error|Exception)(?: \[[\w.-]+\])?: ", "inspected", 1),
        ],
        {
            "header": [(r"", "source", TENTATIVE)],  # the source line, if a caret follows
            "source": [(r"^\s*\^+\s*$", "caret")],
            # the error; a message without its name too (an object thrown, a library's own message)
            "caret": [(_BLANK, "caret", TENTATIVE), (_EXCEPTION, "error"), (r"^\S", "thrown", TENTATIVE)],
            "thrown": [(_AT_FRAME, "frames")],
            # a module not found: "Require stack:", "- /app/index.js" per requiring module, then the frames
            "error": [(r"^Require stack:$", "required"), *_NODE_FRAMES],
            "required": [(r"^- \S", "required"), (_AT_FRAME, "frames")],
            "frames": _NODE_FRAMES,
            "properties": [(r"^\s+\S", "properties"), (r"^\}$", "frames")],
            "inspected": [(_AT_FRAME, "inspected"), (r"^  [\w$]+: .*,$", "inspected_properties")],
            "inspected_properties": [(r"^  [\w$]+: .*,$", "inspected_properties"), (r"^  [\w$]+: .* \}$", END)],
            "tail": [(_BLANK, "tail", TENTATIVE), (r"^Node\.js v\d+\S*$", END)],
        },
        2,  # "file.js:N", the source line, then a caret
        marks=r"\^|Require stack:$",  # "Error: Cannot find module 'x'", then "Require stack:"
        indented=r"\^|at \S|eval at \S",
    ),
    "dotnet": Language(
        [
            (r"^Unhandled [eE]xception\. ", "header"),
            (_EXCEPTION, "header"),
            # Mono: "Unhandled Exception:" alone, then the exception's header, then its frames
            (r"^Unhandled Exception:$", "unhandled", 2),
        ],
        {
            # a message that goes on after a blank line (Npgsql's "23503: x", "", "DETAIL: y"): up to three
            # lines, not indented, held until a frame (or an inner exception, ...) follows
            "header": [*_DOTNET_NEXT, (_BLANK, "gap", TENTATIVE)],
            "gap": [*_DOTNET_NEXT, (_NOT_DOTNET_MESSAGE, "message0", TENTATIVE, NOT)],
            **_message_lines("message", 3, _DOTNET_NEXT, (_NOT_DOTNET_MESSAGE, NOT)),
            "frames": _DOTNET_FRAMES,
            # an inner exception that is an AggregateException ends with its own last inner one's "<---", then
            # a line "<---" of its own
            "closed": [(r"^\s*<---$", "frames"), *_DOTNET_FRAMES],
            "inner": [(r"^\s*---> \(Inner Exception #\d+\) \S", "header")],
            # "    Severity: ERROR", ... (the last one of an AggregateException's inner exception ends in "<---")
            "data": [(r"^    [A-Z][A-Za-z]*: .*<---$", "closed"), (r"^    [A-Z][A-Za-z]*: ", "data"), *_DOTNET_FRAMES],
            # the header on the next line is held until a frame (or an inner exception) follows
            "unhandled": [(_EXCEPTION_FIRST, "unhandled_header", TENTATIVE)],
            "unhandled_header": [(_AT_FRAME, "frames"), (r"^\s*---> \S", "header")],
        },
        1,
        # "--- End of inner exception stack trace ---" may follow a header directly (an inner exception
        # never thrown)
        marks=r"---> \S|--- End of ",
        indented=r"at \S|---> \S|--- End of ",
    ),
    "php": Language(
        [
            # "PHP Fatal error:  Uncaught Exception: boom in /app/x.php:3", "Fatal error: Uncaught ...",
            # in PHP's error log after the date: "[06-May-2021 21:17:27 UTC] PHP Fatal error:  Uncaught ..."
            (r"^(?:\[[^\]]+\] )?(?:PHP )?(?:Fatal error|Parse error|Warning|Notice|Error):\s+Uncaught ", "head"),
            # PHP 5: "exception 'Exception' with message 'x' in /app/x.php:5"
            (r"^(?:\[[^\]]+\] )?(?:PHP )?exception '[^']+' with message '", "head"),
        ],
        {
            "head": [(r"^(?:PHP )?Stack trace:$", "frames")],
            "frames": [
                (r"^(?:PHP )?#\d+ \S", "frames"),  # "#0 /app/x.php(9): f()", "#2 {main}"
                (r"^\s+thrown in \S.* on line \d+$", END),
                (_BLANK, "gap", TENTATIVE),
            ],
            # a previous exception: a blank line, "Next RuntimeException: outer in ...", its stack
            "gap": [(r"^Next \S+: ", "head")],
        },
        2,  # the header, "Stack trace:", then "#0"
        marks=r"#",
    ),
    "dart": Language(
        [
            (r"^Unhandled exception:$", "message0"),
            # an error and its stack printed by the program ("$error\n$stackTrace"): "Exception: x", "#0 ..."
            (_EXCEPTION, "printed", 1),
        ],
        {
            "printed": [(r"^#0\s+\S", "frames")],
            # the message: one or several lines (a source line, carets, blank lines) before "#0"
            **_message_lines("message", 8, [(r"^#0\s+\S", "frames")]),
            "frames": [(r"^#\d+\s+\S", "frames"), (r"^<asynchronous suspension>$", "frames")],
        },
        0,
        marks=r"#|Unhandled exception:$",
    ),
    "rust": Language(
        [(r"^thread '[^']*'(?: \(\d+\))? panicked at ", "message0")],
        {
            **_message_lines(
                "message",
                8,
                # "note: Run with `RUST_BACKTRACE=1` for a backtrace." before Rust 1.30
                [(r"^note: [Rr]un with `RUST_BACKTRACE=", END), (r"^stack backtrace:$", "backtrace")],
            ),
            "backtrace": [
                (r"^\s+\d+:\s+\S", "backtrace"),  # "   0: main", "   0:     0x7ff7d7e8e962 - <unknown>"
                (r"^\s+at \S", "backtrace"),
                (r"^\s+\[\.\.\. omitted \d+ frames? \.\.\.\]$", "backtrace"),
                (r"^note: Some details are omitted", END),
            ],
        },
        0,
        marks=r"thread '",
    ),
}

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
