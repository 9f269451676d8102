"""One run of a program over a batch of records, column by column (see ``batch_compiler.py``).

A *column* holds one top-level field of the event, or one variable, for all
n records: a list indexed by record number (a field's list holds None where
the field is absent, and ``present[key]``, a list of booleans, says where it
is there), or a Uniform (``Uniform(ABSENT)``: absent from every record). Reading a field for a
selection picks its values; writing it for part of the records makes a new
column, but not at once: a write for a selection is kept *pending* with
that selection's values, so that the next statements of the same block
(which run for the same selection, usually the same list object) read and
replace it without touching the full column. It is merged into the column ("settled") only
when the field is read for another selection, or at the end.

A record whose program fails or aborts leaves the run with its outcome in
``failed``; the others go on.
"""

from __future__ import annotations

from typing import Any, Protocol

from .batch_values import (ABSENT, ABSENT_COLUMN, FALSE, NULL, TRUE, Column, Uniform, Values, pick, scattered,
                           types_of)

#: outcomes of records that left a run
FAILED = "error"
ABORTED = "abort"

#: how a pending write leaves a field: there (PRESENT), deleted (REMOVED), there where it was (KEEP:
#: ``del`` of a path inside it)
PRESENT, REMOVED, KEEP = 0, 1, 2


class Source(Protocol):
    """Where the run reads the records' fields: ``n`` records, one top-level field at a time.

    ``column(key)`` gives the column (None in a list where the field is
    absent, ``Uniform(ABSENT)`` when it is absent from every record), which
    records have it when some lack it (a list of booleans; None: all do),
    and the types of its values when known (None: not known).
    """

    n: int

    def column(self, key: str) -> tuple[Column, list[bool] | None, set[type] | None]: ...


