"""PHP: fatal errors with an uncaught exception, PHP 5's form, and previous exceptions."""

from __future__ import annotations

from logagent.parsers.traces.shapes import BLANK, END, Language, TENTATIVE

LANGUAGE = Language(
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
            (BLANK, "gap", TENTATIVE),
        ],
        # a previous exception: a blank line, "Next RuntimeException: outer in ...", its stack
        "gap": [(r"^Next \S+: ", "head")],
    },
    2,  # the header, "Stack trace:", then "#0"
    marks=r"#",
)
