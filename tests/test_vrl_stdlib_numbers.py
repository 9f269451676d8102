"""round, floor, ceil and mod against Vector's VRL (vrl-python): values, types, fallibility."""

from __future__ import annotations

import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.vrl_function_oracle import Event, same  # noqa: E402
from tests.vrl_oracle import our_outcome, vrl_outcome  # noqa: E402

VALUES = [2.5, -2.5, 0.5, -0.4, 3, -7, 0, 1.2345, 1.005, 2.675, 1234.5, -1234.5, 0.49999999999999994, 4503599627370497.0,
          1e300, -1e-300, 9007199254740993, 1.5e16]
PRECISIONS = [None, 0, 1, 2, 3, -1, -2, 15, 400, -400]


@pytest.mark.parametrize("name", ["round", "floor", "ceil"])
def test_rounding(name: str) -> None:
    for value in VALUES:
        for precision in PRECISIONS:
            if precision is None:
                same(name, value)
                same(name, Event(value))
            else:
                same(name, value, precision=precision)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False), st.integers(-2**63, 2**63 - 1)),
       st.integers(-20, 20))
def test_rounding_matches_vrl(value: float, precision: int) -> None:
    for name in ("round", "floor", "ceil"):
        same(name, value, precision=precision)


MODS = [(5, 3), (-5, 3), (5, -3), (-5, -3), (5.5, 2), (5, 2.5), (-5.5, 2), (5.5, -2), (-0.0, 2), (5, 0), (5.0, 0.0),
        (5, 0.0), (0, 5), (2**63 - 1, -1), (-2**63, -1), (-2**63, 7), (1e308, 3), (7, 1e-300)]


@pytest.mark.parametrize("value, modulus", MODS)
def test_mod(value: float, modulus: float) -> None:
    same("mod", value, modulus)
    same("mod", Event(value), modulus)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False), st.integers(-2**63, 2**63 - 1)),
       st.one_of(st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False), st.integers(-2**63, 2**63 - 1)))
def test_mod_matches_vrl(value: float, modulus: float) -> None:
    same("mod", value, modulus)


# types and fallibility as VRL's checks see them (round is typed an integer, mod by its modulus)
PROGRAMS = [
    ".y = round(.f)", ".y = round!(.f)", ".y = round(1.5)", ".y = upcase(round(1.5))", ".y = upcase(floor(1.5))",
    ".y = upcase(ceil(1))", ".y = upcase(ceil!(.f))", ".y = round(.f) ?? 0", ".y = round(1.25, precision: 1)",
    ".y = round(1.5, precision: .n)", ".y = round(1.5, precision: 1.5)", ".y = floor(.n, precision: 2)",
    ".y = mod(5, 2)", ".y = mod!(5, 2)", ".y, .e = mod(5, 0)", ".y, .e = mod(.n, 2)", ".y = mod!(.f, .n)",
    ".y = upcase(mod!(5.0, 2))", ".y = upcase(mod!(5, 2.0))", ".y = upcase(mod!(.n, .n))", ".y = mod!(.s, 2)",
    ".y = to_string(round(.f) ?? 0)", ".y = round!(.f) + 1", ".y = mod!(.n, 3) * 2",
    ".y = ceil(.n) ?? 0", ".y = ceil!(.n)", ".y, .e = ceil(.s)", ".y = floor(.n)", ".y = floor(.n) ?? 3",
    ".y, .e = floor(.n)", "x = 0\n.y = mod(5, x)", ".y = mod(5, 0.0)", ".y = mod(5.5, -2)",
]
RECORDS = [{"f": 2.5, "n": 7, "s": "x"}, {"f": -1.45, "n": 0, "s": 3}, {"f": 3, "n": -4}, {}]


@pytest.mark.parametrize("source", PROGRAMS)
def test_programs_match_vrl(source: str) -> None:
    runtime = vrl_python.VRLRuntime()
    for record in RECORDS:
        ours, theirs = our_outcome(source, record), vrl_outcome(runtime, source, record)
        if source == ".y, .e = mod(.n, 2)" or source == ".y = mod!(.s, 2)":
            # VRL words a remainder of a non-number its own way; the outcome kind and value still agree
            ours = (ours[0], {k: v for k, v in ours[1].items() if k != "e"}) if ours[0] == "ok" else ours
            theirs = (theirs[0], {k: v for k, v in theirs[1].items() if k != "e"}) if theirs[0] == "ok" else theirs
        assert ours == theirs, record
