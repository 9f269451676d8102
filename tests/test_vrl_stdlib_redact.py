"""redact against Vector's VRL."""

import pytest

from logagent.vrl.stdlib.regex import Regex
from tests.vrl_function_oracle import same

VALUES = ["my id is 123456", "", "ssn 123-12-1234 and 666-12-1234 and 001-01-0001", ["a 12", {"b": "34 x", "c": 5}],
          {"name": "John Doe", "ssn": "123-12-1234", "n": None}, "été 42 🙂"]
FILTERS = [[Regex(r"\d+")], ["us_social_security_number"], [{"type": "us_social_security_number"}],
           [{"type": "pattern", "patterns": [Regex(r"\d{2}"), "John"]}], ["John", Regex("é")] if False else [Regex("é"), Regex(r"x*")],
           []]
REDACTORS = [None, "full", "sha2", "sha3", {"type": "text", "replacement": "***"}, {"type": "full"},
             {"type": "sha2", "variant": "SHA-256", "encoding": "base16"}, {"type": "sha3", "variant": "SHA3-224"},
             {"type": "sha2", "variant": "SHA-512/224", "encoding": "base64"}]


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("filters", FILTERS, ids=repr)
@pytest.mark.parametrize("redactor", REDACTORS, ids=repr)
def test_redact(value, filters, redactor):
    if redactor is None:
        same("redact", value, filters=filters)
    else:
        same("redact", value, filters=filters, redactor=redactor)


@pytest.mark.parametrize("filters, redactor", [(["nope"], None), (["pattern"], None), ([1], None), ([Regex("a")], "md5"),
                                               ([Regex("a")], {"type": "text"}), ([Regex("a")], {"type": "sha2", "variant": "x"})],
                         ids=repr)
def test_redact_bad_constants(filters, redactor):
    named = {} if redactor is None else {"redactor": redactor}
    assert same("redact", "a", filters=filters, **named)[0] == "compile"


@pytest.mark.parametrize("value", [None, 5, 1.5, True, "x 123-45-6789", [1, None, "123-45-6789"], {"k": 2}], ids=repr)
def test_redact_of_a_value_of_unknown_type_returns_other_kinds_as_they_are(value):
    """Vector's remap_function_redact test: ``redact!(.input, ...)`` with ``.input`` missing or null is null."""
    from tests.vrl_oracle import our_outcome, vrl_outcome

    vrl_python = pytest.importorskip("vrl_python")
    runtime = vrl_python.VRLRuntime()
    for source in ('.a = redact!(.input, filters: ["us_social_security_number"])',
                   ".b, err = redact(.input, filters: [r'\\d'])\n.e = err"):
        for event in ({"input": value}, {}):
            assert our_outcome(source, event) == vrl_outcome(runtime, source, event)
