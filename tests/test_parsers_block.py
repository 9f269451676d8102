"""The block fast path (tailer block -> LineParser.feed_block) equals the line path."""

from __future__ import annotations

import pytest

import random

from logagent.event import FileContext
from logagent.files.lines import LineSplitter, has_line_over
from logagent.parsers import LineParser

CTX = FileContext({"file": "/x/0.log"})
TS = "2026-12-02T10:00:00.123456789Z"

ODD_LINES = [
    f"{TS} stdout F hello world",
    f"{TS} stderr F  leading space",
    f"{TS} stdout F ",  # empty message
    f"{TS} stdout F",  # no space before the empty message
    f"{TS} stdout P first half ",
    f"{TS} stdout F second half",
    f"{TS} stderr P é-split ",
    f"{TS} stdout F other stream while stderr is pending",
    f"{TS} stderr F end",
    f"{TS} stdout F:x flags",
    f"{TS} stdout X bad tag",
    f"{TS} stdin F bad stream",
    "2026-12-02 10:00:00.123Z stdout F no T",
    "2026-12-02T10:00:0Z stdout F too short",
    "2026-12-02T10:00:00.1234567890123456789012Z stdout F too long",
    "2026-12-02T10:00:00." + "1" * 20 + "Z stdout F 41 chars: too long",
    "2026-12-02T10:00:00." + "1" * 19 + "Z stdout F 40 chars: the longest",
    "2026-12-02T10:00:00Z stdout F 20 chars: the shortest",
    "2026-12-02T10:00:0Z stdout F 19 chars",
    "2026-12-02T10:00:00.123\x07Z stdout F control char in timestamp",
    "2026-12-02T10:00:00.12ÿZ stdout F non-ascii timestamp",
    f"{TS} stdout F tab\tand\rcarriage",
    f"{TS} stdout F unicode ✓ \u2028 line separator \x85 nel",
    "",
    "garbage",
    '{"log":"docker line\\n","stream":"stdout","time":"2026-12-02T10:00:00Z"}',
]


def reference(lines: list[bytes], cap: int = 32768) -> list[tuple]:
    parser = LineParser(max_merged_line_bytes=cap)
    out = parser.feed(lines) + parser.flush()
    return out + [("counters", parser.malformed, parser.truncated, parser.merged, parser.lines_in)]


def via_blocks(blocks: list[bytes], cap: int = 32768) -> list[tuple]:
    parser = LineParser(max_merged_line_bytes=cap)
    out: list[tuple] = []
    for block in blocks:
        events = parser.feed_block(block, CTX)
        if events is None:
            out += parser.feed(block.split(b"\n"))
        else:
            assert all(e.ctx is CTX for e in events)
            out += [(e.message, e.stream, e.timestamp, e.truncated) for e in events]
    out += parser.flush()
    return out + [("counters", parser.malformed, parser.truncated, parser.merged, parser.lines_in)]


def test_every_odd_line_matches_the_line_path_in_any_block_split() -> None:
    rng = random.Random(7)
    for _ in range(300):
        lines = [f"{TS} stdout F warm-up".encode()] + [rng.choice(ODD_LINES).encode() for _ in range(rng.randint(1, 30))]
        cuts = sorted(rng.sample(range(1, len(lines)), rng.randint(0, min(4, len(lines) - 1))))
        blocks = [b"\n".join(lines[a:b]) for a, b in zip([0] + cuts, cuts + [len(lines)])]
        assert via_blocks(blocks) == reference(lines), lines


def test_block_path_is_taken_for_common_lines_and_streams_are_shared() -> None:
    parser = LineParser()
    parser.feed([f"{TS} stdout F first".encode()])
    events = parser.feed_block(f"{TS} stdout F a b\n{TS} stderr F c".encode(), CTX)
    assert events is not None
    assert [(e.message, e.stream, e.timestamp) for e in events] == [("a b", "stdout", TS), ("c", "stderr", TS)]
    assert events[0].stream is "stdout" and events[1].stream is "stderr"  # noqa: F632 - the interned objects


def test_invalid_utf8_and_fragments_splitting_a_character_take_the_bytes_path() -> None:
    euro = "€".encode()
    lines = [
        f"{TS} stdout F ok".encode(),
        f"{TS} stdout P ".encode() + euro[:1],
        f"{TS} stdout F ".encode() + euro[1:] + b" rest",
        f"{TS} stderr F bad \xff byte".encode("latin-1"),
    ]
    parser = LineParser()
    parser.feed(lines[:1])
    assert parser.feed_block(b"\n".join(lines[1:]), CTX) is None
    assert via_blocks([lines[0], b"\n".join(lines[1:])]) == reference(lines)
    assert reference(lines)[1][0] == "€ rest"
    assert reference(lines)[2][0] == "bad \ufffd byte"


def test_lines_over_the_merge_cap_take_the_line_path() -> None:
    long = f"{TS} stdout F ".encode() + b"x" * 200
    lines = [f"{TS} stdout F ok".encode(), long, f"{TS} stdout F after".encode()]
    parser = LineParser(max_merged_line_bytes=100)
    parser.feed(lines[:1])
    assert parser.feed_block(b"\n".join(lines[1:]), CTX) is None
    assert via_blocks([lines[0], b"\n".join(lines[1:])], cap=100) == reference(lines, cap=100)


def test_docker_files_never_take_the_block_path() -> None:
    parser = LineParser()
    line = b'{"log":"a\\n","stream":"stdout","time":"2026-12-02T10:00:00Z"}'
    parser.feed([line])
    assert parser.feed_block(line, CTX) is None


