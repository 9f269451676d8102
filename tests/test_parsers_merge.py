"""Partial-line merging: per stream, across feed calls, capped, flushed."""

from __future__ import annotations

from logagent.parsers import LineParser
from tests.test_parsers_support import TS as TS_
from tests.test_parsers_support import chunks, cri, docker, time_limit, ts  # noqa: F401

FRAGMENT = 16 * 1024  # containerd's and Docker's split size


def test_cri_partials_merge_with_first_fragment_timestamp() -> None:
    parser = LineParser()
    records = parser.feed([cri("he", tag="P", timestamp=ts(1)), cri("ll", tag="P", timestamp=ts(2)), cri("o", timestamp=ts(3))])
    assert records == [("hello", "stdout", ts(1), False)]
    assert (parser.merged, parser.pending_bytes()) == (1, 0)


def test_partial_split_across_two_feed_calls() -> None:
    parser = LineParser()
    assert parser.feed([cri("full"), cri("first half ", tag="P", timestamp=ts(1))]) == [("full", "stdout", TS_, False)]
    assert parser.pending_bytes() == len(b"first half ")
    assert parser.feed([cri("second half", timestamp=ts(2)), cri("next")]) == [
        ("first half second half", "stdout", ts(1), False),
        ("next", "stdout", TS_, False),
    ]
    assert parser.pending_bytes() == 0



def test_streams_never_mix() -> None:
    parser = LineParser()
    records = parser.feed(
        [
            cri("out-1 ", "stdout", "P", ts(1)),
            cri("err-whole", "stderr", "F", ts(2)),
            cri("out-2", "stdout", "F", ts(3)),
        ]
    )
    assert records == [("err-whole", "stderr", ts(2), False), ("out-1 out-2", "stdout", ts(1), False)]


def test_both_streams_partial_at_once() -> None:
    parser = LineParser()
    records = parser.feed(
        [
            cri("o1", "stdout", "P", ts(1)),
            cri("e1", "stderr", "P", ts(2)),
            cri("o2", "stdout", "P", ts(3)),
            cri("e2", "stderr", "F", ts(4)),
        ]
    )
    assert records == [("e1e2", "stderr", ts(2), False)]
    assert parser.pending_bytes() == 4
    assert parser.feed([cri("o3", "stdout", "F", ts(5))]) == [("o1o2o3", "stdout", ts(1), False)]
    assert parser.merged == 2


def test_utf8_character_split_between_fragments_is_rejoined() -> None:
    encoded = "caf\u00e9 \u20ac".encode()
    cut = encoded.index(b"\xe2\x82\xac") + 1  # inside the euro sign
    parser = LineParser()
    records = parser.feed([cri(encoded[:cut], tag="P"), cri(encoded[cut:])])
    assert records == [("caf\u00e9 \u20ac", "stdout", TS_, False)]


def test_docker_chunks_merge() -> None:
    parser = LineParser()
    records = parser.feed(
        [
            docker("chunk-1 ", time=ts(1)),
            docker("other\n", "stderr", ts(2)),
            docker("chunk-2 ", time=ts(3)),
        ]
    )
    assert records == [("other", "stderr", ts(2), False)]
    assert parser.feed([docker("end\n", time=ts(4))]) == [("chunk-1 chunk-2 end", "stdout", ts(1), False)]
    assert parser.merged == 1


def test_auto_partial_merge_disabled_emits_every_fragment() -> None:
    parser = LineParser(auto_partial_merge=False)
    records = parser.feed([cri("a", tag="P", timestamp=ts(1)), cri("b", tag="P", timestamp=ts(2)), cri("c", timestamp=ts(3))])
    assert records == [("a", "stdout", ts(1), False), ("b", "stdout", ts(2), False), ("c", "stdout", ts(3), False)]
    assert (parser.merged, parser.pending_bytes()) == (0, 0)

    parser = LineParser(auto_partial_merge=False)
    assert parser.feed([docker("x"), docker("y\n")]) == [("x", "stdout", TS_, False), ("y", "stdout", TS_, False)]


def test_flush_emits_dangling_partials() -> None:
    parser = LineParser()
    assert parser.feed([cri("out ", "stdout", "P", ts(1)), cri("err", "stderr", "P", ts(2)), cri("more", "stdout", "P", ts(3))]) == []
    assert parser.pending_bytes() == len(b"out err") + len(b"more")
    assert parser.flush() == [("out more", "stdout", ts(1), False), ("err", "stderr", ts(2), False)]
    assert parser.pending_bytes() == 0
    assert parser.flush() == []
    # a fragment after a flush starts a new line
    assert parser.feed([cri("fresh", "stdout", "F", ts(4))]) == [("fresh", "stdout", ts(4), False)]


def test_malformed_line_does_not_disturb_pending_merge() -> None:
    parser = LineParser()
    records = parser.feed([cri("a", tag="P"), b"garbage", cri("b")])
    assert records == [("garbage", None, None, False), ("ab", "stdout", TS_, False)]
    assert parser.malformed == 1


