"""strip_ansi_escape_codes, parse_tokens, parse_glog, ip_to_ipv6 and ipv6_to_ipv4 against Vector's VRL."""

from __future__ import annotations

import pytest

pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.vrl_function_oracle import Event, same  # noqa: E402

ANSI = [
    "\x1b[46mfoo\x1b[0m bar", "a\tb\rc\nd", "\x1b]0;title\x07after", "\x1b]0;title\x1b\\after", "\x1bcX", "\x1b7Y\x1b8",
    "\x1b(Bz", "\x1bP1;2qdata\x1b\\after", "\x9b31mred", "\x9dosc\x07x", "del\x7fx", "nul\x00x", "é中😀", "\x1b[", "\x1b",
    "abc\x1b[3", "\x1b[1\x1b[2mX", "\x1b[1;\x18X", "\x1b[?25lhide", "\x1b[38;5;196mx", "\x1b[38:2:1:2:3mx",
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1bXsos\x1b\\y", "a\x85b", "a\x90dcs\x9cb", "\x1b]0;t\x9cz",
    "\x1b[1\nm", "\x1b]0;a\nb\x07c", "\x1bP\x1b[31mq", "\x1béX", "\x1b\nX", "\x1b( \tX", "\x1b[1é2mX", "x\u200by", "",
    "2026-12-02T10:00:00Z \x1b[32mINFO\x1b[0m started", "\x1bP1\nq\x1b\\Y", "\x1bPqa\x9cb", "\x1bPqa\u2713b", "\x1bP1\x9cX",
    "\x1bP1:2qa\x9cb", "\x1bXa\x9cb", "\x1bPqa\U0001F700\x1b[1mX", "\x1bP\u011cqa\x9cb",
]


@pytest.mark.parametrize("text", ANSI)
def test_strip_ansi_escape_codes(text: str) -> None:
    same("strip_ansi_escape_codes", text)


def test_strip_ansi_escape_codes_types() -> None:
    same("strip_ansi_escape_codes", Event("\x1b[1mx"))
    same("strip_ansi_escape_codes", Event(3))


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from("\x1b[]P X^_()\x07\x18\x1a\n\r\t\x00é\x85\x9b\x9c\u2713\x7f01;:?m\\#%q~"), max_size=24))
def test_strip_ansi_escape_codes_matches_vrl(text: str) -> None:
    same("strip_ansi_escape_codes", text)


TOKENS = [
    'A sentence "with a quote" [and brackets] - end', 'a  b\t"c d" [e f] -', "", '"unterminated', "[unterminated",
    'x"y z"w', "a[b c]d", '"a\\"b"', "-x - --", '"" []', "  a b", "a\nb c\r\nd", '"a\\x" b', 'a "b\\\\" c', '""x',
    'a [b "c]" d', "a\u00a0b", '192.168.1.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326',
]


@pytest.mark.parametrize("text", TOKENS)
def test_parse_tokens(text: str) -> None:
    same("parse_tokens", text)


@settings(max_examples=500, deadline=None)
@given(st.text(st.sampled_from('ab -"[]\\\t\n\r'), max_size=20))
def test_parse_tokens_matches_vrl(text: str) -> None:
    same("parse_tokens", text)


GLOG = [
    "I20210131 14:48:54.411655 15520 main.c++:9] Hello world!", "X20210131 14:48:54.411655 15520 main.c++:9] x",
    "nope", "E20211331 14:48:54.411655 15520 main.c++:9] bad date", "  W20240229 00:00:00.000001 1 a/b.go:1] leap  ",
    "F20210131 14:48:54.411655 15520 main.c++:9]no space", "I20210131 14:48:54.411655    7 f:1:2] colons",
    "I0131 14:48:54.411655 15520 main.go:9] klog, not glog", "E20210131 25:48:54.411655 1 m.go:9] hour",
]


@pytest.mark.parametrize("text", GLOG)
def test_parse_glog(text: str) -> None:
    same("parse_glog", text)


ADDRESSES = ["192.168.10.32", "2001:db8::1", "2001:0db8:0000::0001", "nope", "::ffff:1.2.3.4", "::1.2.3.4",
             "1:0:0:2:0:0:0:3", "fe80::1%eth0", "01.2.3.4", "::ffff:0:0", "::FFFF:1.2.3.4", " 1.2.3.4", "1.2.3", "[::1]",
             "::1", "::", "0.0.0.0", "255.255.255.255", "256.1.1.1", "::ffff:0:1", "1::", "fe80::", "ff02::2:0:0:1",
             "0:0:0:0:0:0:0:1", "2001:db8:0:0:1:0:0:1", ""]


@pytest.mark.parametrize("text", ADDRESSES)
def test_ip_conversions(text: str) -> None:
    same("ip_to_ipv6", text)
    same("ipv6_to_ipv4", text)


def test_ip_conversions_of_unknown_types() -> None:
    same("ip_to_ipv6", Event("10.0.0.1"))
    same("ipv6_to_ipv4", Event(5))
