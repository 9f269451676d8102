"""The route transform: one output per named condition, plus ``_unmatched``.

A record goes to every route whose condition it matches, and to
``<id>._unmatched`` when it matches none (as Vector's route does).
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import eq, not_

import msgspec

from logagent.acks import Batch
from logagent.config_errors import KeyErrors
from logagent.event import LogEvent
from logagent.transforms.base import BatchCondition, Transform, estimate_bytes
from logagent.transforms.filter import VectorCondition, check_condition_option, condition_text

UNMATCHED = "_unmatched"


class RouteConfig(msgspec.Struct, tag="route", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    route: dict[str, VectorCondition]
    #: as Vector: false means no ``<id>._unmatched`` output (records matching no route are dropped)
    reroute_unmatched: bool = True

    def validate(self) -> None:
        if not self.route:
            raise ValueError("route: expected at least one named condition")
        problems = []  # every bad route, not only the first
        for name, condition in self.route.items():
            try:
                if name == UNMATCHED or not name or "." in name:
                    raise ValueError(f"route.{name}: this name is reserved or invalid; use letters, digits, _ and -")
                check_condition_option(f"route.{name}", condition)
            except ValueError as exc:
                problems.append(str(exc))
        if problems:
            raise KeyErrors(problems)


class RouteTransform(Transform):
    kind = "route"

    def __init__(self, component_id: str, config: RouteConfig) -> None:
        from logagent.vrl.condition import compile_condition  # noqa: PLC0415

        super().__init__(component_id)
        self.routes = [(name, BatchCondition(compile_condition(condition_text(c)))) for name, c in config.route.items()]
        self.conditions = [cond.condition for _, cond in self.routes]
        # Routes that all compare the same per-line field with text (e.g. one
        # route per .stream value) are split in one pass over that field.
        shapes = {cond.field_equals for _, cond in self.routes}
        keys = {shape[0] for shape in shapes if shape is not None}
        self._by_field = None not in shapes and len(keys) == 1 and len(self.routes) > 1
        self._texts = frozenset(shape[1] for shape in shapes if shape is not None)

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.routes) + (UNMATCHED,)

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        self.events_in += len(batch.events)
        produced: list[tuple[str, list[LogEvent]]] = []
        if len(self.routes) == 1:
            name, cond = self.routes[0]
            matched, unmatched = cond.split(batch)
            if matched:
                produced.append((name, matched))
            if unmatched:
                produced.append((UNMATCHED, unmatched))
        elif self._by_field:
            values = self.routes[0][1].values(batch.events)
            for name, cond in self.routes:
                text = cond.field_equals[1]  # type: ignore[index]
                matched = list(compress(batch.events, map(eq, values, repeat(text))))
                if matched:
                    produced.append((name, matched))
            rest = list(compress(batch.events, map(not_, map(self._texts.__contains__, values))))
            if rest:
                produced.append((UNMATCHED, rest))
        else:
            matched_any: set[int] = set()
            for name, cond in self.routes:
                matched, _ = cond.split(batch)
                if matched:
                    produced.append((name, matched))
                    matched_any.update(map(id, matched))
            rest = [ev for ev in batch.events if id(ev) not in matched_any]
            if rest:
                produced.append((UNMATCHED, rest))
        if not produced:
            batch.release()
            return []
        if len(produced) > 1:
            batch.acquire(len(produced) - 1)
        out = []
        for name, events in produced:
            self.events_out += len(events)
            if len(events) == len(batch.events) and len(produced) == 1:
                out.append((name, batch))
                continue
            nbytes = estimate_bytes(batch, len(events))
            out.append((name, Batch(events, batch.acks, nbytes, batch.ctx, batch.ctx_with_fields)))
        return out
