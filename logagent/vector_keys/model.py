"""One Vector-documented key of a component type and what logagent does with it."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

#: ``same``: accepted, means what it means in Vector; ``accepted``: accepted because our
#: behaviour already gives what it asks (the note says how); ``refused``: an error (the
#: note says why, and is the error's text)
Status = Literal["same", "accepted", "refused"]


class VectorKey(NamedTuple):
    #: the dotted key as Vector documents it, relative to the component (or the top level)
    path: str
    status: Status
    #: for ``accepted`` and ``refused``: why; shown in README and in the refusal
    note: str = ""
    #: a value Vector accepts for it, used by the table-driven test (None: a test supplies one)
    example: Any = None
