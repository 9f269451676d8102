"""parse_syslog (syslog_loose's shapes) and to_syslog_* against Vector's VRL (vrl-python)."""

from __future__ import annotations

import pytest

pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.vrl_function_oracle import outcome_of_ours, outcome_of_vrl, same  # noqa: E402

# Shapes RFC 5424 and 3164 name, and the looser ones syslog_loose also reads (each checked against VRL)
LOOSE = [
    # a Spring Boot line: timestamp, host "ERROR", appname "1"; "-" is empty structured data
    "2026-12-02T10:00:00.456Z ERROR 1 --- [nio-8080-exec-1] o.a.c.c.C.[.[.[/].[dispatcherServlet]    : threw",
    "2026-12-02T10:00:00.456Z  INFO 7 --- [           main] com.example.App : Started",
    "<13>Feb  5 17:32:18 10.0.0.99 myapp hello", "Feb 5 17:32:18 host", "Feb 5 17:32:18", "Feb 5 17:32:18:",
    "Feb 5 2020 17:32:18 host app: m", "<13>Feb 5 17:32:18 app[12]: m", "<13>Feb 5 17:32:18 app[12] m",
    "garbage", "", "   ", "<999>Feb 5 17:32:18 h a: m", "<192>Feb 5 17:32:18 h a: m", "<255>Feb 5 17:32:18 h a: m",
    "  <13>Feb 5 17:32:18 h a: m  ", "<13>1 2003-10-11T22:14:15.003Z - - - - -", "1 2003-10-11T22:14:15Z h a 1 m - t",
    '<13>1 2003-10-11T22:14:15.003Z host app 123 msgid [a b="c"][d e="f\\"g"] m',
    "<13>1 2003-10-11T22:14:15.003Z host app:x 123 m:x - m", "<13>1 2003-10-11 22:14:15 host app 123 msgid - m",
    '2003-10-11T22:14:15+02:00 host app[1]: [x y="z"] m', "2003-10-11T22:14:15Z host app: [bad] m",
    "2003-10-11T22:14:15Z app[7]", "2003-10-11T22:14:15Z host app[x]: m", "2003-10-11T22:14:15Z host app[-5]: m",
    "2003-10-11T22:14:15Z host app[99999999999]: m", "2003-10-11T22:14:15Z host app[]: m",
    "2003-10-11T22:14:15Z host ap:p[1]: m", "2003-10-11T22:14:15Z host: app: m", "2003-10-11T22:14:15Z  host app m",
    "2003-10-11T22:14:15Z\thost app m", "2026-12-02T10:00:00.456Z", "2026-12-02T10:00:00.456Z h [a] c",
    "Feb 30 17:32:18 h a: m", "Feb 5 25:32:18 h a: m", "Feb 5 17:32:18.123 h a: m", "feb 5 17:32:18 h a: m",
    "<13>Feb 5 17:32:18 - - m", "Feb 5 17:32:18 h - m", "Feb 5 17:32:18 - a[3] m", "Feb 5 17:32:18 h a[+5]: m",
    '<13>1 2003-10-11T22:14:15.003Z h a 1 m [a b="x\\ny\\\\z\\]\\t"] t', '<13>1 2003-10-11T22:14:15.003Z h a 1 m [a b="1" ] t',
    '<13>1 2003-10-11T22:14:15.003Z h a 1 m [a b="1"][bad][c d="2"] t', "<13>1 2003-10-11T22:14:15.003Z h a 1 m [x",
    '<13>1 2003-10-11T22:14:15.003Z h a 1 m [message b="1"] t', 'Feb 5 17:32:18 h a: [x y="1"][z] t',
    "\u00a0Feb 5 17:32:18 h\u00a0x a: t\u3000", "\x1cFeb 5 17:32:18 h\x1cx a: t", "Feb 5 17:32:18 h\na: t",
    "2003-10-11T22:14:15.003+0530 h a: m", "2026-12-02t10:00:00z h a: c", "2026-12-02T10:00:00,456Z h a: c",
]


@pytest.mark.parametrize("text", LOOSE)
def test_parse_syslog_shapes(text: str) -> None:
    same("parse_syslog", text)


def test_spring_line_reads_as_vrl_reads_it() -> None:
    outcome = same("parse_syslog", LOOSE[0])
    assert outcome[0] == "ok" and outcome[1]["hostname"] == "ERROR" and outcome[1]["appname"] == "1"
    assert outcome[1]["message"].startswith("-- [nio-8080-exec-1]")


