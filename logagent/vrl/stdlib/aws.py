"""``parse_aws_cloudwatch_log_subscription_message``: a CloudWatch Logs subscription message (JSON) as VRL gives it.

The message must have exactly the six fields of AWS's format (``owner``,
``messageType`` CONTROL_MESSAGE or DATA_MESSAGE, ``logGroup``, ``logStream``,
``subscriptionFilters``, ``logEvents``), each log event exactly ``id``,
``timestamp`` (integer milliseconds) and ``message``; VRL (serde) also takes
them as arrays in that order. Field names come out in snake case and event
timestamps as timestamps. Errors are worded as serde words them, the first
problem in the text's order, without serde's line and column (JSON syntax
errors keep theirs); a repeated key is not an error here (the last one counts).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..function import FunctionError, TypeDef
from ..value import Timestamp
from .declare import ARR, OBJ, B, function, req
from .json_errors import serde_json_error

_MESSAGE_TYPES = ("CONTROL_MESSAGE", "DATA_MESSAGE")
# chrono's range of milliseconds (VRL's timestamps): -262143-01-01 to +262142-12-31T23:59:59.999
_MIN_MS, _MAX_MS = -8334601228800000, 8210266876799999


class _Invalid(Exception):
    pass


def _unexpected(value: Any) -> str:
    """serde's name of a JSON value that is not the expected one."""
    kind = type(value)
    if kind is str:
        return f'string "{value}"'
    if kind is bool:
        return f"boolean `{'true' if value else 'false'}`"
    if kind is int:
        return f"integer `{value}`"
    if kind is float:
        return f"floating point `{value!r}`"
    return {type(None): "null", list: "sequence", dict: "map"}[kind]


def _struct(value: Any, shape: tuple[str, tuple[tuple[str, str, Any], ...]]) -> dict[str, Any]:
    """A serde struct: an object of exactly these keys (or an array of them in order), each value read in turn."""
    name, fields = shape
    if type(value) is list:
        if len(value) < len(fields):
            raise _Invalid(f"invalid length {len(value)}, expected struct {name} with {len(fields)} elements")
        if len(value) > len(fields):
            raise _Invalid("trailing characters")
        return {ours: read(item) for (_, ours, read), item in zip(fields, value)}
    if type(value) is not dict:
        raise _Invalid(f"invalid type: {_unexpected(value)}, expected struct {name}")
    by_name = {theirs: (ours, read) for theirs, ours, read in fields}
    result = {}
    for key, item in value.items():
        if key not in by_name:
            expected = ", ".join(f"`{theirs}`" for theirs, _, _ in fields)
            raise _Invalid(f"unknown field `{key}`, expected one of {expected}")
        ours, read = by_name[key]
        result[ours] = read(item)
    for theirs, _, _ in fields:
        if theirs not in value:
            raise _Invalid(f"missing field `{theirs}`")
    return dict(sorted(result.items()))


def _string(value: Any) -> str:
    if type(value) is not str:
        raise _Invalid(f"invalid type: {_unexpected(value)}, expected a string")
    return value


def _strings(value: Any) -> list[str]:
    if type(value) is not list:
        raise _Invalid(f"invalid type: {_unexpected(value)}, expected a sequence")
    return [_string(item) for item in value]


def _millis(value: Any) -> Timestamp:
    if type(value) is not int:
        raise _Invalid(f"invalid type: {_unexpected(value)}, expected a unix timestamp in milliseconds")
    if not _MIN_MS <= value <= _MAX_MS:
        raise _Invalid(f"value is not a legal timestamp: {value}")
    return Timestamp(value * 1_000_000)


def _message_type(value: Any) -> str:
    if type(value) is not str:  # serde_json reads an enum from a string only
        raise _Invalid("expected value")
    if value not in _MESSAGE_TYPES:
        raise _Invalid(f"unknown variant `{value}`, expected `CONTROL_MESSAGE` or `DATA_MESSAGE`")
    return value


_EVENT = ("AwsCloudWatchLogEvent", (("id", "id", _string), ("timestamp", "timestamp", _millis),
                                    ("message", "message", _string)))


def _log_events(value: Any) -> list[dict[str, Any]]:
    if type(value) is not list:
        raise _Invalid(f"invalid type: {_unexpected(value)}, expected a sequence")
    return [_struct(item, _EVENT) for item in value]


_MESSAGE = ("AwsCloudWatchLogsSubscriptionMessage", (
    ("owner", "owner", _string), ("messageType", "message_type", _message_type), ("logGroup", "log_group", _string),
    ("logStream", "log_stream", _string), ("subscriptionFilters", "subscription_filters", _strings),
    ("logEvents", "log_events", _log_events)))


def parse_aws_cloudwatch_log_subscription_message(value: str) -> dict[str, Any]:
    try:
        decoded = msgspec.json.decode(value)
    except msgspec.DecodeError:
        raise FunctionError(f"unable to parse: {serde_json_error(value)}") from None
    try:
        return _struct(decoded, _MESSAGE)
    except _Invalid as invalid:
        raise FunctionError(f"unable to parse: {invalid}") from None


_TYPE = TypeDef(OBJ, True, {"log_events": ARR, "log_group": B, "log_stream": B, "message_type": B, "owner": B,
                            "subscription_filters": ARR}, {"log_events": OBJ, "subscription_filters": B})

FUNCTIONS = [
    function("parse_aws_cloudwatch_log_subscription_message", (req("value", B),), lambda args: _TYPE,
             parse_aws_cloudwatch_log_subscription_message),
]
