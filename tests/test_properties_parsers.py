"""Properties of the CRI and Docker line parsers with partial-line merging, on generated input.

Invariants, not examples: no exception escapes; every input line is
accounted for exactly once (a record of its own, merged into one, or
counted as malformed); a merged record's message is the exact
concatenation of its fragments (cut at the cap, and then flagged
truncated); how the lines are cut into feeds, or whether a block goes
through ``feed_block``, changes nothing.
"""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from logagent.event import FileContext
from logagent.parsers import LineParser

TS = "2026-12-02T10:00:00.000000001Z"
STREAMS = ("stdout", "stderr")

#: message text: anything but a line break (a runtime splits lines there), often empty or short
text = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=40)
#: a line that is neither CRI nor Docker (no space, does not begin like JSON)
garbage = st.text(st.characters(whitelist_categories=("Ll", "Nd")), min_size=1, max_size=20).map(lambda s: "x" + s)

#: ("fragment", stream, message, partial) or ("garbage", line)
line_op = st.one_of(
    st.tuples(st.just("fragment"), st.sampled_from(STREAMS), text, st.booleans()),
    st.tuples(st.just("garbage"), garbage),
)


def cri_line(op: tuple) -> bytes:
    if op[0] == "garbage":
        return op[1].encode()
    _, stream, message, partial = op
    return f"{TS} {stream} {'P' if partial else 'F'} {message}".encode()


def docker_line(op: tuple) -> bytes:
    if op[0] == "garbage":
        return op[1].encode()
    _, stream, message, partial = op
    return msgspec.json.encode({"log": message if partial else message + "\n", "stream": stream, "time": TS})


def expected_records(ops: list[tuple]) -> tuple[list[tuple[str, str | None]], int]:
    """The reference: (message, stream) of each record in completion order, and the malformed count.

    Fragments merge per stream until a full one; what is unfinished at the end is flushed.
    """
    out: list[tuple[str, str | None]] = []
    pending: dict[str, list[str]] = {}
    malformed = 0
    for op in ops:
        if op[0] == "garbage":
            malformed += 1
            out.append((op[1], None))
            continue
        _, stream, message, partial = op
        pending.setdefault(stream, []).append(message)
        if not partial:
            out.append(("".join(pending.pop(stream)), stream))
    out += [("".join(parts), stream) for stream, parts in pending.items()]
    return out, malformed


def run_parser(lines: list[bytes], cuts: list[int], *, cap: int = 1 << 20, blocks: bool = False) -> tuple:
    """Feed ``lines`` in pieces cut at ``cuts``; the records (as tuples) and the parser."""
    parser = LineParser(max_merged_line_bytes=cap)
    ctx = FileContext({"file": "f"})
    records: list[tuple] = []
    bounds = sorted({0, len(lines), *(c % (len(lines) + 1) for c in cuts)})
    for start, end in zip(bounds, bounds[1:]):
        piece = lines[start:end]
        events = parser.feed_block(b"\n".join(piece), ctx) if blocks and piece else None
        if events is not None:
            records += [(e.message, e.stream, e.timestamp, e.truncated) for e in events]
        else:
            records += parser.feed(piece)
    records += parser.flush()
    return records, parser


@given(st.lists(line_op, max_size=40), st.lists(st.integers(0, 40), max_size=5), st.booleans())
def test_cri_every_line_is_accounted_for_and_merged_exactly(ops: list[tuple], cuts: list[int], blocks: bool) -> None:
    lines = [cri_line(op) for op in ops]
    records, parser = run_parser(lines, cuts, blocks=blocks)
    expected, malformed = expected_records(ops)
    assert [(message, stream) for message, stream, _, _ in records] == expected
    assert parser.lines_in == len(lines)
    assert parser.malformed == malformed
    assert not any(truncated for *_, truncated in records)
    assert all(ts == TS for _, stream, ts, _ in records if stream is not None)


@given(st.lists(line_op, max_size=40), st.lists(st.integers(0, 40), max_size=5))
def test_docker_every_line_is_accounted_for_and_merged_exactly(ops: list[tuple], cuts: list[int]) -> None:
    lines = [docker_line(op) for op in ops]
    records, parser = run_parser(lines, cuts)
    expected, malformed = expected_records(ops)
    assert [(message, stream) for message, stream, _, _ in records] == expected
    assert parser.lines_in == len(lines)
    assert parser.malformed == malformed


@given(st.lists(line_op, max_size=30), st.integers(1, 64), st.booleans(), st.sampled_from([cri_line, docker_line]))
def test_a_record_over_the_cap_is_a_truncated_prefix(ops: list[tuple], cap: int, blocks: bool, make) -> None:  # type: ignore[no-untyped-def]
    lines = [make(op) for op in ops]
    records, parser = run_parser(lines, [], cap=cap, blocks=blocks)
    expected, _ = expected_records(ops)
    assert len(records) == len(expected)
    for (message, stream, _, truncated), (full, full_stream) in zip(records, expected):
        assert stream == full_stream
        if stream is None:  # malformed: passed on whole
            assert message == full
            continue
        data, whole = message.encode(), full.encode()
        assert whole.startswith(data)
        assert truncated == (len(whole) > cap)
        if truncated:
            assert cap - 3 <= len(data) <= cap  # cut at the cap, at a character boundary
    assert parser.truncated == sum(1 for record in records if record[3])


@given(st.lists(st.binary(max_size=60), max_size=30), st.lists(st.integers(0, 30), max_size=4),
       st.integers(1, 100), st.booleans())
def test_arbitrary_bytes_never_raise_and_every_line_is_counted(lines: list[bytes], cuts: list[int], cap: int,
                                                               blocks: bool) -> None:
    lines = [line.replace(b"\n", b" ") for line in lines]
    records, parser = run_parser(lines, cuts, cap=cap, blocks=blocks)
    assert parser.lines_in == len(lines)
    malformed = [record for record in records if record[1] is None]
    assert len(malformed) == parser.malformed
    # every line is a record of its own, a fragment of one, or malformed: never more records than lines
    assert len(records) <= len(lines)


@given(st.lists(line_op, max_size=40), st.lists(st.integers(0, 40), max_size=5))
def test_feed_block_and_feed_agree(ops: list[tuple], cuts: list[int]) -> None:
    lines = [cri_line(op) for op in ops]
    by_block, _ = run_parser(lines, cuts, blocks=True)
    by_lines, _ = run_parser(lines, cuts, blocks=False)
    assert by_block == by_lines
