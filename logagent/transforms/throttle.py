"""The throttle transform: at most ``threshold`` records per key per ``window_secs``; the rest are dropped.

Vector's algorithm (the ``governor`` crate's GCRA with a burst of
``threshold``): each key holds one number, its theoretical arrival time
``tat``. With ``T = window_secs / threshold`` (in whole nanoseconds) and a
tolerance ``tau = T * (threshold - 1)``, a record arriving at ``now`` passes
when ``now >= tat - tau``, and then ``tat = max(tat, now) + T``. That is a
bucket of ``threshold`` tokens refilled one per ``T``: a key may send its
whole threshold at once, then one record per ``T``. A record that does not
pass leaves ``tat`` alone.

A key whose ``tat`` is not after ``now`` behaves exactly like a key never
seen, so it is forgotten: once per window the keys are swept, and memory
follows the keys active in the last window or two, not every key ever seen.
All records of one batch are judged at the same instant, the first ones of
each key first (as Vector would, one by one).

Dropped records are never handed on; their batch's acknowledgement groups
are released with the records kept (or at once when none is), so the file
positions move past them and a restart does not read them again.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from itertools import compress

import structlog

from logagent.acks import Batch
from logagent.event import LogEvent
from logagent.sinks.templates import Template, compile_template
from logagent.transforms.base import DEFAULT_OUTPUT, Transform, estimate_bytes
from logagent.transforms.options import batch_condition, excluded
from logagent.transforms.throttle_config import ThrottleConfig

log = structlog.get_logger(__name__)

#: keys counted apart in ``discarded_by_key``; the discards of any further key count under OTHER_KEY
MAX_METRIC_KEYS = 1000
OTHER_KEY = "_other"
#: how often the agent's log may say, per key, that the key is being throttled
LOG_INTERVAL_SECS = 60.0
_LOG_INTERVAL_NS = int(LOG_INTERVAL_SECS * 1e9)
#: keys whose last warning is remembered (the oldest is forgotten past this: its next drop is named at once)
MAX_NAMED_KEYS = 4096
#: the label of records whose key field is missing (Vector's)
NO_KEY = "None"

Key = str | None


class ThrottleTransform(Transform):
    kind = "throttle"

    def __init__(self, component_id: str, config: ThrottleConfig, *,
                 clock: Callable[[], int] = time.monotonic_ns) -> None:
        super().__init__(component_id)
        self.threshold = config.threshold
        self.window_secs = config.window_secs
        self.window_ns = max(1, round(config.window_secs * 1e9))
        #: T: one token per this many nanoseconds
        self.emission_ns = max(1, self.window_ns // config.threshold)
        #: tau: how far ahead of now a key's tat may be and still pass
        self.tolerance_ns = self.emission_ns * (config.threshold - 1)
        self.template: Template | None = compile_template(config.key_field) if config.key_field else None
        self._memo_key = ("throttle.key", self.template)
        self.exclude = batch_condition(config.exclude)
        self.conditions = [self.exclude.condition] if self.exclude is not None else []
        self.per_key = config.internal_metrics.emit_events_discarded_per_key
        self._clock = clock
        #: key -> theoretical arrival time (ns on ``clock``)
        self._tat: dict[Key, int] = {}
        self._next_sweep = clock() + self.window_ns
        #: records dropped, by reason (``logagent_component_discarded_events``)
        self.discarded: Counter[str] = Counter()
        #: records dropped per key, when ``emit_events_discarded_per_key``
        self.discarded_by_key: Counter[str] = Counter()
        #: on the transform's clock, so the once-a-minute warning follows the same time as the budgets
        #: key -> [when the log last named it (ns on ``clock``), records dropped since]
        self._named: dict[Key, list[int]] = {}
        self._next_log_sweep = clock() + _LOG_INTERVAL_NS

    @property
    def held_keys(self) -> int:
        """Keys whose budget is remembered (the ones active within about a window)."""
        return len(self._tat)

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        now = self._clock()
        out = self._judge(batch, now)
        if now >= self._next_log_sweep:  # after this batch's drops: a key named now is not named twice
            self._sweep_named(now)
        return out

    def _judge(self, batch: Batch, now: int) -> list[tuple[str, Batch]]:
        events = batch.events
        total = len(events)
        self.events_in += total
        if now >= self._next_sweep:
            self._sweep(now)
        skip = excluded(self.exclude, batch)
        if skip is True:
            self.events_out += total
            return [(DEFAULT_OUTPUT, batch)]
        keys = self._keys(batch)
        if skip is False and not isinstance(keys, list):
            kept_count = self._admit(keys, total, now)
            if kept_count < total:
                self._dropped(keys, total - kept_count, now)
            kept = events if kept_count == total else events[:kept_count]
        else:
            kept = self._judge_each(events, keys, skip, now)
        return self._output(batch, kept)

    def _judge_each(self, events: list[LogEvent], keys: Key | list[Key], skip: bool | list[bool],
                    now: int) -> list[LogEvent]:
        per_event = keys if isinstance(keys, list) else [keys] * len(events)
        passes = []
        drops: Counter[Key] = Counter()
        admit = self._admit
        for index, key in enumerate(per_event):
            if skip is not False and skip[index]:  # type: ignore[index]
                passes.append(True)
            elif admit(key, 1, now):
                passes.append(True)
            else:
                passes.append(False)
                drops[key] += 1
        for key, count in drops.items():
            self._dropped(key, count, now)
        return list(compress(events, passes))

    def _output(self, batch: Batch, kept: list[LogEvent]) -> list[tuple[str, Batch]]:
        if not kept:
            batch.release()
            return []
        self.events_out += len(kept)
        if len(kept) == len(batch.events):
            return [(DEFAULT_OUTPUT, batch)]
        return [(DEFAULT_OUTPUT, Batch(kept, batch.acks, estimate_bytes(batch, len(kept)), batch.ctx,
                                       batch.ctx_with_fields))]

    def _admit(self, key: Key, count: int, now: int) -> int:
        """How many of ``count`` records of ``key`` arriving at ``now`` pass (and take their tokens)."""
        tat = self._tat.get(key)
        start = now if tat is None or tat < now else tat
        room = now + self.tolerance_ns - start
        if room < 0:
            return 0
        allowed = min(count, room // self.emission_ns + 1)
        self._tat[key] = start + allowed * self.emission_ns
        return allowed

    def _keys(self, batch: Batch) -> Key | list[Key]:
        """The key of every record: one for the whole batch when they must all share it."""
        template = self.template
        if template is None:
            return None
        if not template.reads_per_line:
            if batch.ctx is not None:
                return self._context_key(batch.events[0])
            return [self._context_key(e) if e.fields is None else template.render(e) for e in batch.events]
        render = template.render
        return [render(event) for event in batch.events]

    def _context_key(self, event: LogEvent) -> Key:
        """The key of a record without its own fields, which its context alone decides."""
        memo = event.ctx.memo
        key = memo.get(self._memo_key, memo)
        if key is memo:
            key = memo[self._memo_key] = self.template.render(event)  # type: ignore[union-attr]
        return key  # type: ignore[return-value]

    def _dropped(self, key: Key, count: int, now: int) -> None:
        self.discarded["throttled"] += count
        if self.per_key:
            label = NO_KEY if key is None else key
            if label not in self.discarded_by_key and len(self.discarded_by_key) >= MAX_METRIC_KEYS:
                label = OTHER_KEY
            self.discarded_by_key[label] += count
        named = self._named.get(key)
        if named is None:
            if len(self._named) >= MAX_NAMED_KEYS:
                del self._named[next(iter(self._named))]
            self._named[key] = [now, 0]
            self._warn(key, count)
        elif now - named[0] >= _LOG_INTERVAL_NS:
            self._warn(key, named[1] + count)
            named[0], named[1] = now, 0
        else:
            named[1] += count

    def _warn(self, key: Key, discarded: int) -> None:
        log.warning("throttling records over the threshold", component_id=self.component_id,
                    key=NO_KEY if key is None else key, threshold=self.threshold,
                    window_secs=self.window_secs, discarded=discarded)

    def _sweep_named(self, now: int) -> None:
        """Forget keys last named a minute ago, saying first how many more of theirs were dropped since."""
        named = self._named
        for key in [k for k, (last, _) in named.items() if now - last >= _LOG_INTERVAL_NS]:
            pending = named.pop(key)[1]
            if pending:
                self._warn(key, pending)
        self._next_log_sweep = now + _LOG_INTERVAL_NS

    def _sweep(self, now: int) -> None:
        """Forget keys whose budget is full again (they are like keys never seen)."""
        tat = self._tat
        for key in [k for k, t in tat.items() if t <= now]:
            del tat[key]
        self._next_sweep = now + self.window_ns
