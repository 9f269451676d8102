"""The parse_json transform: a field holding a JSON object becomes fields of the record.

Only a JSON object is taken. Any other value (not JSON, an array, a string, a
number, a missing field) leaves the record as it was, counted in ``errors`` by
reason. A parsed record is a new event (events are shared between branches and
never changed); a record left as it was is passed on as the same object.
"""

from __future__ import annotations

from collections import Counter, deque
from itertools import repeat
from operator import attrgetter, contains, eq
from typing import Any

import msgspec

from logagent.acks import Batch
from logagent.event import MERGED_MESSAGE, PER_LINE_KEYS, FileContext, LogEvent, message_fields, resolve
from logagent.sources.kubernetes_logs_config import split_field_path
from logagent.transforms.base import DEFAULT_OUTPUT, Transform
from logagent.transforms.record_fields import Draft, blocked_keys
from logagent.vrl.record_reads import record_reader

_MESSAGE = attrgetter("message")
_STREAM = attrgetter("stream")
_TIMESTAMP = attrgetter("timestamp")
_TRUNCATED = attrgetter("truncated")

#: reasons a record is passed on unparsed (the ``reason`` label of the error counter)
FIELD_MISSING = "field_missing"
NOT_AN_OBJECT = "not_json_object"
TARGET_CONFLICT = "target_conflict"
MERGE = "."
_ONLY_DICT = {dict}
#: how an empty object's text may start: such a text cannot be written after the record's keys
_EMPTY_OBJECT_STARTS = ("{}", "{ ", "{\t", "{\r")
_KEY_CHECK = ("parse_json.key_check",)


class _AnyObject(msgspec.Struct):
    """Decoding into a Struct without fields checks that the text is one JSON object and builds nothing."""


_validate_object = msgspec.json.Decoder(_AnyObject).decode


def _is_object(text: str) -> bool:
    try:
        _validate_object(text)
    except (msgspec.DecodeError, UnicodeError):
        return False
    return True