def test_line_splitter_block_equals_split_lines() -> None:
    rng = random.Random(3)
    data = b"".join(rng.choice([b"a", b"bb", b"\n", b"ccc ", b"\xc3\xa9"]) for _ in range(5000))
    by_lines, by_block = LineSplitter(64), LineSplitter(64)
    got_lines: list[bytes] = []
    got_block: list[bytes] = []
    pos = 0
    while pos < len(data):
        step = rng.randint(1, 300)
        piece = data[pos : pos + step]
        pos += step
        got_lines += by_lines.feed(piece)[0]
        block = by_block.feed_block(piece)
        got_block += block.split(b"\n") if block is not None else by_block.feed(piece)[0]
        assert by_lines.pending == by_block.pending
    assert got_block == got_lines


def test_line_splitter_block_refuses_long_lines_and_skipped_rests() -> None:
    splitter = LineSplitter(8)
    assert splitter.feed_block(b"12345678\n123456789\nab") is None  # a line over the limit
    assert splitter.pending == b""
    assert splitter.feed_block(b"no newline") is None
    lines, cut = splitter.feed(b"0123456789abc")  # cut; the rest is skipped
    assert cut == [0] and splitter.skipping
    assert splitter.feed_block(b"rest\nnext\n") is None
    assert splitter.feed(b"rest\nnext\n")[0] == [b"next"]
    splitter = LineSplitter(8)
    assert splitter.feed_block(b"ab\n12345") == b"ab"
    assert splitter.feed_block(b"6789\nx\n") is None  # pending + its rest: 9 bytes, over the limit
    assert splitter.pending == b"12345"  # nothing consumed
    splitter = LineSplitter(8)
    assert splitter.feed_block(b"ab\n1234") == b"ab"
    assert splitter.feed_block(b"5678\nxy\nz") == b"12345678\nxy"  # exactly the limit
    assert splitter.pending == b"z"


def test_has_line_over() -> None:
    assert not has_line_over(b"", 0, 4)
    assert not has_line_over(b"1234\n1234\n1234", 14, 4)
    assert has_line_over(b"1234\n12345\n1234", 15, 4)
    assert has_line_over(b"12345", 5, 4)
    assert not has_line_over(b"1234\n" * 100, 499, 4)
    assert has_line_over(b"1234\n" * 100 + b"12345", 505, 4)


def test_marked_records_are_listed_whatever_order_their_timestamps_are_in() -> None:
    # the marked records' indexes are looked for by bisection on the timestamps first: lines whose
    # timestamps repeat, go back or have trailing zeros trimmed (RFC 3339 nano) must be listed all the same
    rng = random.Random(11)
    stamps = ["2026-12-02T10:00:00.1Z", "2026-12-02T10:00:00.12Z", "2026-12-02T10:00:00.123456789Z",
              "2026-12-02T10:00:01Z", "2026-12-02T09:59:59.9Z"]
    messages = ["plain", "    at x.y(Z.java:1)", "", "  indented, not a frame", "#0 main"]
    marks = r"[^\S\n]++(?:$|at \S)|$|#"
    for _ in range(200):
        texts = [rng.choice(messages) for _ in range(rng.randint(1, 60))]
        lines = [f"{rng.choice(stamps)} {rng.choice(['stdout', 'stderr'])} F {text}" for text in texts]
        parser = LineParser()
        parser.count_indented, parser.marks = True, marks
        parser.feed([f"{TS} stdout F warm-up".encode()])
        events = parser.feed_block("\n".join(lines).encode(), CTX)
        assert events is not None
        expected = [i for i, text in enumerate(texts) if text and text[0] in " #" and "indented" not in text or not text]
        assert parser.indented == expected, lines


def test_the_marked_block_regex_holds_exactly_the_marked_messages() -> None:
    # its class spells whitespace out instead of "\s": every character must land where "\s" puts it
    from logagent.parsers.line_parser import _plain_line_regex

    marks = r"[^\S\n]++(?:$|at \S)|$|#|\^|thread '|goroutine \d"
    regex = _plain_line_regex(marks)
    assert regex is not None
    for code in [*range(0x3100), 0xFEFF, 0x10FFFF]:
        char = chr(code)
        if char == "\n":
            continue
        for rest, marked in (("at x", char.isspace() or char in "#^"), ("x", char in "#^")):
            found = regex.findall(f"{TS} stdout F {char}{rest}")
            assert len(found) == 1
            assert (found[0][2] != f"{char}{rest}") is marked, (hex(code), rest)


@pytest.mark.parametrize(
    ("message", "held"),
    [("thread 'main' panicked at src/main.rs:2:5:", True), ("goroutine 1 [running]:", True),
     ("time=2026-12-06T10:00:00Z level=info msg=ok", False), ("thread pool resized to 8", False),
     ("goroutines: 12", False), ("go 1.22", False), ("t", False), ("", True), ("  at x", True),
     ("  x", False), ("    \"key\": 1,", False), ("#0 main", True), ("# a comment", True)],
)
def test_a_mark_that_begins_with_a_letter_holds_only_the_lines_it_matches(message: str, held: bool) -> None:
    # a log line that merely begins with the letter ("time=...") is not held: holding costs it ~2,400
    # instructions (measured with callgrind), and the parser's result is the same either way
    from logagent.parsers.line_parser import _plain_line_regex

    regex = _plain_line_regex(r"[^\S\n]++(?:$|at \S)|$|#|\^|thread '|goroutine \d")
    assert regex is not None
    (found,) = regex.findall(f"{TS} stdout F {message}")
    assert (found[2] != message or message == "") is held, found
