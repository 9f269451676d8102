"""Real traces (tests/fixtures/traces/real/, sources in its SOURCES.md): each one record, in every arrangement.

Per language at least five traces, printed by the runtimes themselves, taken
from the test suite of fluent-plugin-detect-exceptions, or from public reports (cited). Each is fed between
ordinary lines and three times back to back, in batches of several sizes, and
as CRI lines split into partial fragments; ``auto`` and the language's own
detector must give each copy as exactly one record and every other line as
itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logagent.event import FileContext, LogEvent
from logagent.parsers.line_parser import LineParser
from logagent.parsers.multiline import MultilineGrouper, MultilineStats
from logagent.parsers.multiline_rules import AUTO, language_machine

REAL = Path(__file__).parent / "fixtures" / "traces" / "real"
CTX = FileContext({"file": "/var/log/pods/x/app/0.log"})

#: file name prefix -> the detector that must recognise the trace alone
PREFIXES = {
    "java": "java", "detect_java": "java", "detect_complex_java": "java", "detect_nested_java": "java",
    "python": "python", "detect_python": "python",
    "go": "go", "detect_go": "go",
    "ruby": "ruby", "detect_ruby": "ruby", "detect_rails": "ruby",
    "node": "javascript", "detect_node": "javascript", "detect_v8": "javascript", "detect_client_js": "javascript",
    "php": "php", "detect_php": "php",
    "detect_csharp": "dotnet", "dotnet": "dotnet",
    "detect_dart": "dart", "dart": "dart", "ruby18": "ruby", "ruby25": "ruby",
    "rust": "rust",
}
ORDINARY = ["GET /api/items 200 12ms", 'level=info msg="cache warm" took=3ms', "worker started"]


def language_of(name: str) -> str:
    return next(PREFIXES[p] for p in sorted(PREFIXES, key=len, reverse=True) if name.startswith(p + "_"))


TRACES = sorted(path.name for path in REAL.glob("*.txt"))


def trace(name: str) -> list[str]:
    return (REAL / name).read_text().split("\n")[:-1]


def grouped(machine, messages: list[str], batch: int | None = None) -> list[str]:
    g = MultilineGrouper(machine, MultilineStats())
    evs = [LogEvent(m, "stderr", f"t{i}", CTX) for i, m in enumerate(messages)]
    out: list[LogEvent] = []
    step = batch or len(evs)
    for start in range(0, len(evs), step):
        out += g.feed(evs[start:start + step], CTX, 0.0)
    return [e.message for e in out + g.flush(CTX)]


def test_at_least_five_real_traces_per_language() -> None:
    counts: dict[str, int] = {}
    for name in TRACES:
        counts[language_of(name)] = counts.get(language_of(name), 0) + 1
    assert set(counts) == {"java", "python", "go", "ruby", "javascript", "php", "dotnet", "dart", "rust"}
    assert all(count >= 5 for count in counts.values()), counts


@pytest.mark.parametrize("name", TRACES)
@pytest.mark.parametrize("detector", ["auto", "own"])
def test_real_trace_between_lines_and_back_to_back(name: str, detector: str) -> None:
    machine = language_machine(AUTO if detector == "auto" else [language_of(name)])
    lines = trace(name)
    text = "\n".join(lines)
    messages = [*ORDINARY, *lines, ORDINARY[0], *lines, *lines, *lines, ORDINARY[1]]
    for batch in (None, 1, 2, 5):
        assert grouped(machine, messages, batch) == [*ORDINARY, text, ORDINARY[0], text, text, text, ORDINARY[1]], batch


#: ordinary lines that name an error mid-sentence, as the benchmark's and the corpus's do
MENTIONS = ["retrying upstream call after Error: connection reset by peer", "cache miss (Exception count: 0)"]


@pytest.mark.parametrize("name", TRACES)
def test_real_trace_right_after_a_line_that_mentions_an_error(name: str) -> None:
    """The line before stays itself: a Java header's message never takes a line that begins a trace."""
    lines = trace(name)
    text = "\n".join(lines)
    for mention in MENTIONS:
        messages = [mention, *lines, mention, *lines, *lines]
        assert grouped(language_machine(AUTO), messages) == [mention, text, mention, text, text], mention


@pytest.mark.parametrize("name", TRACES)
def test_real_trace_split_across_cri_partial_lines(name: str) -> None:
    """Every line of the trace written as P fragments and an F rest, then the whole file through the parser."""
    lines = trace(name)
    cri: list[bytes] = []
    for i, line in enumerate([ORDINARY[0], *lines, *lines, ORDINARY[1]]):
        ts = b"2026-12-02T10:00:00.%09dZ stderr " % i
        data = line.encode()
        third = max(len(data) // 3, 1)
        if len(data) > 2:
            cri += [ts + b"P " + data[:third], ts + b"P " + data[third:2 * third], ts + b"F " + data[2 * third:]]
        else:
            cri.append(ts + b"F " + data)
    machine = language_machine(AUTO)
    text = "\n".join(lines)
    for fast in (False, True):
        parser = LineParser()
        parser.count_indented, parser.marks = True, machine.marks
        # the first line fixes the format; the rest through the block path (marked lines listed) or per line
        events = [LogEvent(m, s, t, CTX, c) for m, s, t, c in parser.feed(cri[:1])]
        rest = parser.feed_block(b"\n".join(cri[1:]), CTX) if fast else None
        indented = parser.indented if rest is not None else None
        if rest is None:
            rest = [LogEvent(m, s, t, CTX, c) for m, s, t, c in parser.feed(cri[1:])]
        g = MultilineGrouper(machine, MultilineStats())
        out = g.feed(events, CTX, 0.0) + g.feed(rest, CTX, 0.0, indented=indented) + g.flush(CTX)
        assert [e.message for e in out] == [ORDINARY[0], text, text, ORDINARY[1]], fast
