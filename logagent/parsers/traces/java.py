"""Java and the JVM languages (Kotlin, Scala): exceptions, their causes, and logback / Spring Boot log
lines followed by the exception they logged."""

from __future__ import annotations

from logagent.parsers.traces.shapes import (
    AT_FRAME,
    BLANK,
    BRACKETED_FIRST,
    EXCEPTION,
    EXCEPTION_FIRST,
    INSPECTED_FIRST,
    LEVEL_WORD,
    Language,
    NOT,
    NOT_MESSAGE as _NOT_MESSAGE,
    TENTATIVE,
    message_lines,
)

#: what a line of a Java exception's message never is: also Node's first lines of an error named by
#: util.inspect (with its name and constructor, or without its stack) and of a process warning ("(node:7)
#: UnhandledPromiseRejectionWarning: Error: x"), the next trace's
NOT_MESSAGE = rf"{_NOT_MESSAGE}|{INSPECTED_FIRST}|{BRACKETED_FIRST}|^\(node:\d+\) "
#: a log line of level ERROR or WARN that may be followed by the exception it logged: logback's and Spring Boot's
#: default layouts ("16:15:13.201 [main] ERROR c.x.Daemon - crashing!", "2026-12-02 10:00:00.001 ERROR [exec-1]
#: c.x.Service - failed") and log4j 1's pattern of Spark, Hadoop and Kafka ("%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n"):
#: "18/04/09 09:30:52 ERROR Executor: Exception in task 1.0 in stage 0.0 (TID 1)". One regex with one level
#: part, so a line is looked for "ERROR " and "WARN " once
_LOGGED = (
    r"^(?:(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d[.,]\d{3}\S* +(?:\[[^\]]+\] +)?|\d\d/\d\d/\d\d \d\d:\d\d:\d\d )"
    r"(?:ERROR|WARN) "
)
#: any other log line with its level as a word (Akka's "[ERROR] [date] [thread] [path] msg", JUL's "SEVERE: msg",
#: an MDC prefix before logback's layout), and sbt's "[error] (run-main-0) java.lang.X: msg" before the trace
#: its run printed
_LEVELLED = rf"{LEVEL_WORD}|^\[error\] "
#: the lines of a cause's message, at most (SnakeYAML's: the problem, where, the YAML line, a caret, the same
#: three again, a blank line), then its "at"
_CAUSE_MESSAGE_LINES = 8

LANGUAGE = Language(
    [(EXCEPTION, "exception"), (_LOGGED, "logged"), (_LEVELLED, "logged")],
    {
        # the exception a log line logged: its header right after it (or after the blank line Spring Boot's
        # default "%wEx" prints), at most one line of message, then "at" (the lead: the log line, the blank
        # line or the header, ..., "at")
        "logged": [(EXCEPTION_FIRST, "logged_exception", TENTATIVE), (BLANK, "logged_blank", TENTATIVE)],
        "logged_blank": [(EXCEPTION_FIRST, "logged_exception", TENTATIVE)],
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
            # kotlinx.coroutines' stack trace recovery (before 1.7) between two frames
            (r"^\s+\(Coroutine boundary\)$", "frames"),
            # a failed Spark job: the executor's trace in the message, a blank line, "Driver stacktrace:"
            (BLANK, "driver", TENTATIVE),
        ],
        "driver": [(r"^Driver stacktrace:$", "driver_frames", TENTATIVE)],
        "driver_frames": [(AT_FRAME, "frames")],
        "cause": [
            (AT_FRAME, "frames"),
            (r"^\s*(?:Caused by|Suppressed): \S", "cause"),
            (r"^\s*nested exception is:\s*$", "nested"),
            (r"^\s+\.\.\. \d+ (?:more|common frames omitted)$", "frames"),
            (BLANK, "cause", TENTATIVE),
            # a message of several lines (SnakeYAML's, a SQL error's "  Detail: ..."), not a log line's
            (NOT_MESSAGE, "cause_message0", TENTATIVE, NOT),
        ],
        **message_lines("cause_message", _CAUSE_MESSAGE_LINES, [(AT_FRAME, "frames")], (NOT_MESSAGE, NOT)),
    },
    3,  # the header, two lines more of its message, then "at"
    indented=r"at \S|eval at \S",
)
