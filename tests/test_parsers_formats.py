"""Single-line parsing of both formats, format detection, malformed input."""

from __future__ import annotations

import pytest

from logagent.parsers import LineParser, parse_cri, parse_docker
from tests.test_parsers_support import TS, cri, docker, time_limit  # noqa: F401

# -- CRI ------------------------------------------------------------------------


def test_cri_full_line() -> None:
    assert parse_cri(cri("hello  world ", "stderr")) == (TS, "stderr", False, b"hello  world ")


def test_cri_partial_line() -> None:
    assert parse_cri(cri("part", tag="P")) == (TS, "stdout", True, b"part")


@pytest.mark.parametrize(
    "line",
    [f"{TS} stdout F ".encode(), f"{TS} stdout F".encode()],
    ids=["trailing-space", "no-trailing-space"],
)
def test_cri_empty_message(line: bytes) -> None:
    assert parse_cri(line) == (TS, "stdout", False, b"")
    assert LineParser().feed([line]) == [("", "stdout", TS, False)]


@pytest.mark.parametrize(("tag", "partial"), [("F:x", False), ("P:a:b", True), ("F:", False)])
def test_cri_tag_with_extra_flags(tag: str, partial: bool) -> None:
    assert parse_cri(cri("m", tag=tag)) == (TS, "stdout", partial, b"m")


@pytest.mark.parametrize(
    "timestamp",
    ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5+02:00", "2026-01-01T00:00:00.123456789-07:00"],
)
def test_cri_timestamp_kept_as_written(timestamp: str) -> None:
    assert LineParser().feed([cri("m", timestamp=timestamp)]) == [("m", "stdout", timestamp, False)]


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"just some text",
        b"2026-01-01T00:00:00Z stdout",  # no tag
        cri("m", stream="stdin"),
        cri("m", tag="X"),
        cri("m", tag="FP"),
        cri("m", tag=""),
        cri("m", timestamp="yesterday-at-noon-ish"),
        cri("m", timestamp="2026/01/01 00:00:00.000Z"),
        cri("m", timestamp="2026-01-01T00:00:00." + "1" * 40 + "Z"),  # too long
        cri("m", timestamp="2026-01-01T00:00:0\u00e9Z"),  # non-ASCII
        docker("a docker line\n"),
    ],
)
def test_cri_rejects(line: bytes) -> None:
    assert parse_cri(line) is None


def test_cri_keeps_carriage_return_and_replaces_invalid_utf8() -> None:
    parser = LineParser()
    records = parser.feed([cri(b"dos line\r"), cri(b"bad \xff\xfe bytes")])
    assert records == [
        ("dos line\r", "stdout", TS, False),
        ("bad \ufffd\ufffd bytes", "stdout", TS, False),
    ]
    assert parser.malformed == 0


# -- Docker ----------------------------------------------------------------------


def test_docker_full_line_strips_exactly_one_newline() -> None:
    assert parse_docker(docker("hello\n", "stderr")) == (TS, "stderr", False, "hello")
    assert parse_docker(docker("two\n\n")) == (TS, "stdout", False, "two\n")
    assert parse_docker(docker("\n")) == (TS, "stdout", False, "")


def test_docker_chunk_without_newline_is_partial() -> None:
    assert parse_docker(docker("chunk")) == (TS, "stdout", True, "chunk")


def test_docker_extra_keys_are_ignored() -> None:
    line = docker("m\n", attrs={"tag": "x", "n": [1, 2]}, extra=None)
    assert parse_docker(line) == (TS, "stdout", False, "m")
    assert LineParser().feed([line]) == [("m", "stdout", TS, False)]


def test_docker_invalid_utf8_is_replaced_not_fatal() -> None:
    line = b'{"log":"bad \xff byte\\n","stream":"stdout","time":"' + TS.encode() + b'"}'
    assert parse_docker(line) == (TS, "stdout", False, "bad \ufffd byte")
    parser = LineParser()
    assert parser.feed([line]) == [("bad \ufffd byte", "stdout", TS, False)]
    assert parser.malformed == 0


def test_docker_unicode_escapes_decoded() -> None:
    assert parse_docker(docker("caf\u00e9 \u20ac\n")) == (TS, "stdout", False, "caf\u00e9 \u20ac")


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"{",
        b"[]",
        b"not json at all",
        b'{"log":"m\\n","stream":"stdout"}',  # no time
        b'{"stream":"stdout","time":"t"}',  # no log
        b'{"log":1,"stream":"stdout","time":"t"}',
        docker("m\n", stream="stdin"),
        cri("a cri line"),
    ],
)
def test_docker_rejects(line: bytes) -> None:
    assert parse_docker(line) is None


# -- detection and malformed lines -------------------------------------------------


