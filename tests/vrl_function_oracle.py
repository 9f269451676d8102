"""Differential testing of one VRL function call: ours (``logagent.vrl.stdlib``) against Vector's VRL.

``outcome_of_ours(name, args, named)`` calls our declaration directly, as the
compiler would with constant arguments (its ``check`` and ``type_def`` first);
``outcome_of_vrl`` runs the same call as a one-line program in vrl-python,
with ``!`` where our ``type_def`` says the call is fallible, so a wrong
fallibility shows as VRL's E103/E620. Both give ``("ok", value)``,
``("error", message)`` (a runtime error, VRL's message without the
``function call error`` prefix) or ``("compile", code)``. Values are
normalised for comparison: timestamps as VRL prints them, regexes as their
pattern text.
"""

from __future__ import annotations

import re
from typing import Any

import vrl_python

from logagent.vrl.function import ArgInfo, ArgumentError, FunctionError
from logagent.vrl.stdlib import FUNCTIONS
from logagent.vrl.stdlib.display import float_to_string, fraction_auto, utc_datetime, value_kind
from logagent.vrl.value import Kind, Timestamp, kind_names, kind_of

_RUNTIME = vrl_python.VRLRuntime()
_CALL_ERROR = re.compile(r'function call error for "[^"]+" at \(\d+:\d+\): (.*)')
_CODE = re.compile(r"error\[(E\d+)\]")


class Event:
    """An argument passed through the event (``.aN``), so its kind is unknown to the compiler."""

    def __init__(self, value: Any) -> None:
        self.value = value


def literal(value: Any) -> str:
    """``value`` as a VRL literal."""
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if kind is float:
        text = float_to_string(value)
        return text if "." in text else text + ".0"
    if kind is str:
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        escaped = escaped.replace("\r", "\\r").replace("\t", "\\t").replace("{", "\\{").replace("\0", "\\0")
        return f'"{escaped}"'
    if kind is list:
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if kind is dict:
        return "{" + ", ".join(f"{literal(key)}: {literal(item)}" for key, item in value.items()) + "}"
    if kind is Timestamp:
        moment, nanos = utc_datetime(value)
        return f"t'{moment:%Y-%m-%dT%H:%M:%S}.{nanos:09d}Z'"
    if getattr(value, "is_vrl_regex", False):
        return "r'" + value.pattern.replace("'", "\\'") + "'"
    raise TypeError(value)


def normalise(value: Any) -> Any:
    """Our value in the shape vrl-python returns."""
    kind = type(value)
    if kind is Timestamp:
        moment, nanos = utc_datetime(value)
        return f"{moment:%Y-%m-%d %H:%M:%S}{fraction_auto(nanos)} UTC"
    if kind is list:
        return [normalise(item) for item in value]
    if kind is dict:
        return {key: normalise(item) for key, item in value.items()}
    if getattr(value, "is_vrl_regex", False):
        return value.pattern
    return value


def _ordered(name: str, args: tuple, named: dict[str, Any]) -> list[Any]:
    declared = FUNCTIONS[name]
    values: list[Any] = [_ABSENT] * len(declared.params)
    for index, value in enumerate(args):
        values[index] = value
    positions = {param.name: index for index, param in enumerate(declared.params)}
    for key, value in named.items():
        values[positions[key]] = value
    return values


_ABSENT = object()


def fallible(name: str, args: tuple, named: dict[str, Any]) -> bool:
    declared = FUNCTIONS[name]
    infos = _infos(name, args, named)
    wrong_kind = any(
        info is not None and info.kinds & ~param.kinds for info, param in zip(infos, declared.params)
    )
    return wrong_kind or declared.type_def(infos).fallible


def _infos(name: str, args: tuple, named: dict[str, Any]) -> tuple[ArgInfo | None, ...]:
    infos = []
    for value in _ordered(name, args, named):
        if value is _ABSENT:
            infos.append(None)
        elif isinstance(value, Event):
            infos.append(ArgInfo(Kind.ANY))
        else:
            infos.append(ArgInfo(kind_of(value), True, value))
    return tuple(infos)




def outcome_of_ours(name: str, *args: Any, **named: Any) -> tuple[str, Any]:
    declared = FUNCTIONS[name]
    infos = _infos(name, args, named)
    try:
        if declared.check is not None:
            declared.check(infos)
    except ArgumentError as error:
        return ("compile", str(error))
    ordered = _ordered(name, args, named)
    values = [None if v is _ABSENT else (v.value if isinstance(v, Event) else v) for v in ordered]
    for given, value, param in zip(ordered, values, declared.params):
        if given is not _ABSENT and kind_of(value) & ~param.kinds:
            return ("error", f"expected {kind_names(param.kinds)}, got {value_kind(value)}")
    implementation = (declared.specialize(infos) if declared.specialize else None) or declared.implementation
    try:
        return ("ok", normalise(implementation(*values)))
    except FunctionError as error:
        return ("error", str(error))


def program(name: str, args: tuple, named: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The one-line VRL program for the call, and the event it reads."""
    event: dict[str, Any] = {}
    parts = []
    for index, value in enumerate(args):
        parts.append(_argument(value, f"a{index}", event))
    for key, value in named.items():
        parts.append(f"{key}: {_argument(value, key, event)}")
    bang = "!" if fallible(name, args, named) else ""
    return f"{name}{bang}({', '.join(parts)})", event


def _argument(value: Any, field: str, event: dict[str, Any]) -> str:
    if isinstance(value, Event):
        event[field] = value.value
        return f".{field}"
    return literal(value)


def outcome_of_vrl(name: str, *args: Any, **named: Any) -> tuple[str, Any]:
    source, event = program(name, args, named)
    try:
        return ("ok", _RUNTIME.execute(source, event).runtime_result)
    except RuntimeError as error:
        found = _CALL_ERROR.search(str(error))
        return ("error", found.group(1) if found else str(error))
    except ValueError as error:
        code = _CODE.search(str(error))
        return ("compile", code.group(1) if code else str(error))


def same(name: str, *args: Any, **named: Any) -> tuple[str, Any]:
    """Assert ours equals VRL's for the call; returns the outcome."""
    ours = outcome_of_ours(name, *args, **named)
    theirs = outcome_of_vrl(name, *args, **named)
    if ours[0] == "compile" and theirs[0] == "compile":
        return ours
    assert ours == theirs, f"{program(name, args, named)[0]}: ours {ours!r}, VRL {theirs!r}"
    return ours
