"""Go: panics and fatal errors with every goroutine's stack, net/http's panic log line, the runtime's dump
on a fatal signal (``SIGQUIT: quit``, ``PC=...``, the goroutines, the registers), and a dump of goroutines
printed without a panic."""

from __future__ import annotations

from logagent.parsers.traces.shapes import BLANK, END, Language, TENTATIVE

_GOROUTINE = r"^goroutine \d+ .*:$"
_EXIT = r"^exit status \d+$"
#: a register's line of the dump after a fatal signal's goroutines, its name padded: "rax    0xca",
#: "rflags 0x286", "gs     0x0" (amd64), "r28     0x0", "fault   0x0" (arm64), "eip    0x8049f3c" (386)
_REGISTER = r"^[a-z][a-z0-9]* +0x[0-9a-f]+$"


def _stack(name: str, gap: str) -> list[tuple[str, ...]]:
    """A goroutine's lines (state ``name``), a blank line after it leading to ``gap``."""
    return [
        (r"^\t\S", name),  # /app/main.go:12 +0x1d
        (r"^created by \S", name),
        (r"^\S+\(.*\)$", name),  # main.(*Server).Serve(0xc000010000, {0x6b2f40, 0x0})
        (r"^\.\.\.", name),  # ...additional frames elided...
        (BLANK, gap, TENTATIVE),
        (_EXIT, END),
    ]


LANGUAGE = Language(
    [
        (r"^(?:panic|fatal error): ", "head"),
        # net/http's log line for a handler's panic, its goroutine right after
        (r"http: panic serving \S+: ", "stacks"),
        # a fatal signal, named as the runtime's table of signals names it ("SIGQUIT: quit", "SIGABRT: abort",
        # "SIGSEGV: segmentation violation"), "PC=0x45c3d1 m=0 sigcode=0", perhaps "signal arrived during cgo
        # execution", a blank line, the goroutines
        (r"^SIG[A-Z0-9]+: [a-z][\w -]*$", "signal", 3),
        # a dump without a panic: the goroutines runtime.Stack(buf, true) or debug.Stack() return, printed by the
        # program or served by a debug handler ("goroutine 18 [running]:", "goroutine 7 [chan receive, 957
        # minutes]:", with GOTRACEBACK=system "goroutine 1 gp=0xc000002380 m=0 mp=0x8a1b20 [running]:")
        (r"^goroutine \d+ (?:\S+ )*\[[^\]]+\]:$", "stack", 0),
    ],
    {
        "head": [
            (r"^\[signal ", "head"),
            (r"^\s+panic: ", "head"),  # a panic while panicking: "panic: a [recovered]\n\tpanic: b"
            (BLANK, "stacks", TENTATIVE),
        ],
        "stacks": [
            (BLANK, "stacks", TENTATIVE),
            (_GOROUTINE, "stack"),
            (r"^runtime stack:$", "stack"),
        ],
        "stack": _stack("stack", "gap"),
        "gap": [(BLANK, "gap", TENTATIVE), (_GOROUTINE, "stack"), (_EXIT, END)],
        # the signal's lines join only with the goroutine after them
        "signal": [(r"^PC=0x[0-9a-f]+ m=\d+ sigcode=", "signal_pc", TENTATIVE)],
        "signal_pc": [
            (r"^(?:signal arrived during cgo execution|instruction bytes:.*)$", "signal_pc", TENTATIVE),
            (BLANK, "signal_stacks", TENTATIVE),
        ],
        "signal_stacks": [(BLANK, "signal_stacks", TENTATIVE), (_GOROUTINE, "signal_stack")],
        "signal_stack": _stack("signal_stack", "signal_gap"),
        # after a goroutine of the dump: the next one, or the registers
        "signal_gap": [
            (BLANK, "signal_gap", TENTATIVE),
            (_GOROUTINE, "signal_stack"),
            (_REGISTER, "registers"),
            (_EXIT, END),
        ],
        "registers": [(_REGISTER, "registers"), (_EXIT, END)],
    },
    1,  # "panic: x" or "[signal ...]" then a blank line; "http: panic serving" then "goroutine N"
    marks=r"goroutine \d|\[signal ",
    indented=r"panic: ",
)
