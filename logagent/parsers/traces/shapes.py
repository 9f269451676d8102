"""What the trace tables share: the ``Language`` record, its rule markers, and the shapes of lines
several runtimes print (an exception's header, an ``at`` frame, a log line's time)."""

from __future__ import annotations

from typing import Any, NamedTuple

TENTATIVE = "tentative"
#: a rule that takes the lines its regex does not match
NOT = "not"
END = "<done>"

BLANK = r"^\s*$"
#: "java.lang.IllegalStateException: x", "TypeError: x", "Error [ERR_X]: x",
#: 'Exception in thread "main" java.lang.StackOverflowError', "System.FormatException: x", and .NET's
#: ExternalException (a DbException, a Win32Exception) with its HRESULT: "Npgsql.NpgsqlException (0x80004005): x"
EXCEPTION = r"(?:Exception|Error|Throwable)(?: \[[\w.-]+\]| \(0x[0-9A-F]{8}\))?(?::\s|:?$)"
#: a line that begins with an exception's name, as a trace's first line does ("java.io.IOException: x",
#: "TypeError: x", 'Exception in thread "main" ...'): a line of a message never does
EXCEPTION_FIRST = (
    r"^(?:\{ )?(?:[\w$.]*(?:Exception|Error|Throwable)(?: \[[\w.-]+\]| \(0x[0-9A-F]{8}\))?(?::\s|:?$)"
    r"|Exception in thread "
    r"|Unhandled [eE]xception(?:[.:] |:$))"
)
#: a line that begins with a log line's time ("2015-07-09 15:23:29", "Jul 09, 2015 3:23:29 PM",
#: "15:23:29.201", klog's "I0709 15:23"): a new log line, never a line of a message
TIMESTAMP_FIRST = r"^(?:\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d|[A-Z][a-z]{2} \d\d?, \d{4} |\d\d:\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d)"
#: a log line at an error level, whatever the logger's layout: the level as a word of its own after at most
#: four tokens of the line's prefix (brackets, braces, a date, a time, a number, loguru's "|") or inside its
#: first bracket: "[ERROR] [09/14/2016 11:51:36.120] [akka://...] null", "SEVERE: Servlet.service() ...",
#: "[app:10.0.93.182:0000] 2021-05-24 09:15:05.823 ERROR 13728 [] [main] ...", "[2025-09-03, 11:47:47 PKT]
#: {taskinstance.py:2905} ERROR - ...", "[2018-02-07 16:50:15,479: ERROR/ForkPoolWorker-1] Task ...". A
#: trace's tables take it before the exception it logged, only when that exception follows at once. Not a
#: word of the message ("INFO retry after ERROR - x"), nor a warning's level (an uncaught exception printed
#: after an unrelated warning is likelier than after an unrelated error)
_LEVEL = r"(?:ERROR|FATAL|SEVERE|CRITICAL)"
LEVEL_WORD = (
    rf"^(?:(?:\[[^\]]*\]|\{{[^}}]*\}}|[\d/:.,TZ+|-]+)\s+){{0,4}}\[?{_LEVEL}(?:$|[\s\]):|/-])"
    rf"|^\[[^\]]*[\s:]{_LEVEL}[/\]]"
)
#: the header Fluent Bit's and detect-exceptions' java/js parsers take as a trace's start (a JS trace follows)
V8_HEADER = r"^V8 errors stack trace$"
#: what a line of a Java exception's message never is
NOT_MESSAGE = f"{EXCEPTION_FIRST}|{TIMESTAMP_FIRST}|{V8_HEADER}"
#: JVM, V8 (``eval at``), .NET frames
AT_FRAME = r"^\s+(?:eval )?at \S"


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


def message_lines(
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


#: an error util.inspect prints without its stack, its properties after it ("[TypeError: fetch failed] {"): a
#: trace's first line, never a line of a message
BRACKETED_FIRST = r"^\[[\w$.]*(?:Error|Exception)(?: \[[\w.-]+\])?: .*\] \{$"
#: an error util.inspect names by its constructor and its name, as Node.js prints it when they differ:
#: "HttpError [Error]: x", "_0x45c9e2 [Error]: x" (a trace's first line, never a line of a message)
INSPECTED_FIRST = r"^[\w$.]+ \[[\w$.]*(?:Error|Exception)\]: "
