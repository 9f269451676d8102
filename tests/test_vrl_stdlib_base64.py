"""encode_base64 / decode_base64 against Vector's VRL (vrl-python), value by value."""

from __future__ import annotations

import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from tests.vrl_oracle import our_outcome, vrl_outcome  # noqa: E402

COVERS = ("encode_base64", "decode_base64")
PROGRAMS = [
    ".r = encode_base64(.s)",
    ".r = encode_base64(.s, padding: false)",
    '.r = encode_base64(.s, charset: "url_safe")',
    ".r, .e = decode_base64(.s)",
    '.r, .e = decode_base64(.s, charset: "url_safe")',
    '.r = encode_base64(.s, charset: "x")',
    '.r, .e = encode_base64(.s, charset: "x")',
    ".r = decode_base64!(encode_base64(.s))",
    ".r = encode_base64(.n)",
]
VALUES = ["", "a", "ab", "abc", "héllo ✓", "YWJj", "YWI=", "YWI", "Y", "a b", "_-8=", "+/8=", "//8", "4pyT", "/w==",
          "YQ==YQ==", "YWJj\n"]


def test_covers_both() -> None:
    assert all(any(name + "(" in source for source in PROGRAMS) for name in COVERS)


@pytest.mark.parametrize("source", PROGRAMS)
def test_matches_vrl(source: str) -> None:
    runtime = vrl_python.VRLRuntime()
    for value in VALUES:
        record = {"s": value, "n": 3}
        assert our_outcome(source, record) == vrl_outcome(runtime, source, record), value
