"""The Elasticsearch / OpenSearch ``_bulk`` protocol: request bodies and per-item results.

A body is ndjson: for every record an action line (``{"index":{"_index":"..."}}``
or ``{"create":{...}}``) and the record's JSON document. A 200 answer carries
one result per action, in order; each is judged alone:

- 2xx: delivered;
- 429, 5xx or ``es_rejected_execution_exception`` (a full write queue): sent again;
- any other 4xx (a mapping or parsing error, an invalid index name): kept in
  the dead-letter file with Elasticsearch's reason, because sending it again
  cannot succeed.

This module is the protocol (:class:`BulkProtocol`, an
:class:`~logagent.sinks.http.protocol.HttpProtocol`); the HTTP machinery does
the batching, sending, retries and dead-lettering.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import msgspec
import structlog

from logagent.encoding import encode_ndjson_parts
from logagent.event import PER_LINE_KEYS, LogEvent
from logagent.sinks.http.records import encode_record
from logagent.sinks.elasticsearch.config import Action, DataStreamNames
from logagent.sinks.http.protocol import HttpProtocol, Outcome
from logagent.sinks.http.runs import TIMESTAMP, of_one_file
from logagent.sinks.shaping import Shaper
from logagent.sinks.templates import FieldPath, Template, lookup

_encode = msgspec.json.Encoder().encode

__all__ = ["Action", "BulkProtocol", "DataStreamNames", "ItemOutcome", "ItemResult", "parse_bulk_response"]

#: How much of an item's error reason is kept.
MAX_REASON_CHARS = 500


class ItemOutcome(enum.Enum):
    DELIVERED = "delivered"
    RETRY = "retry"
    DEAD_LETTER = "dead_letter"


#: A record the sink will not send (its index cannot be rendered) starts with
#: this byte, then the reason as JSON, a newline and the document.
_REFUSED = b"\x00"
#: How many file contexts' rendered index names are remembered.
_CACHE_LIMIT = 4096


class BulkProtocol(HttpProtocol):
    """``_bulk`` bodies and per-item answers; ``index`` renders the target index or data stream.

    A record is three parts: its action line, then its document as
    :func:`~logagent.encoding.encode_ndjson_parts` gives it (the file's
    pre-encoded fields, referenced, and the rest with the line end), so a body
    is one join. A record whose index cannot be rendered (a field it names is
    missing) has a refusal instead of an action line: it is not sent, and
    ``interpret`` sends it to the dead-letter file with that reason.
    """

    content_type = "application/x-ndjson"
    reads_answer = True
    parts_per_record = 3

    def __init__(
        self,
        index: Template,
        action: Action,
        data_stream: bool,
        *,
        id_key: FieldPath | None = None,
        shaper: Shaper | None = None,
    ) -> None:
        self.index = index
        self.action = action
        self.data_stream = data_stream
        self.id_key = id_key
        #: the document's shaping (encoding options, the ``id_key`` field removed); None: as it came
        self.shaper = shaper or None
        #: file context -> (time key its index was rendered for, action line or refusal)
        self._action_lines: dict[Hashable, tuple[str, bytes]] = {}
        self.set_doc_type(None)
        #: an index that reads no per-line field renders alike for a file context and time key
        self._cacheable = not any(path[0] in PER_LINE_KEYS for path in index.paths)
        #: refused records handed out and not yet seen by ``interpret``
        self._refused_outstanding = 0
        self._refusal = _REFUSED + _encode(f"bulk.index {index.text!r}: a field it names is missing or not a value") + b"\n"
        self._log = structlog.get_logger(__name__)

    def set_doc_type(self, doc_type: str | None) -> None:
        """Send ``_type`` in action lines (Elasticsearch 6), or not (None)."""
        typed = b'"_type":' + _encode(doc_type) + b"," if doc_type is not None else b""
        self._action_head = b'{"' + self.action.encode() + b'":{' + typed + b'"_index":'
        self._action_lines.clear()

    def encode(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        documents: list[bytes] | None = None
        if not self.data_stream and self.shaper is None and self.id_key is None:
            try:
                documents = encode_ndjson_parts(events)
            except (UnicodeEncodeError, TypeError, ValueError):
                documents = None
            if documents is not None and len(documents) != 2 * len(events):
                documents = None
        if documents is None:
            return self._encode_each(events)
        count = len(events)
        action = self._run_action(events)
        if action is None:
            parts: list[bytes] = []
            each = self._action
            for index, event in enumerate(events):
                parts += (each(event), documents[2 * index], documents[2 * index + 1])
            return parts, 0
        parts = [action] * (3 * count)
        parts[1::3] = documents[0::2]
        parts[2::3] = documents[1::2]
        return parts, 0

    def _run_action(self, events: list[LogEvent]) -> bytes | None:
        """The one action line of a run of one file's records, when its index cannot differ between them.

        That is when the index reads no per-line field and every timestamp is
        UTC with the same prefix as far as the index's strftime parts go
        (the smallest and the largest share it, so all between do).
        """
        if not self._cacheable:
            return None
        if not of_one_file(events):
            return None
        stamps = list(map(TIMESTAMP, events))
        try:
            joined = "\n".join(stamps)
            low, high = min(stamps), max(stamps)
        except TypeError:  # a record without a timestamp
            return None
        if joined.count("Z\n") != len(stamps) - 1 or not joined.endswith("Z"):
            return None
        key = self.index.time_key(events[0])
        if key is None or not (low.startswith(key) and high.startswith(key)):
            return None
        line = self._action(events[0])
        if line is self._refusal:
            self._refused_outstanding += len(events) - 1
        return line

    def _encode_each(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        """Event by event: data streams (``@timestamp`` first) and records needing repairs."""
        parts: list[bytes] = []
        skipped = 0
        for event in events:
            shaped = self.shaper(event) if self.shaper is not None else event
            document = encode_record(shaped)
            if document is None:
                skipped += 1
                continue
            if self.data_stream and event.timestamp is not None:
                # Data streams require @timestamp; the record keeps its own timestamp too.
                document = b'{"@timestamp":' + _encode(event.timestamp) + b"," + document[1:]
            parts += (self._action_with_id(event), document, b"\n")
        return parts, skipped

    def _action_with_id(self, event: LogEvent) -> bytes:
        """The action line, with ``_id`` when ``id_key`` names a string field of the record (as Vector)."""
        line = self._action(event)
        if self.id_key is None or line is self._refusal:
            return line
        value = lookup(event, self.id_key)
        if type(value) is not str:
            return line
        return line[:-3] + b',"_id":' + _encode(value) + b"}}\n"

    def _action(self, event: LogEvent) -> bytes:
        """``{"index":{"_index":"<name>"}}\\n`` (or the refusal), remembered per file context and time key."""
        cached = self._action_lines.get(event.ctx)
        if cached is not None:
            stamp = event.timestamp or ""
            if not cached[0] or (stamp.startswith(cached[0]) and stamp.endswith("Z")):
                if cached[1] is self._refusal:
                    self._refused_outstanding += 1
                return cached[1]
        name = self.index.render(event)
        if name is None:
            line = self._refusal
            self._refused_outstanding += 1
        else:
            line = self._action_head + _encode(name) + b"}}\n"
        time_key = self.index.time_key(event) if self._cacheable else None
        if time_key is not None:
            if len(self._action_lines) >= _CACHE_LIMIT:
                self._action_lines.clear()
            self._action_lines[event.ctx] = (time_key, line)
        return line

    def body_size(self, parts: Sequence[bytes], nbytes: int) -> int | None:
        return None if self._refused_outstanding else nbytes

    def body_pieces(self, parts: Sequence[bytes], records_per_piece: int) -> Iterator[bytes]:
        step = records_per_piece * 3
        for start in range(0, len(parts), step):
            yield self.build_body(parts[start : start + step])

    def build_body(self, parts: Sequence[bytes]) -> bytes:
        if not self._refused_outstanding:
            return b"".join(parts)
        kept = []
        for start in range(0, len(parts), 3):
            if not parts[start].startswith(_REFUSED):
                kept += parts[start : start + 3]
        return b"".join(kept)

    def record(self, parts: Sequence[bytes]) -> bytes:
        """The document alone (valid JSON), without the action line or refusal."""
        return b"".join(parts[1:]).rstrip(b"\n")

    def interpret(self, answer: bytes, parts: Sequence[bytes]) -> Outcome | None:
        count = len(parts) // 3
        if not self._refused_outstanding:
            return self._results(answer, list(range(count)), Outcome())
        sent = []
        outcome = Outcome()
        for index in range(count):
            action = parts[3 * index]
            if action.startswith(_REFUSED):
                outcome.dead_letter.append((index, msgspec.json.decode(action[1:-1])))
                self._refused_outstanding -= 1
            else:
                sent.append(index)
        return self._results(answer, sent, outcome)

    def _results(self, answer: bytes, sent: list[int], outcome: Outcome) -> Outcome | None:
        results = parse_bulk_response(answer, len(sent)) if sent else []
        if results is None:
            self._log.warning("unreadable _bulk answer, sending the records again", answer=answer[:200].decode("utf-8", "replace"))
            outcome.retry.extend(sent)
            return outcome
        for index, result in zip(sent, results):
            if result.outcome is ItemOutcome.RETRY:
                outcome.retry.append(index)
            elif result.outcome is ItemOutcome.DEAD_LETTER:
                outcome.dead_letter.append((index, result.reason))
        return outcome if outcome.retry or outcome.dead_letter else None


# ------------------------------------------------------------------ results


class _Errors(msgspec.Struct):
    errors: bool = True


class _Item(msgspec.Struct):
    status: int = 0
    error: Any = None


class _Response(msgspec.Struct):
    items: list[dict[str, _Item]] = []


_decode_errors = msgspec.json.Decoder(_Errors).decode
_decode_response = msgspec.json.Decoder(_Response).decode


class ItemResult(msgspec.Struct, frozen=True):
    outcome: ItemOutcome
    reason: str = ""


DELIVERED = ItemResult(ItemOutcome.DELIVERED)
#: every item delivered (the answer said ``"errors": false``)
_ALL_DELIVERED: list[ItemResult] = []


def parse_bulk_response(answer: bytes, count: int) -> list[ItemResult] | None:
    """Per-item results of a 2xx answer to a body of ``count`` actions.

    An empty list when the answer says no item failed (``"errors": false``);
    None when the answer is not a bulk response for that many actions (then the
    records are sent again).
    """
    try:
        if not _decode_errors(answer).errors:
            return _ALL_DELIVERED
        items = _decode_response(answer).items
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if len(items) != count:
        return None
    return [_item_result(item) for item in items]


def _item_result(item: dict[str, _Item]) -> ItemResult:
    if len(item) != 1:
        return ItemResult(ItemOutcome.RETRY, "malformed item")
    result = next(iter(item.values()))
    status = result.status
    if 200 <= status <= 299:
        return DELIVERED
    kind, reason = _error_text(result.error)
    text = f"{status} {kind}: {reason}"[:MAX_REASON_CHARS] if kind or reason else f"status {status}"
    if status == 429 or status >= 500 or status == 0 or kind == "es_rejected_execution_exception":
        return ItemResult(ItemOutcome.RETRY, text)
    return ItemResult(ItemOutcome.DEAD_LETTER, text)


def _error_text(error: Any) -> tuple[str, str]:
    if isinstance(error, dict):
        kind = str(error.get("type") or "")
        reason = str(error.get("reason") or "")
        cause = error.get("caused_by")
        if isinstance(cause, dict) and cause.get("reason"):
            reason = f"{reason} (caused by {cause.get('type')}: {cause.get('reason')})"
        return kind, reason
    if error is None:
        return "", ""
    return "", str(error)
