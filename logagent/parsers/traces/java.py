"""Java and the JVM languages (Kotlin, Scala): exceptions, their causes, and logback / Spring Boot log
lines followed by the exception they logged."""

from __future__ import annotations

from logagent.parsers.traces.shapes import (
    AT_FRAME,
    BLANK,
    EXCEPTION,
    EXCEPTION_FIRST,
    LOGGED,
    Language,
    NOT,
    NOT_MESSAGE,
    TENTATIVE,
    message_lines,
)

LANGUAGE = Language(
    [(EXCEPTION, "exception"), (LOGGED, "logged")],
    {
        # the exception a log line logged: its header right after it, at most one line of message, then
        # "at" (the lead: the log line, the header, a line, "at")
        "logged": [(EXCEPTION_FIRST, "logged_exception", TENTATIVE)],
        "logged_exception": [
            (AT_FRAME, "frames"),
            (f"{NOT_MESSAGE}|{BLANK}", "logged_message", TENTATIVE, NOT),
        ],
        "logged_message": [(AT_FRAME, "frames")],
        # a trace has a frame (or a nested exception) before any cause
        "exception": [
            (AT_FRAME, "frames"),
            (r"^\s*nested exception is:\s*$", "nested"),
            (BLANK, "exception", TENTATIVE),  # a blank line between the header and its first "at"
            # a message of several lines ("### Cause: ..." of MyBatis); a line that begins with
            # an exception's name or a time is the next trace's (or log line's) first, not one of them
            (NOT_MESSAGE, "message0", TENTATIVE, NOT),
        ],
        **message_lines("message", 2, [(AT_FRAME, "frames")], (NOT_MESSAGE, NOT)),
        "nested": [(r"(?:Exception|Error|Throwable)", "exception")],
        "frames": [
            (AT_FRAME, "frames"),
            (r"^\s*(?:Caused by|Suppressed): \S", "cause"),
            (r"^\s+\.\.\. \d+ (?:more|common frames omitted)$", "frames"),
        ],
        "cause": [
            (AT_FRAME, "frames"),
            (r"^\s*(?:Caused by|Suppressed): \S", "cause"),
            (r"^\s*nested exception is:\s*$", "nested"),
            (r"^\s+\.\.\. \d+ (?:more|common frames omitted)$", "frames"),
            (BLANK, "cause", TENTATIVE),
        ],
    },
    3,  # the header, two lines more of its message, then "at"
    indented=r"at \S|eval at \S",
)
