"""The record that flows through the graph, split into per-line and per-file parts.

Everything that is the same for every line of one file under one version of its
metadata lives in a shared :class:`FileContext`; a :class:`LogEvent` holds only
what differs per line. Conditions read events through :meth:`LogEvent.get`, sinks
encode them with :func:`logagent.encoding.encode_json`.
"""

from __future__ import annotations

from typing import Any

import msgspec

_json_encode = msgspec.json.Encoder().encode

#: Top-level keys whose value differs from line to line. Any other key comes
#: from the file's context and is the same for every line of that file.
PER_LINE_KEYS = frozenset({"message", "stream", "timestamp", "truncated"})


class FileContext:
    """Fields shared by every line of a file for one version of its metadata.

    Never mutated after construction except for ``memo``, a cache of results of
    conditions that read only these fields (keyed by the condition object).
    """

    __slots__ = ("fields", "json_head", "memo")

    def __init__(self, fields: dict[str, Any]) -> None:
        self.fields = fields
        #: what precedes every record's encoded message: b'{"file":"...","message":'
        self.json_head: bytes = _json_encode(fields)[:-1] + b',"message":' if fields else b'{"message":'
        self.memo: dict[object, bool] = {}

    def get(self, key: str) -> Any:
        return self.fields.get(key)


class LogEvent(msgspec.Struct, gc=False, eq=False):
    """One log record: the per-line fields plus a reference to its file context.

    A msgspec Struct: created in C (the source makes one per line), and with
    ``gc=False`` never tracked by the cyclic garbage collector, so millions of
    short-lived events do not trigger collections. That is safe because an
    event never takes part in a reference cycle (it points to strings and to
    its FileContext, which never points back). ``eq=False``: events compare by
    identity, as plain objects do.
    """

    message: str
    stream: str | None
    timestamp: str | None
    ctx: FileContext
    truncated: bool = False

    def get(self, key: str) -> Any:
        """Top-level field lookup used by conditions; a missing field is None."""
        if key == "message":
            return self.message
        if key == "stream":
            return self.stream
        if key == "timestamp":
            return self.timestamp
        if key == "truncated":
            return True if self.truncated else None
        return self.ctx.fields.get(key)

    def to_dict(self) -> dict[str, Any]:
        record = dict(self.ctx.fields)
        record["message"] = self.message
        if self.stream is not None:
            record["stream"] = self.stream
        if self.timestamp is not None:
            record["timestamp"] = self.timestamp
        if self.truncated:
            record["truncated"] = True
        return record

    def __repr__(self) -> str:
        return f"LogEvent({self.to_dict()!r})"
