"""Transforms run inline: a synchronous function from one batch to output batches.

Ownership: ``process`` receives one reference on the batch's ack groups and
must hand each reference on (in an output batch) or release it. Output batches
that share the input's groups acquire them first.
"""

from __future__ import annotations

import abc
from itertools import compress, repeat
from operator import attrgetter, eq, is_, not_
from typing import TYPE_CHECKING

from logagent.acks import Batch
from logagent.event import MERGED_MESSAGE, PER_LINE_KEYS, LogEvent

if TYPE_CHECKING:
    from logagent.vrl.condition import Condition

DEFAULT_OUTPUT = ""

#: per-line keys that are LogEvent attributes holding exactly what ``get`` returns
EVENT_ATTRIBUTES = frozenset({"message", "stream", "timestamp"})
_FIELDS = attrgetter("fields")
_CTX = attrgetter("ctx")


class Transform(abc.ABC):
    kind: str = "transform"

    def __init__(self, component_id: str) -> None:
        self.component_id = component_id
        self.events_in = 0
        self.events_out = 0

    @property
    def outputs(self) -> tuple[str, ...]:
        """Names of this transform's outputs; the default output is ``""``."""
        return (DEFAULT_OUTPUT,)

    @abc.abstractmethod
    def process(self, batch: Batch) -> list[tuple[str, Batch]]: ...


class BatchCondition:
    """A condition applied to batches, once per file context when it can be.

    A condition that reads no per-line field (only ``.kubernetes.*``, ``.file``
    ...) has the same answer for every line of a file under one metadata
    version, so its result is cached in the context's memo. Except for a
    record whose own ``fields`` (from ``parse_json``) hold a top-level key the
    condition reads: such a key may be absent from the context, or the record
    may carry its own version of it, so that record is evaluated by itself.
    """

    __slots__ = ("condition", "metadata_only", "field_equals", "top_keys")

    def __init__(self, condition: Condition) -> None:
        self.condition = condition
        self.metadata_only = condition.reads_only_outside(PER_LINE_KEYS)
        #: the top-level keys the condition reads
        self.top_keys = frozenset(path[0] for path in condition.paths if path)
        #: (attribute, text) for ``.stream == "stderr"``-like conditions on a
        #: per-line field: evaluated by comparing the event attribute in C
        self.field_equals: tuple[str, str] | None = None
        shape = condition.field_equals
        if shape is not None and shape[0] in EVENT_ATTRIBUTES:
            self.field_equals = shape

    def values(self, events: list[LogEvent]) -> list[object]:
        """The compared field of each event (only for a ``field_equals`` condition)."""
        assert self.field_equals is not None
        return list(map(attrgetter(self.field_equals[0]), events))

    def split(self, batch: Batch) -> tuple[list[LogEvent], list[LogEvent]]:
        """(matching, not matching) events, in order."""
        events = batch.events
        condition = self.condition
        if self.field_equals is not None:
            text = self.field_equals[1]
            hits = list(map(eq, self.values(events), repeat(text)))
            return list(compress(events, hits)), list(compress(events, map(not_, hits)))
        if self.metadata_only:
            if batch.ctx is not None:  # one context, no per-record fields (see Batch)
                return (events, []) if self._memo(batch.ctx) else ([], events)
            shared = batch.ctx_with_fields
            if shared is not None and self.top_keys.isdisjoint(shared[1]):
                return (events, []) if self._memo(shared[0]) else ([], events)
            top_keys = self.top_keys
            # in C: do the records' own fields (from parse_json) hold no key the condition reads?
            if all(map(top_keys.isdisjoint, filter(None, map(_FIELDS, events)))) and self._merged_read_nothing(events):
                contexts = set(map(_CTX, events))
                if len(contexts) == 1:
                    return (events, []) if self._memo(contexts.pop()) else ([], events)
                top_keys = frozenset()  # nothing to check per record below
            matched: list[LogEvent] = []
            unmatched: list[LogEvent] = []
            last_ctx = None
            verdict = False
            for event in events:
                fields = event.fields
                if fields is not None and (
                    not top_keys.isdisjoint(fields)
                    # a merged message may hold any key its context lacks
                    or (fields is MERGED_MESSAGE and not top_keys.issubset(event.ctx.fields))
                ):
                    (matched if condition(event) else unmatched).append(event)
                    continue
                if event.ctx is not last_ctx:
                    last_ctx = event.ctx
                    verdict = self._memo(last_ctx)
                (matched if verdict else unmatched).append(event)
            return matched, unmatched
        matched = []
        unmatched = []
        for event in events:
            if condition(event):
                matched.append(event)
            else:
                unmatched.append(event)
        return matched, unmatched

    def _merged_read_nothing(self, events: list[LogEvent]) -> bool:
        """False when a record with MERGED_MESSAGE fields may hold a key the condition reads.

        Such a record's own keys are unknown without decoding, but never keys
        of its context: a condition reading only those still has one answer
        per context.
        """
        marked = list(map(is_, map(_FIELDS, events), repeat(MERGED_MESSAGE)))
        if not any(marked):
            return True
        contexts = set(map(_CTX, compress(events, marked)))
        return all(self.top_keys.issubset(ctx.fields) for ctx in contexts)

    def _memo(self, ctx) -> bool:  # type: ignore[no-untyped-def]
        memo = ctx.memo
        verdict = memo.get(self.condition)
        if verdict is None:
            verdict = memo[self.condition] = self.condition(ctx)
        return verdict


def estimate_bytes(batch: Batch, kept: int) -> int:
    total = len(batch.events)
    return batch.nbytes if kept == total or not total else batch.nbytes * kept // total
