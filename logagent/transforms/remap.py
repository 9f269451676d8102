"""The remap transform: a VRL program run on each record, with Vector's semantics.

A runtime error passes the record on unchanged (``drop_on_error: true``
drops it); ``abort`` drops it (``drop_on_abort: false`` passes it on
unchanged); with ``reroute_dropped: true`` dropped records go to the output
``<id>.dropped`` carrying ``metadata.dropped`` (reason, message, component).
A program that reads and writes only context fields (``del(.kubernetes.x)``,
renames) runs once per ``FileContext``, not per record.
"""

from __future__ import annotations

import gc
from collections import Counter
from typing import Any

import structlog

from logagent.acks import Batch
from logagent.event import PER_LINE_KEYS, FileContext, LogEvent
from logagent.transforms.base import DEFAULT_OUTPUT, Transform, estimate_bytes
from logagent.transforms.parse_json import merged_record
from logagent.transforms.remap_batch import ABORTED_REASON, RUNTIME_ERROR, EventsSource, new_events
from logagent.transforms.remap_config import DROPPED, RemapConfig
from logagent.transforms.remap_records import derived_context, event_to_target, target_to_event, vector_records
from logagent.vrl.batch_values import NoProgress
from logagent.vrl.program import Aborted, compile_program
from logagent.vrl.runtime import VrlRuntimeError

#: programs that are exactly Vector's "merge the message's JSON object" idiom (spaces aside)
MERGE_IDIOMS = frozenset({
    ". = merge(., parse_json!(string!(.message))) ?? .",
    ". = merge(., parse_json!(.message)) ?? .",
    ". = merge!(., parse_json!(string!(.message))) ?? .",
})

ABORTED = ABORTED_REASON

log = structlog.get_logger(__name__)


