"""Node.js and V8: errors and their frames, an uncaught exception's source header, error properties, Require stack."""

from __future__ import annotations

from logagent.parsers.traces.shapes import (
    AT_FRAME,
    BLANK,
    BRACKETED_FIRST,
    END,
    EXCEPTION,
    INSPECTED_FIRST,
    Language,
    NOT,
    NOT_MESSAGE,
    TENTATIVE,
    V8_HEADER,
    message_lines,
)

#: what follows a Node.js error's frame
_NODE_FRAMES = [
    (r"^\s+at .* \{$", "properties"),  # error properties follow: "  code: 'ENOENT'" ... "}"
    (AT_FRAME, "frames"),
    # an EventEmitter's 'error': where it was emitted ("Emitted 'error' event on Server instance at:")
    (r"^Emitted '[^']+' event(?: on .+)? at:$", "frames"),
    (r"^\s+\.\.\. \d+ lines? matching cause stack trace \.\.\.$", "frames"),
    (BLANK, "tail", TENTATIVE),
]

LANGUAGE = Language(
    [
        # an uncaught exception: "/app/server.js:12", the source line, a caret, a blank, the error; code
        # run by the vm module ("evalmachine.<anonymous>:3") or by "node -e" ("[eval]:1", "file:///x/[eval1]:1")
        (r"^(?:\S+\.(?:[cm]?[jt]s|[jt]sx)|node:[\w/]+|evalmachine\.<anonymous>|\S*\[eval\d*\]):\d+$", "header"),
        (EXCEPTION, "error", 1),  # its next line is a frame, indented, or "Require stack:" (marked)
        (V8_HEADER, "v8", 1),
        # an error object printed by Node 11 and before: "{ Error: x", frames, "  code: 'X' }"
        (r"^\{ [\w$.]*(?:Error|Exception)(?: \[[\w.-]+\])?: ", "inspected", 1),
        # util.inspect names an error whose constructor is not its name by both: "HttpError [Error]: x"
        (INSPECTED_FIRST, "error", 1),
        # an error inspected without its stack, its cause after it: "[TypeError: fetch failed] {",
        # "  [cause]: Error: getaddrinfo ENOTFOUND x", the cause's frames and properties, "}"
        (BRACKETED_FIRST, "bracketed", 2),
    ],
    {
        "header": [(r"", "source", TENTATIVE)],  # the source line, if a caret follows
        "source": [(r"^\s*\^+\s*$", "caret")],
        # the error; a message without its name too (an object thrown, a library's own message)
        "caret": [
            (BLANK, "caret", TENTATIVE),
            # ts-node's compile error: its diagnostics (and a blank line) before the frames
            (r"^TSError: ", "diagnostics0"),
            # Node 15+ on a promise rejected with no Error: "[UnhandledPromiseRejection: x] {", "  code: 'X'", "}"
            (r"^\[[\w$.]+: .*\] \{$", "properties"),
            (EXCEPTION, "error"),
            (r"^\S", "thrown", TENTATIVE),
        ],
        **message_lines("diagnostics", 6, [(AT_FRAME, "frames")], (NOT_MESSAGE, NOT)),
        "thrown": [(AT_FRAME, "frames")],
        # a module not found: "Require stack:", "- /app/index.js" per requiring module, then the frames
        "error": [(r"^Require stack:$", "required"), *_NODE_FRAMES],
        "required": [(r"^- \S", "required"), (AT_FRAME, "frames")],
        # Node 14 and before after an UnhandledPromiseRejectionWarning's frames (the first warning of a process)
        "frames": [*_NODE_FRAMES, (r"^\(Use `node --trace-warnings \.\.\.` to show where the warning was created\)$", END)],
        "v8": _NODE_FRAMES,
        "properties": [(r"^\s+\S", "properties"), (r"^\}$", "frames")],
        # the cause's line joins only with the cause's frame after it
        "bracketed": [(r"^  \[cause\]: ", "bracketed_cause", TENTATIVE)],
        "bracketed_cause": [(AT_FRAME, "properties")],
        "inspected": [(AT_FRAME, "inspected"), (r"^  [\w$]+: .*,$", "inspected_properties")],
        # a value util.inspect breaks over lines: the property alone ("  details: "), then its lines, indented deeper
        "inspected_properties": [
            (r"^  [\w$]+: .*,$", "inspected_properties"),
            (r"^  [\w$]+: .* \}$", END),
            (r"^  [\w$]+: ?$", "inspected_properties"),
            (r"^   +\S", "inspected_properties"),
        ],
        "tail": [(BLANK, "tail", TENTATIVE), (r"^Node\.js v\d+\S*$", END)],
    },
    2,  # "file.js:N", the source line, then a caret
    marks=r"\^|Require stack:$",  # "Error: Cannot find module 'x'", then "Require stack:"
    indented=r"\^|at \S|eval at \S",
)
