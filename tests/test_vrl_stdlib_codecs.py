"""Encoders, hashes and the misc functions against Vector's VRL."""

import os
import re

import pytest

from logagent.vrl.stdlib import FUNCTIONS
from logagent.vrl.stdlib.regex import Regex
from logagent.vrl.value import Timestamp
from tests.vrl_function_oracle import Event, outcome_of_ours, outcome_of_vrl, same

VALUES = [None, True, 1, -2.5, 1e21, 1e-7, 0.00001, 1.0, "", "é \"q\" \\ \n\t\x00\x1f\x7f\u2028", [], {}, [1, [None]],
          {"b": 1, "a": {"z": [], "y": {}}, "é": "ü"}, Timestamp(1_577_836_800_100_000_000), Regex("a+b")]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_encode_json(value):
    same("encode_json", value)
    same("encode_json", value, pretty=True)
    same("encode_json", value, pretty=False)


OBJECTS = [{}, {"a": 1, "b": "two words", "c": True, "d": False, "e": None}, {"n": {"x": 1, "y": [1, {"z": 2}]}, "m": []},
           {"q": 'say "hi"', "eq": "a=b", "nl": "a\nb", "bs": "a\\b", "ts": Timestamp(0), "f": 1.5}]


@pytest.mark.parametrize("value", OBJECTS, ids=repr)
def test_encode_key_value(value):
    same("encode_key_value", value)
    same("encode_key_value", value, ["e", "b", "zz"])
    same("encode_key_value", value, key_value_delimiter=":", field_delimiter=",")
    same("encode_key_value", value, flatten_boolean=True)
    same("encode_key_value", value, ["c", "d"], flatten_boolean=True)
    same("encode_key_value", value, [1])
    same("encode_logfmt", value)
    same("encode_logfmt", value, ["b"])


@pytest.mark.parametrize("text", ["", "foo", "été 🙂", "a" * 1000])
def test_hashes(text):
    same("md5", text)
    same("sha1", text)
    same("sha2", text)
    for variant in ("SHA-224", "SHA-256", "SHA-384", "SHA-512", "SHA-512/224", "SHA-512/256"):
        same("sha2", text, variant=variant)


def test_hash_errors():
    same("md5", Event(1))
    assert same("sha2", "x", variant="SHA-1")[0] == "compile"


def test_uuid_v4_and_now():
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", outcome_of_ours("uuid_v4")[1])
    assert outcome_of_vrl("uuid_v4")[0] == "ok"
    assert outcome_of_ours("now")[1][:4] == outcome_of_vrl("now")[1][:4]


def test_get_env_var(monkeypatch):
    monkeypatch.setenv("H22B_TEST_VAR", "value é")
    assert outcome_of_ours("get_env_var", "H22B_TEST_VAR") == ("ok", "value é")
    assert os.environ.get("H22B_MISSING") is None
    same("get_env_var", "H22B_MISSING")


def test_get_hostname():
    assert same("get_hostname")[0] == "ok"


@pytest.mark.parametrize("left, right", [(1, 1), (1, 1.0), (True, 1), ("a", "a"), ([1, {"a": None}], [1, {"a": None}]),
                                         ("a\"b\n", [1, 2.5, "x", None, True, {"b": 1, "a": Timestamp(100_000_000)}, Regex("a.b")]),
                                         ({}, {}), ([], {})], ids=repr)
def test_assert_eq(left, right):
    same("assert_eq", left, right)
    same("assert_eq", left, right, message="custom")


def test_assert():
    same("assert", True)
    same("assert", False)
    same("assert", False, message="m")


def test_log_is_rate_limited_per_call_site(capsys):
    declared = FUNCTIONS["log"]
    site = declared.specialize((None, None, None))
    other = declared.specialize((None, None, None))
    for _ in range(5):
        assert site("hello from vrl", "warn", 60) is None
    other({"k": 1}, None, None)
    out = capsys.readouterr()
    text = out.out + out.err
    assert text.count("hello from vrl") == 1
    assert '{ "k": 1 }' in text
    assert same("log", "x", level="loud")[0] == "compile"
