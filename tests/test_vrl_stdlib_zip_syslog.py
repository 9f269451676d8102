"""zip and to_syslog_level against Vector's VRL (vrl-python)."""

from __future__ import annotations

import pytest

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

from tests.vrl_oracle import our_outcome, vrl_outcome  # noqa: E402

COVERS = ("zip", "to_syslog_level")
# zip of an empty array of arrays is left out: VRL's zip never returns on it (logagent gives [])
PROGRAMS = [
    '.z = zip([1, 2, 3], ["a", "b"])',
    ".z = zip([[1, 2], [3, 4], [5, 6]])",
    ".z = zip([[1, 2], [3]])",
    ".z = zip([[1, 2], []])",
    ".z = zip(.a, .b)",
    ".z = zip!(.a, .b)",
    ".z, .e = zip(.c)",
    ".z, .e = zip(.a)",
    ".z = zip!(.c, [1])",
    ".z = zip(keys!(.o), values!(.o))",
    ".l = to_syslog_level(.n)",
    ".l = to_syslog_level!(.n)",
    ".l, .e = to_syslog_level(.n)",
    ".l, .e = to_syslog_level(9)",
    ".l = to_syslog_level!(0)",
    ".l, .e = to_syslog_level(-1)",
]
RECORDS = [{"a": [1, 2], "b": [3], "c": [[1], [2, 3]], "n": 4, "o": {"x": 1, "a": 2}},
           {"a": "s", "b": None, "c": [1], "n": 7, "o": {}}, {"n": 8}]


def test_covers_both() -> None:
    assert all(any(name + "(" in source for source in PROGRAMS) for name in COVERS)


@pytest.mark.parametrize("source", PROGRAMS)
def test_matches_vrl(source: str) -> None:
    runtime = vrl_python.VRLRuntime()
    for record in RECORDS:
        assert our_outcome(source, record) == vrl_outcome(runtime, source, record), record
