"""The Loki push protocol (``POST /loki/api/v1/push``, JSON): streams by label set.

Records are grouped by their rendered label set (one stream each) and sorted
by timestamp inside a stream, as Loki requires. Entries are
``["<unix nanoseconds>", "<line>"]`` plus, when ``structured_metadata`` is
configured and renders anything, a third element with that map.

:class:`LabelSetGuard` caps how many distinct label sets the sink creates in
a sliding window: unbounded label values (a request id, a pod name on a busy
cluster) make Loki slow and are usually a mistake. Records whose label set
would pass the cap keep only the labels without fields, plus
``logagent_overflow="true"``, and are counted.

:class:`PushProtocol` is the protocol half; the HTTP machinery batches, sends,
retries and dead-letters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence

import msgspec

from logagent.event import LogEvent
from logagent.sinks.batching import encode_record
from logagent.sinks.loki_config import Codec, OutOfOrderAction
from logagent.sinks.record_protocol import RecordProtocol
from logagent.sinks.templates import Template
from logagent.sinks.timestamps import now_nanos, unix_nanos, unix_nanos_text

_encode = msgspec.json.Encoder().encode

LabelSet = tuple[tuple[str, str], ...]

#: The label a record gets when its label templates render nothing (Loki needs one).
DEFAULT_LABELS: LabelSet = (("agent", "logagent"),)
OVERFLOW_LABEL = ("logagent_overflow", "true")


class LabelSetGuard:
    """Remembers label sets seen recently; refuses new ones beyond ``max_label_sets``.

    A label set not seen for ``window_secs`` is forgotten when room is needed,
    so pods that come and go do not use up the cap forever. Also keeps each
    set's newest timestamp for ``out_of_order_action``.
    """

    def __init__(self, max_label_sets: int, window_secs: float = 3600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_label_sets = max_label_sets
        self.window_secs = window_secs
        self._clock = clock
        #: label set (its JSON) -> [last seen (clock), newest timestamp sent (ns)]
        self._seen: dict[bytes, list[float]] = {}
        #: records that got the overflow label set
        self.capped_events = 0

    def __len__(self) -> int:
        return len(self._seen)

    def admit(self, labels: bytes, now: float, force: bool = False) -> bool:
        """Whether records may use this label set (``force``: always, for the overflow set)."""
        entry = self._seen.get(labels)
        if entry is not None:
            entry[0] = now
            return True
        if len(self._seen) >= self.max_label_sets and not force:
            self._forget_older_than(now - self.window_secs)
            if len(self._seen) >= self.max_label_sets:
                return False
        self._seen[labels] = [now, 0]
        return True

    def newest(self, labels: bytes) -> int:
        entry = self._seen.get(labels)
        return int(entry[1]) if entry is not None else 0

    def advance(self, labels: bytes, nanos: int) -> None:
        entry = self._seen.get(labels)
        if entry is not None and nanos > entry[1]:
            entry[1] = nanos

    def _forget_older_than(self, cutoff: float) -> None:
        stale = [labels for labels, (seen, _) in self._seen.items() if seen < cutoff]
        for labels in stale:
            del self._seen[labels]

    def clock(self) -> float:
        return self._clock()


#: How many file contexts' label sets are remembered; the memory is also
#: cleared every ``_CACHE_SECS`` so the guard sees which label sets are active.
_CACHE_LIMIT = 4096
_CACHE_SECS = 60.0


class PushProtocol(RecordProtocol):
    """Loki push bodies (JSON) from events, with the configured label and metadata templates.

    A record is the stream's labels as JSON, a newline, and the entry
    ``["<ns>","<line>"(,{metadata})]``: ``build_body`` groups records by
    their labels and sorts each stream's entries by time. Everything with
    state (the label-set guard, ``out_of_order_action``) happens in ``encode``,
    on the event loop, in the order records arrive.
    """

    content_type = "application/json"

    def __init__(
        self,
        labels: dict[str, Template],
        structured_metadata: dict[str, Template],
        codec: Codec,
        out_of_order_action: OutOfOrderAction,
        guard: LabelSetGuard,
    ) -> None:
        self.labels = labels
        self.structured_metadata = structured_metadata
        self.codec = codec
        self.rewrite_timestamps = out_of_order_action == "rewrite_timestamp"
        self.guard = guard
        self._overflow_labels = _encode(
            dict(sorted((*((n, t.text) for n, t in labels.items() if t.is_static), OVERFLOW_LABEL)))
        )
        self._labels_per_line = any(t.reads_per_line for t in labels.values())
        self._metadata_per_line = any(t.reads_per_line for t in structured_metadata.values())
        #: file context -> (labels JSON, capped)
        self._label_cache: dict[Hashable, tuple[bytes, bool]] = {}
        self._metadata_cache: dict[Hashable, bytes | None] = {}
        self._escaped_heads: dict[Hashable, bytes] = {}
        self._cache_until = 0.0
        #: records that got timestamps rewritten (``rewrite_timestamp``)
        self.rewritten_events = 0

    def encode_event(self, event: LogEvent) -> bytes | None:
        line = self._line(event)
        if line is None:
            return None
        labels = self._labels(event)
        if self.rewrite_timestamps:
            nanos = unix_nanos(event.timestamp) or now_nanos()
            newest = self.guard.newest(labels)
            if nanos <= newest:
                # one nanosecond after the newest, so rewritten entries keep their order
                if nanos < newest:
                    self.rewritten_events += 1
                nanos = newest + 1
            self.guard.advance(labels, nanos)
            text = str(nanos)
        else:
            text = unix_nanos_text(event.timestamp) or str(now_nanos())
        metadata = self._metadata(event) if self.structured_metadata else None
        if metadata is not None:
            return b"".join((labels, b'\n["', text.encode(), b'",', line, b",", metadata, b"]"))
        return b"".join((labels, b'\n["', text.encode(), b'",', line, b"]"))

    def _labels(self, event: LogEvent) -> bytes:
        cache = self._label_cache
        if not self._labels_per_line:
            cached = cache.get(event.ctx)
            if cached is not None:
                if cached[1]:
                    self.guard.capped_events += 1
                return cached[0]
        now = self.guard.clock()
        if now >= self._cache_until or len(cache) >= _CACHE_LIMIT:
            cache.clear()
            self._metadata_cache.clear()
            self._escaped_heads.clear()
            self._cache_until = now + _CACHE_SECS
        labels = _encode(dict(render_labels(self.labels, event) or DEFAULT_LABELS))
        capped = not self.guard.admit(labels, now)
        if capped:
            labels = self._overflow_labels
            self.guard.admit(labels, now, force=True)
            self.guard.capped_events += 1
        if not self._labels_per_line:
            cache[event.ctx] = (labels, capped)
        return labels

    def _line(self, event: LogEvent) -> bytes | None:
        if self.codec == "text":
            try:
                return _encode(event.message)
            except UnicodeEncodeError:
                record = encode_record(event)
                return None if record is None else _encode(msgspec.json.decode(record)["message"])
        record = encode_record(event)
        if record is None:
            return None
        # The record as a JSON string. Compact JSON text has no raw control
        # characters, so only backslashes and quotes need escaping; the file's
        # fields are escaped once per file.
        head = event.ctx.json_head
        if not record.startswith(head):
            return b'"' + escape_json_text(record) + b'"'
        escaped = self._escaped_heads.get(event.ctx)
        if escaped is None:
            escaped = self._escaped_heads[event.ctx] = b'"' + escape_json_text(head)
        return escaped + escape_json_text(record[len(head) :]) + b'"'

    def _metadata(self, event: LogEvent) -> bytes | None:
        key: Hashable = event if self._metadata_per_line else event.ctx
        cache = self._metadata_cache
        if key in cache:
            return cache[key]
        values = {name: text for name, t in self.structured_metadata.items() if (text := t.render(event)) is not None}
        encoded = _encode(values) if values else None
        if not self._metadata_per_line:
            cache[key] = encoded
        return encoded

    def build_body(self, records: Sequence[bytes]) -> bytes:
        """``{"streams":[...]}``: one stream per label set, entries sorted by timestamp.

        Sorting the records as bytes does both at once: a record is its labels,
        a newline, then ``["<19-digit nanoseconds>",...``, so equal labels end up
        together and in time order (entries of the same nanosecond by content).
        """
        parts = []
        labels = b""
        head = b""
        size = 0
        # memoryviews: slicing a copy of each ~1 KB entry would cost more than the rest
        entries: list[memoryview] = []
        for record in sorted(records):
            if head and record.startswith(head):
                entries.append(memoryview(record)[size:])
                continue
            if entries:
                parts.append(b'{"stream":' + labels + b',"values":[' + b",".join(entries) + b"]}")
            labels = record[: record.index(b"\n")]
            head = labels + b"\n"
            size = len(head)
            entries = [memoryview(record)[size:]]
        if entries:
            parts.append(b'{"stream":' + labels + b',"values":[' + b",".join(entries) + b"]}")
        return b'{"streams":[' + b",".join(parts) + b"]}"

    def dead_letter_record(self, record: bytes) -> bytes:
        """The record as a one-entry stream (valid JSON)."""
        labels, _, entry = record.partition(b"\n")
        return b'{"stream":' + labels + b',"values":[' + entry + b"]}"


def escape_json_text(text: bytes) -> bytes:
    """Compact JSON text (no raw control characters) as the inside of a JSON string."""
    return text.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


def render_labels(templates: dict[str, Template], event: LogEvent) -> LabelSet:
    """The label set of a record, sorted by name; labels whose fields are missing are left out."""
    labels = []
    for name, template in templates.items():
        value = template.render(event)
        if value is not None and value != "":
            labels.append((name, value))
    labels.sort()
    return tuple(labels)
