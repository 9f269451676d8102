"""Python: tracebacks, chained ones, exception groups, the report of a SyntaxError, and the error-level
logger line (logging's, uvicorn's, Flask's, Django's, asyncio's) right before the traceback it logged."""

from __future__ import annotations

from logagent.parsers.traces.shapes import BLANK, END, LEVEL_WORD, Language, TENTATIVE

#: the line Python ends its report of a SyntaxError in the code run with
_SYNTAX_ERROR = r"^(?:SyntaxError|IndentationError|TabError): "
_TRACEBACK = r"^Traceback \(most recent call last\):$"
_GROUP = r"^\s*\+ Exception Group Traceback \(most recent call last\):$"
#: a logger's line of level ERROR or CRITICAL that the exception it logged may follow:
#: logging's default format ("ERROR:root:msg", "ERROR:app.db:msg"), uvicorn's ("ERROR:    Exception in
#: ASGI application"), a format that puts the time first ("2022-06-01 19:37:14,799 - asyncio - ERROR - msg",
#: Flask's "[2025-05-04 03:09:16,109] ERROR in app: msg", "2024-01-02 10:00:00,123 [ERROR] x: msg"),
#: Django's django.request ("Internal Server Error: /polls/"), and asyncio's own report of a task's
#: exception printed without logging's format ("Task exception was never retrieved")
_LOGGED = (
    r"^(?:(?:ERROR|CRITICAL):(?: +\S|[\w.-]+:)"
    r"|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?\]?(?: -)?(?: \[?[\w.-]+\]?(?: -)?)?[ \[]{1,2}(?:ERROR|CRITICAL)[\]:\s-]"
    r"|Internal Server Error: /"
    r"|(?:Task|Future) exception was never retrieved$)"
)

#: tornado's log formatter (tornado apps, Jupyter, JupyterHub): "[E 190919 21:36:03 web:2246] msg" or with its own
#: date format "[E 2019-09-19 21:36:03.747 JupyterHub gen:974] msg", level E or C; it indents the traceback it
#: logged under it by four spaces, every line
_TORNADO = r"^\[[EC] \d[\d-]+ \d\d:\d\d:\d\d(?:\.\d+)? (?:\S+ )?[\w.]+:\d+\] "
#: the line before a traceback that threading.excepthook prints for a thread's uncaught exception
#: ("Exception in thread worker:", since 3.10 with the target in the default name: "Exception in thread
#: Thread-1 (run):"), the one atexit prints for an exit function's exception ("Error in
#: atexit._run_exitfuncs:"), and the one sys.unraisablehook prints for an exception it cannot raise ("Exception
#: ignored in: <function A.__del__ at 0x7f...>", 3.13's "Exception ignored while calling deallocator ...")
_HOOK = r"^(?:Exception in thread .*:$|Exception ignored [a-z]|Error in atexit\._run_exitfuncs:$)"

LANGUAGE = Language(
    [
        (_TRACEBACK, "first"),
        (_GROUP, "first"),
        # a SyntaxError (IndentationError, TabError) in the code run, reported without a traceback:
        # '  File "x.py", line 1', the source line, a caret line, "SyntaxError: invalid syntax"
        (r'^  File "[^"]*", line \d+$', "syntax", 0),
        # the logger's line, then (asyncio) "future: <Task finished ...>", "Traceback ..." and a frame
        (_LOGGED, "logged", 3),
        # any other logger's line with its level as a word (Celery's "[date: ERROR/ForkPoolWorker-1] ...",
        # Airflow's "[date] {taskinstance.py:2905} ERROR - ..."), the traceback right after it
        (LEVEL_WORD, "logged", 2),
        # tornado's line, "    Traceback ...", a frame
        (_TORNADO, "tornado", 2),
        # the hook's line, "Traceback ...", a frame
        (_HOOK, "future", 2),
    ],
    {
        # its lines join only with the traceback's first frame
        "logged": [
            (_TRACEBACK, "first", TENTATIVE),
            (_GROUP, "first", TENTATIVE),
            (r"^future: <(?:Task|Future) ", "future", TENTATIVE),
        ],
        "future": [(_TRACEBACK, "first", TENTATIVE), (_GROUP, "first", TENTATIVE)],
        # the traceback tornado indented: its first line, a frame, then every line indented by four or more
        # (a blank line of a chained traceback too: the formatter indents it as well)
        "tornado": [(r"^    Traceback \(most recent call last\):$", "tornado_first", TENTATIVE)],
        "tornado_first": [(r'^\s+File "', "tornado_traceback")],
        "tornado_traceback": [(r"^    ", "tornado_traceback")],
        # a traceback has a frame before its exception line; loguru's (diagnose, its default) a blank line
        # before each frame, a variable's values under the source line ("    │   └ 0"), "> File" for the frame
        # that raised
        "first": [(r'^\s+(?:File "|\| )|^> File "', "traceback"), (BLANK, "first", TENTATIVE)],
        # frames, source lines, carets and the "| " lines of exception groups are
        # indented; a new exception group's first line is not part of this one
        "traceback": [
            (r"^\s+\+-+$", "closed"),  # an exception group's last line (of a group in it: more may follow)
            (r"^\s+(?:[^\s+]|\+[^ ]|\+ [^E])", "traceback"),
            (BLANK, "frame_gap", TENTATIVE),
            (r"^[A-Za-z_][\w.]*:\s*$", "message"),  # "RuntimeError: " and its message on the next line
            (r"^[A-Za-z_][\w.]*(?::.*)?$", "raised"),
        ],
        # loguru's blank line between two frames, and before the exception line (a class's name, CamelCase,
        # perhaps in its module: a word after a cut traceback and a blank line is not taken)
        "frame_gap": [
            (BLANK, "frame_gap", TENTATIVE),
            (r'^\s+File "|^> File "', "traceback"),
            (r"^(?:[a-z_]\w*\.)*[A-Z]\w*:\s*$", "message"),
            (r"^(?:[a-z_]\w*\.)*[A-Z]\w*(?::.*)?$", "raised"),
        ],
        # after a group's last line: the next of its exceptions, or a chained traceback; not a log line
        "closed": [(r"^\s+(?:\||\+-)", "traceback"), (BLANK, "gap", TENTATIVE)],
        "message": [(r"^\S", "raised")],
        # the notes add_note gave an exception (PEP 678) are not taken after its line: nothing tells them from
        # the next line printed, and holding that line until the one after it would hold every traceback
        "raised": [(BLANK, "gap", TENTATIVE)],
        "gap": [
            (BLANK, "gap", TENTATIVE),
            (
                r"^(?:During handling of the above exception, another exception occurred"
                r"|The above exception was the direct cause of the following exception):$",
                "chained",
            ),
        ],
        "chained": [(BLANK, "chained", TENTATIVE), (_TRACEBACK, "first"), (_GROUP, "first")],
        # its lines join only with the error's (IndentationError "unexpected indent" has no caret)
        "syntax": [(_SYNTAX_ERROR, END), (r"^\s+\S", "syntax_source", TENTATIVE)],
        "syntax_source": [(_SYNTAX_ERROR, END), (r"^\s*\^+\s*$", "syntax_caret", TENTATIVE)],
        "syntax_caret": [(_SYNTAX_ERROR, END)],
    },
    1,  # "Traceback ...", then a frame
    indented=r'File "|\| ',  # '  File "app.py", line 1', an exception group's "  |   File ..."
)
