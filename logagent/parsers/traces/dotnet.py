""".NET: exceptions, inner exceptions, AggregateException, async frames, Mono, Npgsql's Exception data."""

from __future__ import annotations

from logagent.parsers.traces.shapes import (
    AT_FRAME,
    BLANK,
    EXCEPTION,
    EXCEPTION_FIRST,
    Language,
    NOT,
    NOT_MESSAGE,
    TENTATIVE,
    message_lines,
)

#: what follows a .NET exception's header (the trace's first line, or an inner exception's " ---> X: y")
#: and its frames, but a blank line
_DOTNET_NEXT = [
    (AT_FRAME, "frames"),
    (r"^\s*---> .*<---$", "closed"),  # an inner exception without a stack trace
    (r"^\s*---> \S", "header"),  # an inner exception
    (r"^\s*--- End of .*---<---$", "closed"),
    (r"^\s*--- End of .*---$", "frames"),
]
#: what a line of a .NET exception's message after a blank line never is: indented (as the lines of the
#: next error that ASP.NET Core's console logger prints after its "fail: ..." line), empty, or a new
#: trace's (a log line's) first line
_NOT_DOTNET_MESSAGE = rf"^\s|^$|{NOT_MESSAGE}"
#: what follows a .NET frame. AggregateException: after its own stack trace, its inner exceptions, each
#: " ---> (Inner Exception #1) X: y", its frames and "<---" after the last line, a blank line between them
_DOTNET_FRAMES = [
    *_DOTNET_NEXT,
    # Npgsql's PostgresException prints its fields after its frames: "  Exception data:", "    SqlState: 23503"
    (r"^  Exception data:$", "data"),
    (BLANK, "inner", TENTATIVE),
]

#: ASP.NET Core's console logger (Microsoft.Extensions.Logging): an entry of level fail or crit, its lines
#: indented by 6, the exception's frames by 9: "fail: Microsoft.AspNetCore.Server.Kestrel[13]"
_CONSOLE_ENTRY = r"^(?:fail|crit): [\w.]+\[\d+\]$"
#: its message as ASP.NET Core's own middleware words it (Kestrel[13]: 'Connection id "X", Request id "Y": An
#: unhandled exception was thrown by the application.'; ExceptionHandlerMiddleware[1] and
#: DeveloperExceptionPageMiddleware[1]: "An unhandled exception has occurred while executing the request."),
#: or the line of its scopes ("=> SpanId:x, TraceId:y => RequestPath:/z"): both are marked
_CONSOLE_KNOWN = r'^ {6}(?:=> |Connection id "|An unhandled exception )'
_CONSOLE_LINE = r"^ {6}\S"
#: the exception the entry logged, indented by 6
_CONSOLE_EXCEPTION = rf"^ {{6}}[\w$.]*{EXCEPTION}"
#: Serilog's entry of level Error or Fatal in its default output templates, the exception on the lines after
#: it: the console's "[{Timestamp:HH:mm:ss} {Level:u3}] {Message:lj}" ("[15:00:24 ERR] msg", often with the
#: milliseconds: "[15:00:24.368 FTL] msg") and the file's "{Timestamp:yyyy-MM-dd HH:mm:ss.fff zzz}
#: [{Level:u3}] {Message:lj}" ("2022-01-28 08:32:11.282 +00:00 [ERR] msg")
_SERILOG = (
    r"^(?:\[\d\d:\d\d:\d\d(?:\.\d+)? (?:ERR|FTL)\] "
    r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [+-]\d\d:\d\d \[(?:ERR|FTL)\] )"
)

LANGUAGE = Language(
    [
        (r"^Unhandled [eE]xception\. ", "header"),
        (EXCEPTION, "header"),
        # Mono: "Unhandled Exception:" alone, then the exception's header, then its frames
        (r"^Unhandled Exception:$", "unhandled", 2),
        # the entry's line, a line of message, the exception's header, its first frame (or a marked line sooner)
        (_CONSOLE_ENTRY, "console", 3),
        # Serilog's line, the exception's header right after it, then its first frame (or a marked line)
        (_SERILOG, "serilog", 2),
    ],
    {
        # a message that goes on after a blank line (Npgsql's "23503: x", "", "DETAIL: y"): up to three
        # lines, not indented, held until a frame (or an inner exception, ...) follows
        "header": [*_DOTNET_NEXT, (BLANK, "gap", TENTATIVE)],
        "gap": [*_DOTNET_NEXT, (_NOT_DOTNET_MESSAGE, "message0", TENTATIVE, NOT)],
        **message_lines("message", 3, _DOTNET_NEXT, (_NOT_DOTNET_MESSAGE, NOT)),
        "frames": _DOTNET_FRAMES,
        # an inner exception that is an AggregateException ends with its own last inner one's "<---", then
        # a line "<---" of its own
        "closed": [(r"^\s*<---$", "frames"), *_DOTNET_FRAMES],
        # after a blank line: an AggregateException's next inner exception, or the end of an inner exception's
        # trace (some runtimes leave a blank line after its "--- End of stack trace from previous location ---")
        "inner": [
            (r"^\s*---> \(Inner Exception #\d+\) \S", "header"),
            (r"^\s*--- End of inner exception ", "frames"),
        ],
        # "    Severity: ERROR", ... (the last one of an AggregateException's inner exception ends in "<---")
        "data": [(r"^    [A-Z][A-Za-z]*: .*<---$", "closed"), (r"^    [A-Z][A-Za-z]*: ", "data"), *_DOTNET_FRAMES],
        # the header on the next line is held until a frame (or an inner exception) follows
        "unhandled": [(EXCEPTION_FIRST, "unhandled_header", TENTATIVE)],
        "unhandled_header": [(AT_FRAME, "frames"), (r"^\s*---> \S", "header")],
        # the console logger's entry: every line is held until the exception's first frame (or inner one)
        "console": [(_CONSOLE_KNOWN, "console_known", TENTATIVE), (_CONSOLE_LINE, "console_message", TENTATIVE)],
        # after a marked line: a scope line, then a line of message, the exception and up to 3 lines of its message
        "console_known": [
            (_CONSOLE_EXCEPTION, "console_exception0", TENTATIVE),
            (_CONSOLE_LINE, "console_known_message", TENTATIVE),
        ],
        "console_known_message": [(_CONSOLE_EXCEPTION, "console_exception0", TENTATIVE)],
        **message_lines("console_exception", 4, _DOTNET_NEXT, (_CONSOLE_LINE,)),
        # after a message line of the application's: the exception, its first frame on the next line
        "console_message": [(_CONSOLE_EXCEPTION, "console_header", TENTATIVE)],
        "console_header": _DOTNET_NEXT,
        # Serilog's entry joins only with the exception on the next line, and only once a frame (or an inner
        # exception, a blank line before more of its message) follows its header
        "serilog": [(EXCEPTION_FIRST, "header", TENTATIVE)],
    },
    1,
    # "--- End of inner exception stack trace ---" may follow a header directly (an inner exception
    # never thrown)
    marks=r"---> \S|--- End of ",
    indented=r'at \S|---> \S|--- End of |=> |Connection id "|An unhandled exception ',
)