def test_format_detected_per_parser_instance() -> None:
    cri_parser, docker_parser = LineParser(), LineParser()
    assert cri_parser.format is None
    assert cri_parser.feed([cri("from cri")]) == [("from cri", "stdout", TS, False)]
    assert docker_parser.feed([docker("from docker\n")]) == [("from docker", "stdout", TS, False)]
    assert (cri_parser.format, docker_parser.format) == ("cri", "docker")
    # each keeps its own format afterwards
    assert cri_parser.feed([cri("again")]) == [("again", "stdout", TS, False)]
    assert docker_parser.feed([docker("again\n")]) == [("again", "stdout", TS, False)]


def test_detection_skips_empty_and_garbage_leading_lines() -> None:
    parser = LineParser()
    records = parser.feed([b"", b"garbage first", cri("real")])
    assert records == [("", None, None, False), ("garbage first", None, None, False), ("real", "stdout", TS, False)]
    assert parser.format == "cri"
    assert parser.malformed == 2


def test_format_stays_undetected_until_a_line_parses() -> None:
    parser = LineParser()
    assert parser.feed([b"noise"]) == [("noise", None, None, False)]
    assert parser.format is None
    assert parser.feed([docker("x\n")]) == [("x", "stdout", TS, False)]
    assert parser.format == "docker"


def test_line_of_other_format_is_malformed_after_detection() -> None:
    parser = LineParser()
    other = docker("json in a cri file\n")
    records = parser.feed([cri("one"), other, cri("two")])
    assert records == [
        ("one", "stdout", TS, False),
        (other.decode(), None, None, False),
        ("two", "stdout", TS, False),
    ]
    assert parser.format == "cri"
    assert parser.malformed == 1

    parser = LineParser()
    other = cri("cri in a docker file")
    assert parser.feed([docker("one\n"), other])[1] == (other.decode(), None, None, False)
    assert parser.malformed == 1


def test_malformed_line_with_invalid_utf8_is_passed_whole() -> None:
    parser = LineParser()
    records = parser.feed([cri("ok"), b"\xff\xfe broken \xc3"])
    assert records[1] == ("\ufffd\ufffd broken \ufffd", None, None, False)
    assert parser.malformed == 1


def test_tailer_truncated_line_is_flagged() -> None:
    parser = LineParser()
    cut_docker = docker("x" * 100 + "\n")[:60]  # the tailer cut it: no longer JSON
    records = parser.feed([docker("ok\n"), cut_docker], truncated=frozenset({1}))
    assert records == [("ok", "stdout", TS, False), (cut_docker.decode(), None, None, True)]
    assert (parser.malformed, parser.truncated) == (1, 1)

    parser = LineParser()
    records = parser.feed([cri("whole"), cri("cut short")], truncated=frozenset({1}))
    assert records == [("whole", "stdout", TS, False), ("cut short", "stdout", TS, True)]
    assert (parser.malformed, parser.truncated) == (0, 1)


# The fast path inlines parse_cri's checks; feeding a line alone (fast path) and
# with a truncation set naming no line of the batch (slow path for the whole batch)
# must give the same records.
TRICKY_CRI = [
    cri("plain"),
    cri("", tag="F"),
    f"{TS} stdout F".encode(),
    cri("flags", tag="F:x"),
    cri("partial", tag="P"),
    cri("stdin", stream="stdin"),
    cri("m", timestamp="2026-01-01T00:00:00Z"),
    cri("m", timestamp="2026-01-01 00:00:00Z"),
    cri("m", timestamp="2026-01-01T00:00:00\u00e9\u00e9Z"),
    b"2026-01-01T00:00:00.1\xffZ stdout F m",
    b"2026-01-01T00:00:00.1Z stdout F bad \xff utf8",
    b"2026-01-01T00:00:00Z  stdout F double space",
    b"",
    b" ",
]


@pytest.mark.parametrize("line", TRICKY_CRI)
def test_fast_and_slow_paths_agree(line: bytes) -> None:
    fast, slow = LineParser(), LineParser()
    fast.format = slow.format = "cri"
    fast_out = fast.feed([line]) + fast.flush()
    slow_out = slow.feed([line], truncated=frozenset({99})) + slow.flush()
    assert fast_out == slow_out
    assert (fast.malformed, fast.merged, fast.truncated) == (slow.malformed, slow.merged, slow.truncated)


def test_fast_and_slow_paths_agree_for_docker() -> None:
    lines = [docker("a\n"), docker("b"), docker("c\n", "stderr"), docker("d\n", "stdin"), b"{}", docker("e\n", x=1)]
    fast, slow = LineParser(), LineParser()
    fast.format = slow.format = "docker"
    assert fast.feed(lines) + fast.flush() == slow.feed(lines, truncated=frozenset({99})) + slow.flush()


def test_invalid_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_merged_line_bytes"):
        LineParser(max_merged_line_bytes=0)
    with pytest.raises(TypeError, match="max_merged_line_bytes"):
        LineParser(max_merged_line_bytes="32KiB")  # type: ignore[arg-type]