class BatchRun:
    """The state of one run: the event's columns, the variables, the records that left."""

    __slots__ = ("source", "n", "cols", "present", "pending", "written", "vars", "var_pending", "failed", "live",
                 "cache", "_types", "fresh", "owned")

    def __init__(self, source: Source, slots: int, failed: dict[int, tuple[str, Exception]]) -> None:
        self.source = source
        self.n = source.n
        self.cols: dict[str, Column] = {}
        #: key -> whether each record has the field (for a list column some records lack); no entry: all have it
        self.present: dict[str, list[bool]] = {}
        #: key -> (selection, values, PRESENT/REMOVED/KEEP): a write not merged into ``cols`` yet
        self.pending: dict[str, tuple[list[int], Values, int]] = {}
        #: top-level keys written or deleted, in the order of their first write
        self.written: dict[str, None] = {}
        self.vars: list[Column] = [NULL] * slots
        self.var_pending: dict[int, tuple[list[int], Values]] = {}
        #: record number -> (FAILED or ABORTED, the error or Aborted)
        self.failed = failed
        #: how many records are still running
        self.live = self.n - len(failed)
        #: per-run memo of function fusions (``is_json`` then ``parse_json`` of the same text)
        self.cache: dict[Any, Any] = {}
        self._types: dict[int, tuple[list[Any], set[type]]] = {}
        #: id -> a list of values no place holds yet whose objects nothing else holds (``give``)
        self.fresh: dict[int, list[Any]] = {}
        #: places, ("v", slot) or ("f", key), whose objects no other place or value holds: flat dicts that
        #: ``del`` of a key may change in place (nobody else can see the change)
        self.owned: set[tuple[str, Any]] = set()

    # -- fields -------------------------------------------------------------

    def values(self, key: str, sel: list[int]) -> Values:
        """The field's values for ``sel`` (null where absent)."""
        pending = self.pending.get(key)
        if pending is not None:
            if same(pending[0], sel):
                return NULL if pending[2] == REMOVED else pending[1]
            self.settle(key)
        col = self._base(key)
        values = pick(col, sel, self.n)
        if type(values) is Uniform:
            return NULL if values.value is ABSENT else values
        if values is not col:
            known = self._types.get(id(col))
            if known is not None and known[0] is col:  # some of the column's values: of (some of) its types
                self._types[id(values)] = (values, known[1])
        return values

    def exists(self, key: str, sel: list[int]) -> Values:
        pending = self.pending.get(key)
        if pending is not None:
            if pending[2] != KEEP and same(pending[0], sel):
                return TRUE if pending[2] == PRESENT else FALSE
            base = self._base(key)
            if pending[2] == PRESENT and type(base) is Uniform and base.value is ABSENT:
                there = [False] * self.n  # only where the pending write put it
                for i in pending[0]:
                    there[i] = True
                return pick(there, sel, self.n)
            self.settle(key)
        col = self._base(key)
        if type(col) is Uniform:
            return TRUE if col.value is not ABSENT else FALSE
        present = self.present.get(key)
        if present is None:
            return TRUE
        return pick(present, sel, self.n)

    def write(self, key: str, sel: list[int], values: Values, mode: int = PRESENT) -> None:
        """Set (or with REMOVED delete) the field ``key`` of the records of ``sel``."""
        self.written[key] = None
        pending = self.pending.get(key)
        self._claim(("f", key), values, len(sel) == self.n or (pending is None and type(values) is list and _nothing(
            self._base(key))))
        if len(sel) == self.n or (len(sel) == self.live and mode != KEEP and type(values) is Uniform):
            if pending is not None:
                del self.pending[key]
            if mode == KEEP:
                base = self._base(key)
                if type(base) is not Uniform or base.value is not ABSENT:
                    self.cols[key] = values
                return
            self.cols[key] = ABSENT_COLUMN if mode == REMOVED else values
            self.present.pop(key, None)
            return
        if pending is not None:
            if same(pending[0], sel):
                self.pending[key] = (pending[0], values, pending[2] if mode == KEEP else mode)
                return
            self.settle(key)
        self.pending[key] = (sel, values, mode)

    def settle(self, key: str) -> None:
        """Merge the pending write of ``key`` into its column."""
        sel, values, mode = self.pending.pop(key)
        before = self._base(key)
        nothing = _nothing(before)
        if nothing and mode != PRESENT:
            return
        self.cols[key] = scattered(before, sel, NULL if mode == REMOVED else values, self.n)
        if mode == KEEP:
            return
        present = self.present.get(key)
        if present is None:
            if mode == PRESENT and not nothing:
                return
            present = [not nothing] * self.n
        else:
            present = list(present)
        flag = mode == PRESENT
        for i in sel:
            present[i] = flag
        if flag and False not in present:
            self.present.pop(key, None)  # every record has it now
        else:
            self.present[key] = present

    def final(self, key: str) -> tuple[Column, list[bool] | None]:
        """A field's column and which records have it, once the program has run."""
        if key in self.pending:
            self.settle(key)
        return self._base(key), self.present.get(key)

    def _base(self, key: str) -> Column:
        col = self.cols.get(key)
        if col is None:
            col, present, kinds = self.source.column(key)
            self.cols[key] = col
            if present is not None:
                self.present[key] = present
            if kinds is not None:
                self._types[id(col)] = (col, kinds)
        return col

    # -- variables ----------------------------------------------------------

    def variable(self, slot: int, sel: list[int]) -> Values:
        pending = self.var_pending.get(slot)
        if pending is not None:
            if same(pending[0], sel):
                return pending[1]
            self.settle_variable(slot)
        return pick(self.vars[slot], sel, self.n)

    def assign(self, slot: int, sel: list[int], values: Values) -> None:
        pending = self.var_pending.get(slot)
        self._claim(("v", slot), values, len(sel) == self.n or (pending is None and self.vars[slot] is NULL))
        if len(sel) == self.n or (len(sel) == self.live and type(values) is Uniform):
            if pending is not None:
                del self.var_pending[slot]
            self.vars[slot] = values
            return
        if pending is not None:
            if same(pending[0], sel):
                self.var_pending[slot] = (pending[0], values)
                return
            self.settle_variable(slot)
        self.var_pending[slot] = (sel, values)

    def settle_variable(self, slot: int) -> None:
        sel, values = self.var_pending.pop(slot)
        self.vars[slot] = scattered(self.vars[slot], sel, values, self.n)

    # -- ownership ----------------------------------------------------------

    def give(self, values: list[Any]) -> list[Any]:
        """Note that ``values`` is the only holder of its objects, all flat dicts (a new decode, or a place's
        values read for the last time): the place that stores it first owns them."""
        self.fresh[id(values)] = values
        return values

    def _claim(self, place: tuple[str, Any], values: Values, clean: bool) -> None:
        """A place takes ``values`` for some records: it owns its objects if they are fresh and it held no others
        (``clean``: it had nothing, or owned what it had, or every record is written)."""
        if self.fresh.pop(id(values), None) is values and (clean or place in self.owned):
            self.owned.add(place)
        else:
            self.owned.discard(place)

    def release(self, place: tuple[str, Any], values: Values, last: bool) -> Values:
        """A whole read of a place: its objects are seen elsewhere now; on its ``last`` read they move on with
        ``values`` (nothing reads the place again)."""
        if place in self.owned:
            self.owned.discard(place)
            if last and type(values) is list:
                self.give(values)
        return values

    # -- records ------------------------------------------------------------

    def fail(self, errors: dict[int, Exception], outcome: str = FAILED) -> None:
        failed = self.failed
        for i, error in errors.items():
            if i not in failed:
                failed[i] = (outcome, error)
                self.live -= 1

    def know(self, values: list[Any], kinds: set[type]) -> list[Any]:
        """Note the types of a list a function just made (``types`` then needs no pass over it)."""
        self._types[id(values)] = (values, kinds)
        return values

    def types(self, values: list[Any]) -> set[type]:
        """The distinct types of a value list (computed once per list: lists are never changed)."""
        known = self._types.get(id(values))
        if known is not None and known[0] is values:
            return known[1]
        kinds = types_of(values)
        self._types[id(values)] = (values, kinds)
        return kinds


def _nothing(col: Column) -> bool:
    return type(col) is Uniform and col.value is ABSENT


def same(a: list[int], b: list[int]) -> bool:
    """Whether two selections are the same records (most often the same list)."""
    return a is b or (len(a) == len(b) and a == b)