def _key_check(ctx: FileContext) -> tuple[Any, Any]:
    """(decode, nothing found) for the keys a merge into a record of ``ctx`` must not add, made once per context.

    ``decode(text)`` validates an object's text and keeps only those keys;
    its result equals ``nothing found`` when the object has none of them.
    """
    check = ctx.memo.get(_KEY_CHECK)
    if check is None:
        keys = sorted(blocked_keys(ctx))
        names = [f"k{i}" for i in range(len(keys))]
        struct = msgspec.defstruct("RecordKeys", [(name, Any, msgspec.UNSET) for name in names],
                                   rename=dict(zip(names, keys)), gc=False)
        check = ctx.memo[_KEY_CHECK] = (msgspec.json.Decoder(struct).decode, struct())
    return check  # type: ignore[no-any-return]


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
        self._read = record_reader(self.field)
        self._from_message = self.field == ("message",)
        self._decode = msgspec.json.Decoder().decode
        # the common shapes, done without a Draft: the message into one new top-level key, or merged
        single = self.target is not None and len(self.target) == 1
        self._into_key = self.target[0] if self._from_message and single else None  # type: ignore[index]
        #: the fields of a record that keeps its message and holds its object under ``_into_key``
        self._message_fields = message_fields(self._into_key) if self._into_key is not None else None
        self._plain_merge = self._from_message and not self.drop_field and merge
        self._target_keys = frozenset(self.target[:1] if self.target else ())

    def process(self, batch: Batch) -> list[tuple[str, Batch]]:
        events = batch.events
        self.events_in += len(events)
        self.events_out += len(events)
        key = self._into_key
        whole = self._whole_batch_into_key(batch, key) if key is not None and batch.ctx is not None else None
        if whole is not None:  # one context still, and records hold only the target key
            return [(DEFAULT_OUTPUT, Batch(whole, batch.acks, batch.nbytes, None, (batch.ctx, self._target_keys)))]
        if key is not None:
            out, changed = self._message_into_key(batch, key)
        elif self._plain_merge and batch.ctx is not None and (merged := self._whole_batch_merged(batch)) is not None:
            out, changed = merged, True
        else:
            out, changed = [], False
            for event in events:
                new = self._parse(event)
                out.append(event if new is None else new)
                changed = changed or new is not None
        if not changed:
            return [(DEFAULT_OUTPUT, batch)]
        # no shared context any more: a batch's ctx promises events without per-record fields
        return [(DEFAULT_OUTPUT, Batch(out, batch.acks, batch.nbytes, None))]

    def _whole_batch_into_key(self, batch: Batch, key: str) -> list[LogEvent] | None:
        """``_message_into_key`` for a batch whose every message is an object's text, in fewer steps.

        None when it does not apply (some message is not an object, or has a
        line break): the caller then goes record by record. ``batch.ctx`` is
        set, so no event has per-record fields.
        """
        ctx = batch.ctx
        events = batch.events
        if ctx is None or key in ctx.fields or not events:
            return None
        texts = list(map(_MESSAGE, events))
        try:
            deque(map(_validate_object, texts), maxlen=0)
        except (msgspec.DecodeError, UnicodeError):
            return None
        if any(map(contains, texts, repeat("\n"))):
            return None
        if self.drop_field:
            raw = msgspec.Raw
            return [LogEvent(None, e.stream, e.timestamp, ctx, e.truncated, {key: raw(t)}) for e, t in zip(events, texts)]
        # every event made in C: no dict, no Raw per record (see MessageFields)
        return list(map(LogEvent, texts, map(_STREAM, events), map(_TIMESTAMP, events), repeat(ctx),
                        map(_TRUNCATED, events), repeat(self._message_fields)))

    def _whole_batch_merged(self, batch: Batch) -> list[LogEvent] | None:
        """Target ``.`` for a batch whose every message is a non-empty object without a key the records have.

        When every text runs from ``{`` to ``}`` on one line, the messages are
        validated, not decoded: one msgspec Struct per context, whose fields
        are the keys a merge must not add, tells in C whether an object holds
        one of them, and the records get :data:`MERGED_MESSAGE` (see
        LogEvent). Otherwise each message is decoded with one ``map`` and the
        decoded dicts are the records' ``fields`` as they are. None when
        neither applies (some message is not an object, is empty or has a key
        of the context or a per-line key): then record by record.
        """
        ctx = batch.ctx
        assert ctx is not None
        events = batch.events
        texts = list(map(_MESSAGE, events))
        if (
            all(map(str.startswith, texts, repeat("{")))
            and all(map(str.endswith, texts, repeat("}")))
            and not any(map(str.startswith, texts, repeat(_EMPTY_OBJECT_STARTS)))
            and not any(map(contains, texts, repeat("\n")))
        ):
            decode, none_found = _key_check(ctx)
            try:
                found = list(map(decode, texts))
            except (msgspec.DecodeError, UnicodeError):
                return None
            if not all(map(eq, found, repeat(none_found))):
                return None
            return list(map(LogEvent, texts, map(_STREAM, events), map(_TIMESTAMP, events), repeat(ctx),
                            map(_TRUNCATED, events), repeat(MERGED_MESSAGE)))
        try:
            objects = list(map(self._decode, texts))
        except (msgspec.DecodeError, UnicodeError):  # ValidationError included: a number beyond the float range
            return None
        if set(map(type, objects)) != _ONLY_DICT or not all(objects):
            return None
        if not all(map(blocked_keys(ctx).isdisjoint, objects)):
            return None
        return list(map(LogEvent, texts, map(_STREAM, events), map(_TIMESTAMP, events), repeat(ctx),
                        map(_TRUNCATED, events), objects))

    def _message_into_key(self, batch: Batch, key: str) -> tuple[list[LogEvent], bool]:
        """The hot loop for ``target: <key>`` on the message.

        A message that is an object's text is validated, not decoded: the
        record's fields are the shared MessageFields (or, when the message is
        dropped, the text as ``msgspec.Raw``; see LogEvent), which encoders
        copy as is and readers decode. A text with a line break (JSON whitespace,
        e.g. a multiline record) is decoded, so that encoders never write one
        into a JSON line. Any other case takes the general way.
        """
        drop = self.drop_field
        validate = _validate_object
        raw = msgspec.Raw
        shared = self._message_fields
        out: list[LogEvent] = []
        changed = False
        # a batch's ctx promises one context and no per-record fields: then only the message needs a look
        simple = batch.ctx is not None and key not in batch.ctx.fields
        for event in batch.events:
            text = event.message
            if (
                (simple or (text is not None and event.fields is None and key not in event.ctx.fields))
                and text[:1] == "{"  # type: ignore[index]
                and "\n" not in text  # type: ignore[operator]
            ):
                try:
                    validate(text)
                except (msgspec.DecodeError, UnicodeError):
                    self.errors[NOT_AN_OBJECT] += 1
                    out.append(event)
                    continue
                if drop:
                    out.append(LogEvent(None, event.stream, event.timestamp, event.ctx, event.truncated,
                                        {key: raw(text)}))
                else:
                    out.append(LogEvent(text, event.stream, event.timestamp, event.ctx, event.truncated, shared))
                changed = True
                continue
            new = self._parse(event)
            if new is None:
                out.append(event)
            else:
                out.append(new)
                changed = True
        return out, changed

    def _parse(self, event: LogEvent) -> LogEvent | None:
        """The general way: decode the field, then edit a draft of the record."""
        obj = self._object(event)
        return None if obj is None else self._apply(event, obj)

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
        except msgspec.ValidationError:
            # valid JSON msgspec will not decode (a number beyond the float range): as the hot loop takes it
            obj = resolve(msgspec.Raw(text)) if _is_object(text) else None
        except (msgspec.DecodeError, UnicodeError):
            obj = None
        if type(obj) is not dict:
            self.errors[NOT_AN_OBJECT] += 1
            return None
        return obj

    def _apply(self, event: LogEvent, obj: dict[str, Any]) -> LogEvent | None:
        """The record with ``obj`` under the target (or merged), or None (counted) on a conflict."""
        if event.fields is None:
            ctx = event.ctx
            key = self._into_key
            if key is not None and key not in ctx.fields:
                message = None if self.drop_field else event.message
                return LogEvent(message, event.stream, event.timestamp, ctx, event.truncated, {key: obj})
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


def merged_record(event: LogEvent) -> LogEvent | None:
    """``event`` with its message's object merged at the top level as :data:`MERGED_MESSAGE`, validated only.

    For a record without per-record fields whose message is the one-line text
    of a non-empty object holding no key the record has (a context key or a
    per-line key): then a merge that overwrites (VRL's ``merge``) and one that
    never does (this transform's) give the same record. None otherwise.
    """
    text = event.message
    if (event.fields is not None or type(text) is not str or not text.startswith("{") or not text.endswith("}")
            or text.startswith(_EMPTY_OBJECT_STARTS) or "\n" in text):
        return None
    decode, none_found = _key_check(event.ctx)
    try:
        if decode(text) != none_found:
            return None
    except (msgspec.DecodeError, UnicodeError):
        return None
    return LogEvent(text, event.stream, event.timestamp, event.ctx, event.truncated, MERGED_MESSAGE)