_WORD = st.text(st.sampled_from("ab1-:[]=\"\\ .é\t"), min_size=0, max_size=6)
_DIGITS = st.integers(0, 300).map(str)
_PRI = st.one_of(st.just(""), _DIGITS.map(lambda n: f"<{n}>"), st.sampled_from(["<>", "<x>", "<13"]))
_SPACE = st.sampled_from([" ", " ", " ", "  ", "\t", ""])
_MONTH = st.sampled_from(["Jan", "Feb", "dec", "Dec", "FEB", "Sept", "Foo"])


@st.composite
def _bsd_time(draw: st.DrawFn) -> str:
    day = draw(st.integers(0, 32))
    clock = ":".join(str(draw(st.integers(0, 61))) for _ in range(draw(st.sampled_from([2, 3, 3, 3]))))
    year = draw(st.sampled_from(["", "", "2020 ", "1999 "]))
    return f"{draw(_MONTH)}{draw(_SPACE)}{day}{draw(_SPACE)}{year}{clock}{draw(st.sampled_from(['', '', ':']))}"


@st.composite
def _iso_time(draw: st.DrawFn) -> str:
    date = f"{draw(st.integers(1970, 2030))}-{draw(st.integers(0, 13)):02d}-{draw(st.integers(0, 32)):02d}"
    clock = f"{draw(st.integers(0, 24)):02d}:{draw(st.integers(0, 60)):02d}:{draw(st.integers(0, 59)):02d}"
    fraction = draw(st.sampled_from(["", ".1", ".456", ".123456789", ".1234567891", ",5"]))
    zone = draw(st.sampled_from(["Z", "z", "+02:00", "-07:30", "+24:00", "+0530", ""]))
    return f"{date}{draw(st.sampled_from(['T', 't', ' ']))}{clock}{fraction}{zone}"


@st.composite
def _element(draw: st.DrawFn) -> str:
    params = draw(st.lists(st.tuples(_WORD, _WORD), max_size=3))
    body = draw(st.sampled_from([" ", "", "  "])).join(f'{name}={draw(_SPACE)}"{value}"' for name, value in params)
    return f"[{draw(_WORD)}{draw(_SPACE)}{body}{draw(st.sampled_from(['', '', ' ']))}]"


_DATA = st.one_of(st.just(""), st.just("-"), st.lists(_element(), min_size=1, max_size=3).map("".join))


@st.composite
def _rfc5424(draw: st.DrawFn) -> str:
    fields = [draw(st.one_of(_WORD, st.just("-"))) for _ in range(4)]
    head = f"{draw(_PRI)}{draw(st.sampled_from(['1', '01', '', '99']))}{draw(_SPACE)}{draw(_iso_time())}"
    return head + "".join(draw(_SPACE) + field for field in fields) + draw(_SPACE) + draw(_DATA) + draw(_SPACE) + draw(_WORD)


@st.composite
def _rfc3164(draw: st.DrawFn) -> str:
    stamp = draw(st.one_of(_bsd_time(), _iso_time()))
    words = "".join(draw(_SPACE) + draw(_WORD) for _ in range(draw(st.integers(0, 3))))
    tail = draw(st.sampled_from(["", ":", ": ", " : "])) + draw(_DATA) + draw(_SPACE) + draw(_WORD)
    return f"{draw(_SPACE)}{draw(_PRI)}{draw(_SPACE)}{stamp}{words}{tail}"


_LINES = st.one_of(_rfc5424(), _rfc3164(), st.text(st.sampled_from("<>13 Feb:2-T[]\"=ab"), max_size=30))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES)
def test_parse_syslog_matches_vrl(text: str) -> None:
    ours, theirs = outcome_of_ours("parse_syslog", text), outcome_of_vrl("parse_syslog", text)
    assert ours == theirs, text


SYSLOG_CODES = [
    ("to_syslog_level", [-1, 0, 3, 7, 8]),
    ("to_syslog_facility", [-1, 0, 12, 13, 14, 15, 16, 23, 24]),
    ("to_syslog_severity", ["emerg", "panic", "alert", "crit", "err", "error", "warn", "warning", "notice", "info",
                            "debug", "ERR", "informational", ""]),
    ("to_syslog_facility_code", ["kern", "user", "ntp", "security", "console", "solaris-cron", "local7", "audit",
                                 "clockd", "KERN", "nope"]),
]


@pytest.mark.parametrize("name, values", SYSLOG_CODES)
def test_syslog_codes(name: str, values: list) -> None:
    for value in values:
        same(name, value)
