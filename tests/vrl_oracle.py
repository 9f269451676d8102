"""Running a program in Vector's VRL (vrl-python) and in ours, as comparable outcomes."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from logagent.vrl.diagnostic import VrlError
from logagent.vrl.program import Aborted, compile_program
from logagent.vrl.runtime import VrlRuntimeError
from logagent.vrl.value import Timestamp

_VRL_TIMESTAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d{1,9}))? UTC$")
_POSITION = re.compile(r"┌─ :(\d+):(\d+)")
_CODE = re.compile(r"error\[(E\d+)\]")
_ABORT_LABEL = re.compile(r"\^+ aborted\s*$", re.M)


def vrl_value(value: Any) -> Any:
    """VRL's printed timestamps as instants (nanoseconds), everything else as is."""
    if type(value) is str:
        match = _VRL_TIMESTAMP.match(value)
        if match:
            seconds = datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
            fraction = (match.group(2) or "").ljust(9, "0")
            return ("instant", int(seconds.timestamp()) * 1_000_000_000 + int(fraction))
        return value
    if type(value) is dict:
        return {k: vrl_value(v) for k, v in value.items()}
    if type(value) is list:
        return [vrl_value(v) for v in value]
    return value


def our_value(value: Any) -> Any:
    if type(value) is Timestamp:
        return ("instant", value.nanos)
    if type(value) is dict:
        return {k: our_value(v) for k, v in value.items()}
    if type(value) is list:
        return [our_value(v) for v in value]
    if getattr(value, "is_vrl_regex", False):
        return value.pattern
    return value


def vrl_outcome(runtime: Any, source: str, event: dict[str, Any]) -> tuple[str, Any]:
    try:
        result = runtime.execute(source, event)
    except RuntimeError as exc:  # a runtime error or abort
        return ("abort", None) if _ABORT_LABEL.search(str(exc)) else ("error", None)
    except ValueError as exc:  # a compile error
        text = str(exc)
        code = _CODE.search(text)
        position = _POSITION.search(text)
        return ("compile", (code.group(1) if code else text, tuple(map(int, position.groups())) if position else None))
    return ("ok", vrl_value(result.processed_event))


def our_outcome(source: str, event: dict[str, Any]) -> tuple[str, Any]:
    try:
        program = compile_program(source)
    except VrlError as exc:
        return ("compile", (exc.code, (exc.line, exc.column)))
    try:
        _, target, _ = program.run(dict(event))
    except VrlRuntimeError:
        return ("error", None)
    except Aborted:
        return ("abort", None)
    return ("ok", our_value(target))
