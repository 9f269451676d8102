"""The parse_json transform: a field holding a JSON object becomes fields of the record.

Only a JSON object is taken. Any other value (not JSON, an array, a string, a
number, a missing field) leaves the record as it was, counted in ``errors`` by
reason. A parsed record is a new event (events are shared between branches and
never changed); a record left as it was is passed on as the same object.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec

from logagent.acks import Batch
from logagent.conditions.paths import make_getter
from logagent.event import PER_LINE_KEYS, LogEvent
from logagent.sources.kubernetes_logs_config import split_field_path
from logagent.transforms.base import DEFAULT_OUTPUT, Transform
from logagent.transforms.record_fields import Draft, blocked_keys

#: reasons a record is passed on unparsed (the ``reason`` label of the error counter)
FIELD_MISSING = "field_missing"
NOT_AN_OBJECT = "not_json_object"
TARGET_CONFLICT = "target_conflict"
MERGE = "."


class ParseJsonConfig(msgspec.Struct, tag="parse_json", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    #: where the object goes: a field path (``parsed``, ``.parsed.inner``) or ``.``, merge at the top level
    target: str
    field: str = "message"
    drop_field: bool = False

    def validate(self) -> None:
        parse_path("field", self.field)
        if self.target.strip() != MERGE:
            segments = parse_path("target", self.target)
            if segments[0] in PER_LINE_KEYS:
                raise ValueError(
                    f'target: "{segments[0]}" is set by the source and cannot hold the object; choose another key '
                    f'(to replace the message, use target "." or a key with drop_field: true)'
                )


def parse_path(key: str, text: str) -> tuple[str, ...]:
    """A field path's segments (``.a.b``, ``a.b``, ``.a."b.c"``); ValueError naming ``key`` if invalid."""
    segments = split_field_path(text)
    if not segments or not all(segments):
        raise ValueError(f'{key}: expected a field path such as ".message" or ".parsed.payload", got "{text}"')
    return tuple(segments)


class ParseJsonTransform(Transform):
    kind = "parse_json"

    def __init__(self, component_id: str, config: ParseJsonConfig) -> None:
        super().__init__(component_id)
        self.field = parse_path("field", config.field)
        merge = config.target.strip() == MERGE
        self.target = None if merge else parse_path("target", config.target)
        self.drop_field = config.drop_field
        #: records passed on unparsed, by reason
        self.errors: Counter[str] = Counter()
        self._read = make_getter(self.field)
        self._from_message = self.field == ("message",)
        self._decode = msgspec.json.Decoder().decode
        # the common shapes, done without a Draft: the message into one new top-level key, or merged
        plain = self._from_message and not self.drop_field
        self._into_key = self.target[0] if plain and self.target is not None and len(self.target) == 1 else None
        self._plain_merge = plain and merge

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        events = batch.events
        self.events_in += len(events)
        self.events_out += len(events)
        out: list[LogEvent] = []
        changed = False
        for event in events:
            obj = self._object(event)
            new = None if obj is None else self._apply(event, obj)
            if new is None:
                out.append(event)
            else:
                out.append(new)
                changed = True
        if not changed:
            return [(DEFAULT_OUTPUT, batch)]
        # no shared context any more: a batch's ctx promises events without per-record fields
        return [(DEFAULT_OUTPUT, Batch(out, batch.acks, batch.nbytes, None))]

    def _object(self, event: LogEvent) -> dict[str, Any] | None:
        """The field's JSON object, or None (counted) when it does not hold one."""
        text = event.message if self._from_message else self._read(event)
        if type(text) is not str:
            self.errors[FIELD_MISSING] += 1
            return None
        if text[:1] != "{" and text.lstrip()[:1] != "{":
            self.errors[NOT_AN_OBJECT] += 1
            return None
        try:
            obj = self._decode(text)
        except (msgspec.DecodeError, UnicodeError):
            self.errors[NOT_AN_OBJECT] += 1
            return None
        if type(obj) is not dict:  # cannot happen after "{", unless the decoder changes
            self.errors[NOT_AN_OBJECT] += 1
            return None
        return obj

    def _apply(self, event: LogEvent, obj: dict[str, Any]) -> LogEvent | None:
        """The record with ``obj`` under the target (or merged), or None (counted) on a conflict."""
        if event.fields is None:
            ctx = event.ctx
            key = self._into_key
            if key is not None and key not in ctx.fields:
                return LogEvent(event.message, event.stream, event.timestamp, ctx, event.truncated, {key: obj})
            if self._plain_merge:
                blocked = blocked_keys(ctx)
                fields = obj if blocked.isdisjoint(obj) else {k: v for k, v in obj.items() if k not in blocked}
                return LogEvent(event.message, event.stream, event.timestamp, ctx, event.truncated, fields or None)
        draft = Draft(event)
        if self.drop_field:
            draft.remove(self.field)
        if self.target is None:
            draft.merge(obj)
        elif not draft.assign(self.target, obj):
            self.errors[TARGET_CONFLICT] += 1
            return None
        return draft.event(event)
