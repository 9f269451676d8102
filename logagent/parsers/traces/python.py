"""Python: tracebacks, chained ones, exception groups, and the report of a SyntaxError."""

from __future__ import annotations

from logagent.parsers.traces.shapes import BLANK, END, Language, TENTATIVE

#: the line Python ends its report of a SyntaxError in the code run with
_SYNTAX_ERROR = r"^(?:SyntaxError|IndentationError|TabError): "

LANGUAGE = Language(
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
        "raised": [(BLANK, "gap", TENTATIVE)],
        "gap": [
            (BLANK, "gap", TENTATIVE),
            (
                r"^(?:During handling of the above exception, another exception occurred"
                r"|The above exception was the direct cause of the following exception):$",
                "chained",
            ),
        ],
        "chained": [(BLANK, "chained", TENTATIVE), (r"^Traceback \(most recent call last\):$", "first")],
        # its lines join only with the error's (IndentationError "unexpected indent" has no caret)
        "syntax": [(_SYNTAX_ERROR, END), (r"^\s+\S", "syntax_source", TENTATIVE)],
        "syntax_source": [(_SYNTAX_ERROR, END), (r"^\s*\^+\s*$", "syntax_caret", TENTATIVE)],
        "syntax_caret": [(_SYNTAX_ERROR, END)],
    },
    1,  # "Traceback ...", then a frame
    indented=r'File "|\| ',  # '  File "app.py", line 1', an exception group's "  |   File ..."
)
