"""Rust: panics, with or without a backtrace."""

from __future__ import annotations

from logagent.parsers.traces.shapes import END, Language, message_lines

LANGUAGE = Language(
    [(r"^thread '[^']*'(?: \(\d+\))? panicked at ", "message0")],
    {
        **message_lines(
            "message",
            8,
            # "note: Run with `RUST_BACKTRACE=1` for a backtrace." before Rust 1.30
            [(r"^note: [Rr]un with `RUST_BACKTRACE=", END), (r"^stack backtrace:$", "backtrace")],
        ),
        "backtrace": [
            (r"^\s+\d+:\s+\S", "backtrace"),  # "   0: main", "   0:     0x7ff7d7e8e962 - <unknown>"
            (r"^\s+at \S", "backtrace"),
            (r"^\s+\[\.\.\. omitted \d+ frames? \.\.\.\]$", "backtrace"),
            (r"^note: Some details are omitted", END),
        ],
    },
    0,
    marks=r"thread '",
)