class RemapTransform(Transform):
    kind = "remap"

    def __init__(self, component_id: str, config: RemapConfig) -> None:
        super().__init__(component_id)
        self.config = config
        self.program = compile_program(config.program_text())
        self.errors: Counter[str] = Counter()
        self.events_dropped = 0
        self.last_error: str | None = None
        self._memo_key = ("remap", id(self))
        self._batch_key = ("remap.batch", id(self))
        #: field dicts shared by the records whose own fields are the same strings (``remap_fields``)
        self._interned: dict[object, object] = {}
        paths = self.program.reads | self.program.writes
        self.context_only = self.program.pure and all(
            root == "." and segments and type(segments[0]) is str and segments[0] not in PER_LINE_KEYS
            for root, segments in paths)
        #: whether the program can see ``.timestamp`` (else the record's text stays, unparsed)
        self.timestamp_seen = any(not segments or segments[0] == "timestamp"
                                  for root, segments in paths if root == ".")
        #: the top-level keys the program can write, when it writes no root (None: it may write any)
        self.written = written_keys(self.program.writes)
        #: the merge idiom: records whose message is an object without a key they have are merged as
        #: parse_json merges (validated, not decoded), with the same result as VRL's
        self.merge_idiom = " ".join(_strip_comments(self.program.source).split()) in MERGE_IDIOMS

    @property
    def outputs(self) -> tuple[str, ...]:
        return (DEFAULT_OUTPUT, DROPPED) if self.config.reroute_dropped else (DEFAULT_OUTPUT,)

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        events = batch.events
        self.events_in += len(events)
        if self.context_only and batch.ctx is not None:
            outcome = self._context_outcome(batch.ctx)
            if type(outcome) is FileContext:
                return self._context_batch(batch, outcome)
        kept: list[LogEvent] = []
        dropped: list[LogEvent] = []
        if self.program.batch is not None and not self.context_only:
            ctx = _common_context(batch)
            done = self._batch_outcomes(events, ctx) if ctx is not None else None
            if done is not None:
                outcomes, failed = done
                if not failed:  # every record made an event
                    return self._outputs(batch, outcomes, dropped)
                for event, outcome in zip(events, outcomes):
                    if type(outcome) is LogEvent:
                        kept.append(outcome)
                    else:
                        self._failed(event, outcome, kept, dropped)
                return self._outputs(batch, kept, dropped)
        run = self._run_context if self.context_only else self._run_merge if self.merge_idiom else self._run_record
        for event in events:
            outcome = run(event) if event.fields is None or not self.context_only else self._run_record(event)
            if type(outcome) is LogEvent:
                kept.append(outcome)
            elif type(outcome) is list:  # the program's event was not an object: Vector's records of it
                kept += outcome
            else:
                self._failed(event, outcome, kept, dropped)
        return self._outputs(batch, kept, dropped)

    def _batch_outcomes(self, events: list[LogEvent], ctx: FileContext) -> tuple[list[Any], bool] | None:
        """(each event's outcome from the batch program, whether any failed); None: run them per record."""
        source = EventsSource(events, ctx, self.timestamp_seen)
        collecting = gc.isenabled()
        gc.disable()  # a batch makes many short-lived containers: no collection looks at them
        try:
            run = self.program.batch.run(source)  # type: ignore[union-attr]
            outcomes = new_events(run, source, self._batch_key, self._interned)
            failed = bool(run.failed)
            # the run's columns go before collections resume: the first one would scan them all
            del run, source
            return outcomes, failed
        except NoProgress as exc:  # a batch engine bug: said loudly, and the batch runs per record
            log.error("remap_batch_no_progress", component=self.component_id, error=str(exc))
            return None
        finally:
            if collecting:
                gc.enable()

    def _run_merge(self, event: LogEvent) -> Any:
        merged = merged_record(event)
        return merged if merged is not None else self._run_record(event)

    def _run_record(self, event: LogEvent) -> Any:
        try:
            target, stamp = event_to_target(event, self.timestamp_seen)
            _, target, _ = self.program.run(target)
            if type(target) is not dict:
                return [target_to_event(record, event) for record in vector_records(target)]
            return target_to_event(target, event, stamp, self.written)
        except VrlRuntimeError as exc:
            return (RUNTIME_ERROR, str(exc))
        except Aborted as exc:
            return (ABORTED, str(exc))

    def _context_batch(self, batch: Batch, ctx: FileContext) -> list[tuple[str, Batch]]:
        """A batch of one context, none of its events with ``fields``: the program's result, once."""
        if ctx is not batch.ctx:
            events = [LogEvent(e.message, e.stream, e.timestamp, ctx, e.truncated) for e in batch.events]
            batch = Batch(events, batch.acks, batch.nbytes, ctx)
        self.events_out += len(batch.events)
        return [(DEFAULT_OUTPUT, batch)]

    def _run_context(self, event: LogEvent) -> Any:
        outcome = self._context_outcome(event.ctx)
        if type(outcome) is tuple:
            return outcome
        if outcome is event.ctx:
            return event
        return LogEvent(event.message, event.stream, event.timestamp, outcome, event.truncated)

    def _context_outcome(self, ctx: FileContext) -> Any:
        """The context a context-only program makes of ``ctx``, or (reason, message); once per context."""
        outcome = ctx.memo.get(self._memo_key)
        if outcome is None:
            try:
                _, target, _ = self.program.run(dict(ctx.fields))
                outcome = derived_context(ctx, target)
            except VrlRuntimeError as exc:
                outcome = (RUNTIME_ERROR, str(exc))
            except Aborted as exc:
                outcome = (ABORTED, str(exc))
            ctx.memo[self._memo_key] = outcome
        return outcome

    def _failed(self, event: LogEvent, outcome: tuple[str, str], kept: list[LogEvent],
                dropped: list[LogEvent]) -> None:
        reason, message = outcome
        self.last_error = message
        if reason == RUNTIME_ERROR:
            self.errors[reason] += 1
            drop = self.config.drop_on_error
        else:
            self.errors[reason] += 1
            drop = self.config.drop_on_abort
        if not drop:
            kept.append(event)
        elif self.config.reroute_dropped:
            dropped.append(self._dropped_record(event, "error" if reason == RUNTIME_ERROR else "abort", message))
        else:
            self.events_dropped += 1

    def _dropped_record(self, event: LogEvent, reason: str, message: str) -> LogEvent:
        target = event.to_dict()
        metadata = target.get("metadata")
        metadata = dict(metadata) if type(metadata) is dict else {}
        metadata["dropped"] = {"reason": reason, "message": message, "component_id": self.component_id,
                               "component_type": "remap", "component_kind": "transform"}
        target["metadata"] = metadata
        return target_to_event(target, event)

    def _outputs(self, batch: Batch, kept: list[LogEvent], dropped: list[LogEvent]) -> list[tuple[str, Batch]]:
        produced = [(name, events) for name, events in ((DEFAULT_OUTPUT, kept), (DROPPED, dropped)) if events]
        if not produced:
            batch.release()
            return []
        if len(produced) > 1:
            batch.acquire(len(produced) - 1)
        self.events_out += len(kept)
        return [(name, Batch(events, batch.acks, estimate_bytes(batch, len(events)))) for name, events in produced]


def _common_context(batch: Batch) -> FileContext | None:
    """The context every event of ``batch`` shares when none has per-record fields, else None."""
    if batch.ctx is not None:
        return batch.ctx
    ctx = batch.events[0].ctx if batch.events else None
    for event in batch.events:
        if event.ctx is not ctx or event.fields is not None:
            return None
    return ctx


def written_keys(writes: frozenset[tuple[str, tuple[str | int, ...]]]) -> frozenset[str] | None:
    """The event's top-level keys among ``writes``; None when one of them is the root (or not a key)."""
    keys = set()
    for root, segments in writes:
        if root != ".":
            continue
        if not segments or type(segments[0]) is not str:
            return None
        keys.add(segments[0])
    return frozenset(keys)


def _strip_comments(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
