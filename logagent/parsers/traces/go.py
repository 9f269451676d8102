"""Go: panics and fatal errors with every goroutine's stack, and net/http's panic log line."""

from __future__ import annotations

from logagent.parsers.traces.shapes import BLANK, END, Language, TENTATIVE

LANGUAGE = Language(
    [
        (r"^(?:panic|fatal error): ", "head"),
        # net/http's log line for a handler's panic, its goroutine right after
        (r"http: panic serving \S+: ", "stacks"),
    ],
    {
        "head": [
            (r"^\[signal ", "head"),
            (r"^\s+panic: ", "head"),  # a panic while panicking: "panic: a [recovered]\n\tpanic: b"
            (BLANK, "stacks", TENTATIVE),
        ],
        "stacks": [
            (BLANK, "stacks", TENTATIVE),
            (r"^goroutine \d+ .*:$", "stack"),
            (r"^runtime stack:$", "stack"),
        ],
        "stack": [
            (r"^\t\S", "stack"),  # /app/main.go:12 +0x1d
            (r"^created by \S", "stack"),
            (r"^\S+\(.*\)$", "stack"),  # main.(*Server).Serve(0xc000010000, {0x6b2f40, 0x0})
            (r"^\.\.\.", "stack"),  # ...additional frames elided...
            (BLANK, "gap", TENTATIVE),
            (r"^exit status \d+$", END),
        ],
        "gap": [
            (BLANK, "gap", TENTATIVE),
            (r"^goroutine \d+ .*:$", "stack"),
            (r"^exit status \d+$", END),
        ],
    },
    1,  # "panic: x" or "[signal ...]" then a blank line; "http: panic serving" then "goroutine N"
    marks=r"goroutine \d|\[signal ",
    indented=r"panic: ",
)