def test_huge_logical_line_is_truncated_with_bounded_memory() -> None:
    cap = 32768
    text = "\u20ac" * (10 * 1024 * 1024 // 3)  # ~10 MiB of 3-byte characters
    data = text.encode()
    fragments = chunks(data, FRAGMENT)  # 16 KiB splits fall inside characters
    lines = [cri(fragment, tag="P") for fragment in fragments[:-1]] + [cri(fragments[-1])]
    parser = LineParser(max_merged_line_bytes=cap)
    records = []
    for batch_start in range(0, len(lines), 50):
        records += parser.feed(lines[batch_start : batch_start + 50] + [cri("small", "stderr")])
        assert parser.pending_bytes() <= cap
    big = [record for record in records if record[1] == "stdout"]
    assert len(big) == 1
    message, stream, timestamp, truncated = big[0]
    assert truncated is True
    # cut at the last whole character that fits: 32768 // 3 characters, no U+FFFD
    assert message == "\u20ac" * (cap // 3)
    assert len(message.encode()) <= cap
    assert [record[0] for record in records if record[1] == "stderr"] == ["small"] * len(range(0, len(lines), 50))
    assert (parser.truncated, parser.merged, parser.pending_bytes()) == (1, 1, 0)
    # the next line is independent of the discarded rest
    assert parser.feed([cri("after")]) == [("after", "stdout", TS_, False)]


def test_docker_huge_line_truncated() -> None:
    cap = 1000
    pieces = ["x" * 400] * 10
    lines = [docker(piece) for piece in pieces] + [docker("tail\n")]
    parser = LineParser(max_merged_line_bytes=cap)
    records = []
    for line in lines:
        records += parser.feed([line])
        assert parser.pending_bytes() <= cap
    assert records == [("x" * cap, "stdout", TS_, True)]
    assert parser.truncated == 1


def test_merged_line_exactly_at_cap_is_not_truncated() -> None:
    parser = LineParser(max_merged_line_bytes=6)
    assert parser.feed([cri("abc", tag="P"), cri("def", tag="P"), cri("")]) == [("abcdef", "stdout", TS_, False)]
    assert parser.truncated == 0


def test_single_line_over_cap_is_truncated_at_character_boundary() -> None:
    parser = LineParser(max_merged_line_bytes=5)
    records = parser.feed([cri("ab\u20acd"), cri("abcd")])  # 6 bytes, the euro sign ends at byte 5
    assert records == [("ab\u20ac", "stdout", TS_, True), ("abcd", "stdout", TS_, False)]
    parser = LineParser(max_merged_line_bytes=4)
    assert parser.feed([docker("ab\u20acd\n")]) == [("ab", "stdout", TS_, True)]
    assert parser.truncated == 1


def test_cap_applies_to_each_fragment_when_merge_disabled() -> None:
    parser = LineParser(auto_partial_merge=False, max_merged_line_bytes=3)
    assert parser.feed([cri("abcdef", tag="P"), cri("gh")]) == [("abc", "stdout", TS_, True), ("gh", "stdout", TS_, False)]


def test_flush_of_truncated_partial_keeps_flag() -> None:
    parser = LineParser(max_merged_line_bytes=4)
    parser.feed([cri("abcdef", tag="P"), cri("ghi", tag="P")])
    assert parser.pending_bytes() == 4
    assert parser.flush() == [("abcd", "stdout", TS_, True)]
    assert parser.truncated == 1


def test_tailer_cut_fragment_flags_the_merged_record() -> None:
    parser = LineParser()
    records = parser.feed([cri("a", tag="P"), cri("b-cut", tag="P"), cri("c")], truncated=frozenset({1}))
    assert records == [("ab-cutc", "stdout", TS_, True)]
    assert parser.truncated == 1


def test_tailer_cut_index_is_relative_to_each_call() -> None:
    parser = LineParser()
    assert parser.feed([cri("one")], truncated=frozenset()) == [("one", "stdout", TS_, False)]
    assert parser.feed([cri("two"), cri("three")], truncated=frozenset({0})) == [
        ("two", "stdout", TS_, True),
        ("three", "stdout", TS_, False),
    ]


def _capped(whole: bytes, stream: str, timestamp: str, cap: int) -> tuple[str, str, str, bool]:
    kept = whole[:cap]
    while kept and len(kept) < len(whole) and whole[len(kept)] & 0xC0 == 0x80:
        kept = kept[:-1]  # do not end inside a character
    return kept.decode("utf-8", "replace"), stream, timestamp, len(whole) > cap


def _reference(fragments: list[tuple[str, str, bool, bytes]], cap: int) -> list[tuple[str, str, str, bool]]:
    """The obvious model: join each stream's fragments, emit at the final one
    (or at the end, in the order the lines began), cap the joined message."""
    open_lines: dict[str, tuple[str, list[bytes]]] = {}
    records = []
    for stream, timestamp, partial, message in fragments:
        first_ts, parts = open_lines.setdefault(stream, (timestamp, []))
        parts.append(message)
        if not partial:
            del open_lines[stream]
            records.append(_capped(b"".join(parts), stream, first_ts, cap))
    for stream, (first_ts, parts) in open_lines.items():
        records.append(_capped(b"".join(parts), stream, first_ts, cap))
    return records


def test_random_fragments_match_reference_model() -> None:
    import random

    rng = random.Random(20260101)
    alphabet = "ab \u00e9\u20ac\U0001f600"
    for case in range(300):
        cap = rng.choice([5, 16, 64, 32768])
        use_docker = case % 2 == 1
        fragments = []
        for n in range(rng.randint(1, 40)):
            stream = rng.choice(["stdout", "stderr"])
            data = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))).encode()
            if not use_docker and rng.random() < 0.3:
                data = data[: rng.randint(0, len(data))]  # a runtime splits at any byte
            fragments.append((stream, ts(n), rng.random() < 0.4, data))
        if use_docker:
            lines = [docker(m.decode() + ("" if p else "\n"), s, t) for s, t, p, m in fragments]
        else:
            lines = [cri(m, s, "P" if p else "F", t) for s, t, p, m in fragments]
        parser = LineParser(max_merged_line_bytes=cap)
        got = []
        position = 0
        while position < len(lines):
            step = rng.randint(1, 8)
            got += parser.feed(lines[position : position + step])
            position += step
            assert parser.pending_bytes() <= 2 * cap  # one open line per stream
        got += parser.flush()
        assert got == _reference(fragments, cap), f"case {case}"
        assert parser.malformed == 0
