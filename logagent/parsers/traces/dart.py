"""Dart: unhandled exceptions and stacks a program prints."""

from __future__ import annotations

from logagent.parsers.traces.shapes import EXCEPTION, Language, message_lines

LANGUAGE = Language(
    [
        (r"^Unhandled exception:$", "message0"),
        # an error and its stack printed by the program ("$error\n$stackTrace"): "Exception: x", "#0 ..."
        (EXCEPTION, "printed", 1),
    ],
    {
        "printed": [(r"^#0\s+\S", "frames")],
        # the message: one or several lines (a source line, carets, blank lines) before "#0"
        **message_lines("message", 8, [(r"^#0\s+\S", "frames")]),
        "frames": [(r"^#\d+\s+\S", "frames"), (r"^<asynchronous suspension>$", "frames")],
    },
    0,
    marks=r"#|Unhandled exception:$",
)
