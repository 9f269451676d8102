"""The sample transform: keeps 1 record in ``rate`` (or a ``ratio`` of them), as Vector's ``sample`` does.

Vector's decisions, reproduced exactly:

- ``rate``: a counter per ``group_by`` value (one counter without it); a record
  is kept when the counter's value before it is a multiple of ``rate``, so
  the first record and then every ``rate``-th are kept.
- ``ratio``: an accumulator per group starting at ``1 - ratio``; each record
  adds ``ratio`` and is kept when the sum reaches 1 (which then takes 1 off).
  The first record is kept, then the kept ones are spread evenly.
- ``key_field``: a record that has the field is decided by the SeaHash of the
  field's text instead (kept when the hash is a multiple of ``rate``, or at
  most ``ratio`` of 2^64): records with one value go or stay together, and the
  same values are kept as by Vector. Records without it use the counter.
- ``exclude``: matching records are kept untouched and advance no counter.
- ``sample_rate_key``: kept records get the configured rate as text
  (``"10"``, ``"0.13"``) at that path (``""``: nothing added).
- ``ratio_field`` / ``rate_field``: a record's own ratio or rate, decided on a
  counter of its own (``sample_dynamic.py``); others use the static settings.

Dropped records go with their batch's acknowledgement (see ``throttle``).
"""

from __future__ import annotations

from collections import Counter
from operator import attrgetter
from typing import Any

import msgspec

from logagent.acks import Batch
from logagent.event import FileContext, LogEvent
from logagent.sinks.templates import FieldPath, Template, compile_template, parse_field_path
from logagent.transforms.base import DEFAULT_OUTPUT, Transform, estimate_bytes
from logagent.transforms.options import batch_condition, excluded, number_text
from logagent.transforms.record_fields import Draft, value_at
from logagent.transforms.sample_config import SampleConfig
from logagent.transforms.sample_dynamic import DynamicSampler
from logagent.transforms.seahash import seahash

_MISSING = object()
_FIELDS = attrgetter("fields")
_with_ctx = msgspec.structs.replace
#: distinct key_field values whose verdict is remembered (cleared when full)
_VERDICT_CACHE = 65536
_json = msgspec.json.Encoder().encode


