"""The own fields of records a batch program made (``remap_batch.py``): dicts as cheap and small as they can be.

Per record: a dict made by a dict display (the cheapest way to a small
dict), an object value kept as its encoded text (``msgspec.Raw``, which
``LogEvent`` allows: a record waiting for its sink holds its JSON, not a
tree of Python objects). Records are grouped by which fields they have (most
programs give each branch its own), so no dict is made with a key it then
loses. A group whose values are all strings shares its dicts through the
transform's table, one per distinct set of values (``{"level": "INFO"}``),
bounded; events are never changed, so a dict may be shared by many.
"""

from __future__ import annotations

import sys
from itertools import compress
from operator import not_
from typing import Any

import msgspec

from logagent.event import SharedFields
from logagent.transforms.remap_records import plain
from logagent.vrl.batch_values import types_of
from logagent.vrl.timestamps import format_rfc3339
from logagent.vrl.value import Timestamp

#: values that are the same in a record as in a program
LEAVES = frozenset({str, int, float, bool, type(None)})
_OBJECTS = frozenset({dict, type(None)})
_TEXT = {str}
_DICT = {dict}
#: shared dicts kept per transform (then no new one is added)
INTERNED_MAX = 4096

Column = tuple[str, list[Any], "list[bool] | None"]


def _encoded_value(value: Any) -> Any:
    """What msgspec cannot encode by itself: timestamps as RFC 3339 text, regexes as their pattern."""
    if type(value) is Timestamp:
        return format_rfc3339(value)
    if getattr(value, "is_vrl_regex", False):
        return value.pattern
    raise TypeError(f"not a VRL value: {type(value).__name__}")


_encoder = msgspec.json.Encoder(enc_hook=_encoded_value)
#: a VRL value as JSON
encode_value = _encoder.encode
_encode_into = _encoder.encode_into
_raw = msgspec.Raw


def own_fields(columns: list[Column], messages: list[Any], interned: dict[Any, Any]) -> list[Any] | None:
    """Each record's own fields from (key, values, which records have it) columns; None when none has any.

    A record without a string message (``messages``) gets a dict even when empty, as ``LogEvent`` wants.
    """
    m = len(messages)
    if not columns:
        if None not in messages:
            return None
        return [{} if message is None else None for message in messages]
    distinct: list[list[bool]] = []
    for _, _, present in columns:
        if present is not None and not any(present == seen for seen in distinct):
            distinct.append(present)
    if not distinct:
        return _group([key for key, _, _ in columns], [values for _, values, _ in columns], interned)
    if len(distinct) > 1:
        return _each(columns, messages)
    flags = distinct[0]
    rows: list[Any] = [None] * m
    for chosen, kept in ((True, columns), (False, [column for column in columns if column[2] is None])):
        positions = list(compress(range(m), flags if chosen else map(not_, flags)))
        if not positions:
            continue
        if not kept:
            for p in positions:
                rows[p] = {} if messages[p] is None else None
            continue
        made = _group([key for key, _, _ in kept], [[values[p] for p in positions] for _, values, _ in kept],
                      interned)
        for p, row in zip(positions, made):
            rows[p] = row
    return rows


def _each(columns: list[Column], messages: list[Any]) -> list[Any]:
    """Rows of every key, less the keys each record lacks (records with many patterns of fields)."""
    keys = [key for key, _, _ in columns]
    rows: list[Any] = _rows(keys, [_stored(values) for _, values, _ in columns])
    for key, _, present in columns:
        if present is not None:
            for p in compress(range(len(rows)), map(not_, present)):
                del rows[p][key]
    for p, row in enumerate(rows):
        if not row and messages[p] is not None:
            rows[p] = None
    return rows


def _group(keys: list[str], columns: list[list[Any]], interned: dict[Any, Any]) -> list[dict[str, Any]]:
    """The dicts of records that all have ``keys``; shared through ``interned`` when every value is a string."""
    kinds = [types_of(values) for values in columns]
    if all(kind == _TEXT for kind in kinds):
        return _shared(keys, columns, interned)
    stored = [list(map(sys.intern, values)) if kind == _TEXT else _stored(values, kind)
              for values, kind in zip(columns, kinds)]
    return _rows(keys, stored)


def _shared(keys: list[str], columns: list[list[Any]], interned: dict[Any, Any]) -> list[dict[str, Any]]:
    table = interned.get(tuple(keys))
    if table is None:
        table = interned[tuple(keys)] = {}
    values: list[Any] = columns[0] if len(keys) == 1 else list(zip(*columns))
    rows = list(map(table.get, values))
    if None not in rows:
        return rows
    room = len(table) < INTERNED_MAX
    for p, row in enumerate(rows):
        if row is None:
            value = values[p]
            row = rows[p] = table.get(value) or SharedFields(zip(keys, value if len(keys) > 1 else (value,)))
            if room and value not in table:
                table[value] = row
                room = len(table) < INTERNED_MAX
    return rows


def _rows(keys: list[str], columns: list[list[Any]]) -> list[dict[str, Any]]:
    """A new dict per record of these keys and values."""
    if len(keys) == 1:
        k1 = keys[0]
        return [{k1: a} for a in columns[0]]
    if len(keys) == 2:
        k1, k2 = keys
        return [{k1: a, k2: b} for a, b in zip(*columns)]
    if len(keys) == 3:
        k1, k2, k3 = keys
        return [{k1: a, k2: b, k3: c} for a, b, c in zip(*columns)]
    if len(keys) == 4:
        k1, k2, k3, k4 = keys
        return [{k1: a, k2: b, k3: c, k4: d} for a, b, c, d in zip(*columns)]
    return [dict(zip(keys, row)) for row in zip(*columns)]


def _stored(values: list[Any], kinds: set[type] | None = None) -> list[Any]:
    """Values as a record keeps them: objects as their encoded text (``msgspec.Raw``), others plain."""
    kinds = types_of(values) if kinds is None else kinds
    if kinds <= LEAVES:
        return values
    buffer = bytearray()
    if kinds == _DICT:
        into, raw = _encode_into, _raw
        # ``into`` returns None, so the condition only encodes: a call of ``_text`` per value cost deepflow
        # ~180 instructions a line, this ~20
        return [raw(bytes(buffer)) for value in values if into(value, buffer) is None]
    if kinds <= _OBJECTS:
        return [None if value is None else _text(value, buffer) for value in values]
    return [value if type(value) in LEAVES else _text(value, buffer) if type(value) is dict else plain(value)
            for value in values]


def _text(value: Any, buffer: bytearray) -> msgspec.Raw:
    """``value``'s JSON in a bytes object of exactly its size: ``encode``'s result keeps the spare room of
    the buffer it grew in (a fifth more for deepflow's objects), and these wait in inboxes for their sink."""
    _encode_into(value, buffer)
    return _raw(bytes(buffer))
