"""What dedupe compares: a triple of strings per record, equal exactly when Vector's cache entries are.

Vector's entry is, per compared field, the value's type and its bytes (or
nothing, for a missing field); with ``fields.ignore``, the path, type and bytes
of every leaf but the ignored ones. Here an entry is ``(prefix, index, rest)``,
and the form is a function of the values alone (the same values give the same
triple whichever way it was built):

- **short**, when every compared per-line field (``timestamp``, ``stream``,
  ``message``) is a string: ``index`` is one of them (the timestamp if
  compared, else the message, else the stream), ``rest`` the others (None if
  none, the value if one, else joined by U+001F with the message last, which
  needs the others free of U+001F). ``prefix`` stands for the typed values of
  the other compared fields (usually those of the file's context): a short
  number given to each such tuple of values. The owner forgets the numbers no cached
  entry uses (``forget_prefixes``); a number is never given twice. A batch of
  one file's records (``Batch.ctx`` set: none has its own fields) gets its
  index and rest columns in a few calls in C (``columns``), so the cache can
  check a whole batch by its indexes (timestamps) without hashing messages.
- **long**: ``("\x1e", JSON text of every typed value, None)`` for any other
  record, and for every record with ``fields.ignore``.

A typed value is a string as itself, a missing field ``false``, anything else
``[type, canonical text or value]`` (Vector's type numbers; objects with
sorted keys; numbers as Vector prints them).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

import msgspec

from logagent.acks import Batch
from logagent.event import MERGED_MESSAGE, PER_LINE_KEYS, FileContext, LogEvent
from logagent.sinks.templates import FieldPath
from logagent.transforms.options import number_text
from logagent.transforms.record_fields import value_at

SEP = "\x1f"
LONG = "\x1e"
#: top-level keys read straight from the event; each is a string or None (see ``LogEvent``)
LINE_KEYS = ("timestamp", "message", "stream")
_GETTERS = {key: attrgetter(key) for key in LINE_KEYS}
_MESSAGE = _GETTERS["message"]
_FIELDS = attrgetter("fields")
_CTX = attrgetter("ctx")
_json = msgspec.json.Encoder().encode
_sorted_json = msgspec.json.Encoder(order="sorted").encode
#: Vector's type numbers (a string is written as itself, a missing field as ``false``)
_TAGS = {int: 2, float: 3, bool: 4, dict: 5, list: 6, type(None): 7}


class _Missing:
    """A compared field the record does not have (a null is present: ``[7, null]``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def typed(value: Any) -> Any:
    """A value as compared: a string itself, a missing field False, else its type number and text."""
    if type(value) is str:
        return value
    if value is MISSING:
        return False
    tag = _TAGS.get(type(value), 0)
    if tag in (5, 6):
        return tag, _sorted_json(value).decode()
    if tag in (2, 3):
        return tag, number_text(value)
    return tag, value if tag else str(value)


Entry = tuple[str, str, "str | None"]
#: what ``columns`` gives: the prefix, the index column and the rest column of a batch
Columns = tuple[str, list[str], "list[str | None]"]


class EntryMaker:
    """Entries of records for a ``fields.match`` list (``ignore`` None) or every leaf but ``ignore``."""

    def __init__(self, match: tuple[FieldPath, ...], ignore: frozenset[FieldPath] | None) -> None:
        self.match = match
        self.ignore = ignore
        line = [i for i, path in enumerate(match) if len(path) == 1 and path[0] in LINE_KEYS]
        # the index first (the timestamp, else the message, else the stream), then the others, the message last
        keys = [match[i][0] for i in line]
        first = next((line[keys.index(key)] for key in LINE_KEYS if key in keys), None)
        others = sorted((i for i in line if i != first), key=lambda i: match[i] == ("message",))
        self._line = [first, *others] if first is not None else []
        self._rest = [i for i in range(len(match)) if i not in line]
        self._rest_keys = [match[i][0] for i in self._rest]
        self._rest_set = frozenset(self._rest_keys)
        #: a batch of records without their own fields can be read column-wise: every compared field is
        #: top-level, the other fields come from the context alone
        self._columns = ignore is None and bool(self._line) and all(
            len(match[i]) == 1 and match[i][0] not in PER_LINE_KEYS for i in self._rest)
        self._getters = [_GETTERS[match[i][0]] for i in self._line]
        #: the typed values of the other compared fields -> their short number
        self._short: dict[tuple[Any, ...], str] = {}
        self._next = 0
        self._memo = object()

    # -- prefixes ---------------------------------------------------------------

    def _prefix(self, values: tuple[Any, ...]) -> str:
        short = self._short
        number = short.get(values)
        if number is None:
            number = short[values] = str(self._next)
            self._next += 1
        return number

    @property
    def prefixes(self) -> int:
        """How many short prefixes are remembered."""
        return len(self._short)

    def forget_prefixes(self, held: list[Entry]) -> int:
        """Forget every short prefix no entry of ``held`` uses; how many are kept."""
        keep = {entry[0] for entry in held}
        self._short = {text: n for text, n in self._short.items() if n in keep}
        return len(self._short)

    # -- entries ------------------------------------------------------------------

    def columns(self, batch: Batch) -> Columns | None:
        """The batch's entries as columns, when its records share one context that gives every compared
        field but the per-line ones (a source's batch, or one whose records' own fields hold none of them)."""
        if not self._columns:
            return None
        events = batch.events
        ctx = batch.ctx  # one context, no record with its own fields (see Batch)
        if ctx is None:
            ctx = self._shared_context(batch)
            if ctx is None:
                return None
        columns: list[list[Any]] = []
        last = len(self._getters) - 1
        for position, getter in enumerate(self._getters):
            column = list(map(getter, events))
            # all() first: a truth test per string, where ``in`` compares each one with None; the message is
            # a string in every record without its own fields
            if (getter is not _MESSAGE or batch.ctx is None) and not all(column) and None in column:
                return None  # a missing one (or a message in the record's fields): the long form
            if 0 < position < last and SEP in "".join(column):
                return None  # joined with the next: its own form
            columns.append(column)
        prefix = self._prefix(self._context_values(ctx))
        if len(columns) == 1:
            return prefix, columns[0], [None] * len(events)
        if len(columns) == 2:
            return prefix, columns[0], columns[1]
        return prefix, columns[0], list(map(SEP.join, zip(*columns[1:])))

    def _shared_context(self, batch: Batch) -> FileContext | None:
        """The one context of records whose own fields hold none of the compared fields it gives."""
        shared = batch.ctx_with_fields
        if shared is not None:
            return shared[0] if self._rest_set.isdisjoint(shared[1]) else None
        events = batch.events
        ctx = events[0].ctx if events else None
        if ctx is None or not all(map(is_, map(_CTX, events), repeat(ctx))):
            return None
        owned = list(filter(None, map(_FIELDS, events)))
        if any(map(is_, owned, repeat(MERGED_MESSAGE))):  # a merged object may hold any key its context lacks
            if not self._rest_set.issubset(ctx.fields):
                return None
            owned = [fields for fields in owned if fields is not MERGED_MESSAGE]
        return ctx if all(map(self._rest_set.isdisjoint, owned)) else None

    def _context_values(self, ctx: FileContext) -> tuple[Any, ...]:
        values = ctx.memo.get(self._memo)
        if values is None:
            fields = ctx.fields
            values = ctx.memo[self._memo] = tuple(typed(fields.get(key, MISSING)) for key in self._rest_keys)
        return values

    def entry(self, event: LogEvent) -> Entry:
        """One record's entry (the same triple ``columns`` gives it)."""
        if self.ignore is not None:
            leaves = sorted(((list(path), typed(value)) for path, value in _leaves(event.to_dict(), ())
                             if path not in self.ignore), key=_path_order)
            return LONG, _json(leaves).decode(), None
        values = [value_at(event, path, MISSING) for path in self.match]
        line = [values[i] for i in self._line]
        if line and all(type(v) is str for v in line) and not any(SEP in v for v in line[1:-1]):
            prefix = self._prefix(tuple(typed(values[i]) for i in self._rest))
            rest = None if len(line) == 1 else line[1] if len(line) == 2 else SEP.join(line[1:])
            return prefix, line[0], rest
        return LONG, _json(list(map(typed, values))).decode(), None


def _leaves(value: Any, prefix: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, dict) and value:
        for key, inner in value.items():
            yield from _leaves(inner, (*prefix, key))
    elif isinstance(value, list) and value and prefix:
        for index, inner in enumerate(value):
            yield from _leaves(inner, (*prefix, index))
    elif prefix:
        yield prefix, value


def _path_order(item: tuple[list[str | int], Any]) -> tuple[str, ...]:
    return tuple(str(segment) for segment in item[0])
