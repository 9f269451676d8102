"""PHP: fatal errors with an uncaught exception, PHP 5's form, previous exceptions, Laravel's (Monolog's)
log entry of an exception with its ``[stacktrace]``, and the stack Xdebug prints with any error."""

from __future__ import annotations

from logagent.parsers.traces.shapes import BLANK, END, Language, NOT, TENTATIVE, message_lines

#: Monolog's line (Laravel's log): "[2025-10-09 19:10:09] production.ERROR: msg", "[2025-10-09T19:10:09+00:00] app.INFO: x"
_MONOLOG = r"^\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[^\]]*\] [\w-]+\.[A-Z]+: "
_MONOLOG_ERROR = r"^\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[^\]]*\] [\w-]+\.(?:ERROR|CRITICAL|ALERT|EMERGENCY): "
_STACKTRACE = r"^\[stacktrace\]$"
#: what follows a line of the message of a Monolog entry's exception: its "[stacktrace]", then "#0"
_TO_STACK = [(_STACKTRACE, "monolog_stack", TENTATIVE)]
#: PHP's names of its errors as its error handler prints them ("PHP Warning:  x in /app/x.php on line 3")
_PHP_ERROR = r"(?:Fatal error|Recoverable fatal error|Parse error|Warning|Notice|Deprecated|Strict Standards|Unknown error)"
#: Xdebug's log of an error (to PHP's error log, the CLI's stderr): "PHP Fatal error:  x in f on line 8",
#: "PHP Stack trace:", then a frame a line, its number right-aligned: "PHP   1. {main}() /app/x.php:0"
_XDEBUG_FRAME = r"^PHP +\d+\. \S"
#: Xdebug's display of an error (the console): the error's line ("Notice: x in f on line 7", or an uncaught
#: exception's "Error: x in f on line 10" after PHP's own line), a blank line, "Call Stack:", then a frame a
#: line with its time and memory: "    0.0010     393200   1. {main}() /app/x.php:0"
_ON_LINE = r"^\S.* in \S.* on line \d+$"
_CALL_FRAME = r"^ +\d+\.\d+ +\d+ +\d+\. \S"

LANGUAGE = Language(
    [
        # "PHP Fatal error:  Uncaught Exception: boom in /app/x.php:3", "Fatal error: Uncaught ...",
        # in PHP's error log after the date: "[06-May-2021 21:17:27 UTC] PHP Fatal error:  Uncaught ..."
        (r"^(?:\[[^\]]+\] )?(?:PHP )?(?:Fatal error|Parse error|Warning|Notice|Error):\s+Uncaught ", "head"),
        # PHP 5: "exception 'Exception' with message 'x' in /app/x.php:5"
        (r"^(?:\[[^\]]+\] )?(?:PHP )?exception '[^']+' with message '", "head"),
        # Monolog's (Laravel's) entry of level ERROR or above: the message and the exception in the context
        # ('{"exception":"[object] (X(code: 0): msg at /app/x.php:3)'), "[stacktrace]", "#0 ...", "#5 {main}",
        # then '"} ' (the context's end); its lines join only with the frames
        (_MONOLOG_ERROR, "monolog", 3),
        # Xdebug's log: the error's line, perhaps one more line of its message, "PHP Stack trace:", a frame
        (rf"^PHP {_PHP_ERROR}:  \S", "xdebug", 3),
        # Xdebug's display: the error's line, then a blank line (marked)
        (_ON_LINE, "call", 1),
    ],
    {
        "head": [(r"^(?:PHP )?Stack trace:$", "frames")],
        "frames": [
            (r"^(?:PHP )?#\d+ \S", "frames"),  # "#0 /app/x.php(9): f()", "#2 {main}"
            (r"^\s+thrown in \S.* on line \d+$", END),
            (BLANK, "gap", TENTATIVE),
        ],
        # a previous exception: a blank line, "Next RuntimeException: outer in ...", its stack
        "gap": [(r"^Next \S+: ", "head")],
        # the message goes on over a line, or (once a blank line of it is past) up to twenty; not over
        # the next entry's first line
        "monolog": [*_TO_STACK, (BLANK, "monolog_message0", TENTATIVE), (_MONOLOG, "monolog_line", TENTATIVE, NOT)],
        "monolog_line": [*_TO_STACK, (BLANK, "monolog_message0", TENTATIVE)],
        **message_lines("monolog_message", 20, _TO_STACK, (_MONOLOG, NOT)),
        "monolog_stack": [(r"^#0 \S", "monolog_frames")],
        "monolog_frames": [
            (r"^#\d+ \S", "monolog_frames"),
            (r'^"[},]', END),  # '"} ', or '","user":1} ' when more of the context follows
            # a previous exception: a blank line, "[previous exception] [object] (X(code: 0): ...", its stack
            (BLANK, "monolog_gap", TENTATIVE),
        ],
        # the lines of Xdebug's log join only with its first frame
        "xdebug": [
            (r"^PHP Stack trace:$", "xdebug_stack", TENTATIVE),
            (r"^PHP |^\[|^\s*$", "xdebug_message", TENTATIVE, NOT),  # the message's last line: " in f on line 3"
        ],
        "xdebug_message": [(r"^PHP Stack trace:$", "xdebug_stack", TENTATIVE)],
        "xdebug_stack": [(_XDEBUG_FRAME, "xdebug_frames")],
        "xdebug_frames": [(_XDEBUG_FRAME, "xdebug_frames")],
        # the lines of Xdebug's display join only with its first frame
        "call": [(BLANK, "call_gap", TENTATIVE)],
        "call_gap": [(r"^Call Stack:$", "call_stack", TENTATIVE), (_ON_LINE, "call", TENTATIVE)],
        "call_stack": [(_CALL_FRAME, "call_frames")],
        "call_frames": [(_CALL_FRAME, "call_frames")],
        "monolog_gap": [(r"^\[previous exception\] \[object\] \(", "monolog_message0")],
    },
    2,  # the header, "Stack trace:", then "#0"
    # Xdebug's frames: a trace's first marked line may be its third or fourth
    marks=r"#|PHP +\d+\. ",
)
