"""``unnest`` (a path-argument function, compiled by ``vrl/unnest.py``) and
``parse_aws_cloudwatch_log_subscription_message`` against Vector's VRL."""

from __future__ import annotations

import json
import re

import pytest

from tests.vrl_function_oracle import Event, outcome_of_ours, outcome_of_vrl, same
from tests.vrl_oracle import our_outcome, vrl_outcome

vrl_python = pytest.importorskip("vrl_python", reason="vrl-python (Vector's VRL runtime) is not installed")

RECORDS = [
    {"a": 1, "messages": [{"x": 1}, "two", 3, None, [4]]},
    {"messages": [], "o": {"list": [1, {"b": 2}], "k": "v"}},
    {"messages": "nope", "o": {"list": "x"}},
    {"o": {"list": [[1, 2], [3]], "deep": [{"c": [1, 2], "d": 0}]}, "é": ["ü", "ß"]},
    {},
]

PROGRAMS = [
    ". = unnest!(.messages)",
    ". = unnest(.messages)",  # E103: the path may not hold an array
    "unnest(.messages)",
    ".messages, err = unnest(.messages)",
    "x = unnest!(.messages); .y = x",
    ". = unnest!(.o.list)",
    ". = unnest!(.o.list[0])",
    ". = unnest!(.o.list[-1])",
    ". = unnest!(.o.deep[0].c)",
    ". = unnest!(.\"é\")",
    ". = unnest!(path: .messages)",
    ". = unnest!(.nothere)",
    ". = unnest!(.messages[9])",
    '.m = [1, {"k": 2}]; . = unnest(.m)',  # known to be an array: no ! needed
    'x = {"m": [1, 2], "n": 0}; . = unnest(x.m)',
    'x = {"m": [1, 2]}; .out = unnest(x.m)',
    '%m = [1, 2]; . = unnest(%m)',
    '. = unnest!(.messages) ?? [.]',
    # compile errors
    ". = unnest!(.)",
    '. = unnest!("abc")',
    ". = unnest!([1, 2])",
    "x = [1, 2]; . = unnest(x)",
    ". = unnest(array!(.messages))",
    ". = unnest!(.messages, .o)",
    ". = unnest!()",
    ". = unnest!(values: .messages)",
    # the copies' type: VRL knows them as the root with one item at the path
    '.m = [{"k": 1}, {"k": 2}]; . = unnest(.m); . = map_values(.) -> |v| { v |= {"b": 2} }',
    '.m = [1, 2]; . = unnest(.m); .x = upcase(.y)',
    '. = [{"a": 1}]; . = map_values(.) -> |v| { v |= {"b": 2} }',
    '. = "a"; .x = upcase(.y)',
]


@pytest.fixture(scope="module")
def runtime():  # type: ignore[no-untyped-def]
    return vrl_python.VRLRuntime()


@pytest.mark.parametrize("source", PROGRAMS)
def test_unnest_matches_vrl(runtime, source: str) -> None:  # type: ignore[no-untyped-def]
    for record in RECORDS:
        assert our_outcome(source, record) == vrl_outcome(runtime, source, record), f"record {record!r}"


def _message(**changes: object) -> dict[str, object]:
    message: dict[str, object] = {
        "messageType": "DATA_MESSAGE", "owner": "071959437513", "logGroup": "/aws/eks/prod", "logStream": "web-0",
        "subscriptionFilters": ["to-firehose"],
        "logEvents": [{"id": "35683658089614582423604394983260738922885519999578275840", "timestamp": 1600110569039,
                       "message": '{"bytes":26780,"datetime":"14/Sep/2020:11:45:41 -0400"}'},
                      {"id": "2", "timestamp": -5, "message": "ünïcode"}]}
    message.update(changes)
    return {k: v for k, v in message.items() if v is not None}


CLOUDWATCH = [
    json.dumps(_message()),
    json.dumps(_message(messageType="CONTROL_MESSAGE", logEvents=[], subscriptionFilters=[])),
    " " + json.dumps(_message(owner="é")) + "\n",
    '["o", "DATA_MESSAGE", "g", "s", ["f"], [["1", 5, "m"]]]',
    # errors
    json.dumps(_message(messageType="OTHER")),
    json.dumps(_message(messageType=5)),
    json.dumps(_message(owner=None)),
    json.dumps({**_message(), "extra": 1}),
    json.dumps(_message(logEvents=[{"id": "1", "timestamp": "x", "message": "m"}])),
    json.dumps(_message(logEvents=[{"id": "1", "timestamp": 5.0, "message": "m"}])),
    json.dumps(_message(logEvents=[{"id": "1", "timestamp": 8210266876800000, "message": "m"}])),
    json.dumps(_message(logEvents=[{"id": 1, "timestamp": 5, "message": "m"}])),
    json.dumps(_message(logEvents=[{"id": "1", "timestamp": 5}])),
    json.dumps(_message(logEvents=[{"id": "1", "timestamp": 5, "message": "m", "x": 2}])),
    json.dumps(_message(logEvents={})),
    json.dumps(_message(logEvents=[5])),
    json.dumps(_message(subscriptionFilters=[1])),
    '["o", "DATA_MESSAGE", "g", "s", ["f"], [["1", 5]]]',
    '["o", "DATA_MESSAGE"]',
    '"x"', "5", "null", "[]", "{}", "nope", "", json.dumps(_message()) + " x",
]


_SERDE_POSITION = re.compile(r" at line \d+ column \d+$")


@pytest.mark.parametrize("text", CLOUDWATCH)
def test_parse_aws_cloudwatch_log_subscription_message(text: str) -> None:
    """The same value, or the same error; serde's line and column are left out of a structure error's message."""
    name = "parse_aws_cloudwatch_log_subscription_message"
    ours, vrl = outcome_of_ours(name, text), outcome_of_vrl(name, text)
    if ours[0] == vrl[0] == "error" and not _SERDE_POSITION.search(ours[1]):
        vrl = ("error", _SERDE_POSITION.sub("", vrl[1]))
    assert ours == vrl


def test_cloudwatch_timestamps_span_vrls_range() -> None:
    """chrono's range (VRL prints years past 9999, which the oracle does not read): the ends are timestamps."""
    from logagent.vrl.stdlib.aws import parse_aws_cloudwatch_log_subscription_message as parse

    name = "parse_aws_cloudwatch_log_subscription_message"
    for millis in (8210266876799999, -8334601228800000):
        text = json.dumps(_message(logEvents=[{"id": "1", "timestamp": millis, "message": "m"}]))
        assert outcome_of_vrl(name, text)[0] == "ok"
        assert parse(text)["log_events"][0]["timestamp"].nanos == millis * 1_000_000


def test_parse_aws_cloudwatch_log_subscription_message_kinds() -> None:
    same("parse_aws_cloudwatch_log_subscription_message", Event(5))
    same("parse_aws_cloudwatch_log_subscription_message", Event(json.dumps(_message())))


def test_cloudwatch_firehose_program_matches_vrl(runtime) -> None:  # type: ignore[no-untyped-def]
    source = ('parsed = parse_aws_cloudwatch_log_subscription_message!(.message)\n'
              '. = unnest(parsed.log_events)\n'
              '. = map_values(.) -> |value| {\n  event = del(value.log_events)\n  value |= event\n}')
    for text in CLOUDWATCH[:8]:
        assert our_outcome(source, {"message": text}) == vrl_outcome(runtime, source, {"message": text}), text