class SampleTransform(Transform):
    kind = "sample"

    def __init__(self, component_id: str, config: SampleConfig) -> None:
        super().__init__(component_id)
        self.rate = config.rate
        self.ratio = config.ratio
        #: the text kept records carry, as Vector writes it
        self.rate_text = number_text(config.rate if config.rate is not None else config.ratio)  # type: ignore[arg-type]
        if config.ratio is not None:
            self._hash_limit = min(int(config.ratio * 2.0**64), (1 << 64) - 1)
        self.key_path: FieldPath | None = parse_field_path(config.key_field) if config.key_field else None
        own = config.ratio_field or config.rate_field
        #: where a record's own ratio or rate is, and what decides records that have one
        self.own_path: FieldPath | None = parse_field_path(own) if own else None
        self.dynamic = DynamicSampler(ratio=config.ratio_field is not None) if own else None
        self.group_by: Template | None = compile_template(config.group_by) if config.group_by else None
        self._group_memo = ("sample.group", self.group_by)
        self.exclude = batch_condition(config.exclude)
        self.conditions = [self.exclude.condition] if self.exclude is not None else []
        self.rate_path: FieldPath | None = parse_field_path(config.sample_rate_key) if config.sample_rate_key else None
        self._ctx_memo = ("sample.rate", self.rate_path, self.rate_text)
        #: rate mode: records seen per group; ratio mode: the accumulator per group
        self._counters: dict[str | None, Any] = {}
        self._verdicts: dict[str, bool] = {}
        self.discarded: Counter[str] = Counter()

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        events = batch.events
        total = len(events)
        self.events_in += total
        skip = excluded(self.exclude, batch)
        if skip is True:
            self.events_out += total
            return [(DEFAULT_OUTPUT, batch)]
        group = self._batch_group(batch)
        labels = None
        if (skip is False and self.key_path is None and self.rate is not None and self.dynamic is None
                and not isinstance(group, list)):
            seen = self._counters.get(group, 0)
            self._counters[group] = seen + total
            kept = events[(-seen) % self.rate :: self.rate]
            kept_flags = None
        else:
            kept_flags, labels = self._decide_each(events, group, skip)
            kept = [e for e, keep in zip(events, kept_flags) if keep]
            if labels is not None:
                labels = [label for label, keep in zip(labels, kept_flags) if keep]
        self.discarded["sampled"] += total - len(kept)
        if not kept:
            batch.release()
            return []
        self.events_out += len(kept)
        out_ctx = batch.ctx
        if self.rate_path is not None:
            marks = None if kept_flags is None else [not s for k, s in zip(kept_flags, _flags(skip, total)) if k]
            kept, out_ctx = self._mark(kept, marks, batch.ctx, labels)
        elif len(kept) == total:
            return [(DEFAULT_OUTPUT, batch)]
        return [(DEFAULT_OUTPUT, Batch(kept, batch.acks, estimate_bytes(batch, len(kept)), out_ctx,
                                       batch.ctx_with_fields if self.rate_path is None else None))]

    # -- decisions ----------------------------------------------------------------

    def _decide_each(self, events: list[LogEvent], group: Any,
                     skip: bool | list[bool]) -> tuple[list[bool], list[str | None] | None]:
        """Each record's verdict; with ``ratio_field``/``rate_field``, each one's own rate label (None: static)."""
        groups = group if isinstance(group, list) else None
        decide = self._decide
        key_path, own_path, dynamic = self.key_path, self.own_path, self.dynamic
        flags = []
        labels: list[str | None] | None = [] if dynamic is not None else None
        for index, event in enumerate(events):
            if skip is not False and skip[index]:  # type: ignore[index]
                flags.append(True)
                if labels is not None:
                    labels.append(None)
                continue
            record_group = groups[index] if groups is not None else group
            if dynamic is not None and labels is not None:
                own = dynamic.parse(value_at(event, own_path, _MISSING))  # type: ignore[arg-type]
                labels.append(own[1] if own is not None else None)
                if own is not None:
                    flags.append(dynamic.keep(own[0], record_group))
                    continue
            value = value_at(event, key_path, _MISSING) if key_path is not None else _MISSING
            flags.append(decide(record_group, value))
        return flags, labels

    def _decide(self, group: str | None, value: Any) -> bool:
        counters = self._counters
        if self.rate is not None:
            seen = counters.get(group, 0)
            counters[group] = seen + 1
            verdict = seen % self.rate == 0
        else:
            accumulated = counters.get(group)
            if accumulated is None:
                accumulated = 1.0 - self.ratio  # type: ignore[operator]
            accumulated += self.ratio
            verdict = accumulated >= 1.0
            counters[group] = accumulated - 1.0 if verdict else accumulated
        if value is _MISSING:
            return verdict
        return self._hash_verdict(_lossy_text(value))

    def _hash_verdict(self, text: str) -> bool:
        verdict = self._verdicts.get(text)
        if verdict is None:
            digest = seahash(text.encode("utf-8", "surrogatepass"))
            verdict = digest % self.rate == 0 if self.rate is not None else digest <= self._hash_limit
            if len(self._verdicts) >= _VERDICT_CACHE:
                self._verdicts.clear()
            self._verdicts[text] = verdict
        return verdict

    def _batch_group(self, batch: Batch) -> str | None | list[str | None]:
        template = self.group_by
        if template is None:
            return None
        if not template.reads_per_line:
            if batch.ctx is not None:
                return self._context_group(batch.events[0])
            return [self._context_group(e) if e.fields is None else template.render(e) for e in batch.events]
        return [template.render(e) for e in batch.events]

    def _context_group(self, event: LogEvent) -> str | None:
        memo = event.ctx.memo
        group = memo.get(self._group_memo, memo)
        if group is memo:
            group = memo[self._group_memo] = self.group_by.render(event)  # type: ignore[union-attr]
        return group  # type: ignore[return-value]

    # -- the sample_rate field ------------------------------------------------------

    def _mark(self, kept: list[LogEvent], marks: list[bool] | None, ctx: FileContext | None,
              labels: list[str | None] | None = None) -> tuple[list[LogEvent], FileContext | None]:
        """``kept`` with the rate added to the sampled ones (``marks``; all when None), and the batch's context.

        ``labels``: each kept record's own rate text (None: the configured one).
        """
        path = self.rate_path
        assert path is not None
        if marks is None and ctx is not None and len(path) == 1 and not any(map(_FIELDS, kept)):
            derived = self._rated_context(ctx)  # one file, no record with its own fields: one derived context
            return [_with_ctx(event, ctx=derived) for event in kept], derived
        out = []
        contexts = set()
        for index, event in enumerate(kept):
            if marks is not None and not marks[index]:
                out.append(event)
                contexts.add(None)
                continue
            text = labels[index] if labels is not None else None
            if event.fields is None and len(path) == 1 and (text is None or text == self.rate_text):
                derived = self._rated_context(event.ctx)
                out.append(LogEvent(event.message, event.stream, event.timestamp, derived, event.truncated))
                contexts.add(derived)
                continue
            draft = Draft(event)
            out.append(draft.event(event) if draft.assign(path, text or self.rate_text) else event)
            contexts.add(None)
        shared = contexts.pop() if len(contexts) == 1 and ctx is not None else None
        return out, shared

    def _rated_context(self, ctx: FileContext) -> FileContext:
        """``ctx`` with the rate at the top-level ``sample_rate_key``, made once per context."""
        derived = ctx.memo.get(self._ctx_memo)
        if derived is None:
            fields = dict(ctx.fields)
            fields[self.rate_path[0]] = self.rate_text  # type: ignore[index]
            derived = ctx.memo[self._ctx_memo] = FileContext(fields)
        return derived  # type: ignore[no-any-return]


def _flags(skip: bool | list[bool], total: int) -> list[bool]:
    return skip if isinstance(skip, list) else [skip] * total


def _lossy_text(value: Any) -> str:
    """The text Vector hashes for a value (its ``to_string_lossy``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float)):
        return number_text(value)
    return _json(value).decode()
