"""The Loki push protocol (``POST /loki/api/v1/push``, JSON): streams by label set.

Records are grouped by their rendered label set (one stream each) and sorted
by timestamp inside a stream, as Loki requires. Entries are
``["<unix nanoseconds>", "<line>"]`` plus, when ``structured_metadata`` is
configured and renders anything, a third element with that map. With
``encoding.codec: json`` the line is the whole record as JSON text (the
``http`` sink's record), with ``text`` the message alone.

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
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Sequence
from itertools import groupby
from typing import Any

import msgspec

from logagent.encoding import encode_ndjson_parts, encode_text
from logagent.event import LogEvent
from logagent.sinks.http.records import encode_record
from logagent.sinks.http.protocol import HttpProtocol
from logagent.sinks.loki.config import Codec, OutOfOrderAction
from logagent.sinks.loki.labels import expand, is_expansion
from logagent.sinks.http.runs import MESSAGE, STREAM, TIMESTAMP, is_plain_run
from logagent.sinks.shaping import Shaper
from logagent.sinks.templates import Template
from logagent.sinks.timestamps import kubelet_nanos_texts, now_nanos, unix_nanos, unix_nanos_text

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

#: what follows a record's message up to its timestamp's digits, escaped for a JSON string
_ESCAPED_STREAMS = {
    stream: b'\\",\\"stream\\":\\"' + stream.encode() + b'\\",\\"timestamp\\":\\"' for stream in ("stdout", "stderr")
}


class PushProtocol(HttpProtocol):
    """Loki push bodies (JSON) from events, with the configured label and metadata templates.

    A record is four parts: its stream's labels (JSON), then the entry
    ``,["<ns>","<line>"(,{metadata})]`` in three parts: up to the line, the
    file's fields escaped for the line (shared by the file's records, or
    empty), and the rest. ``build_body`` groups records by their labels and
    sorts each stream's entries by time. Everything with state (the label-set
    guard, ``out_of_order_action``) happens in ``encode``, on the event loop,
    in the order records arrive.

    A run of one file's records (the common case) is encoded in a few calls
    for the whole run: the labels once, the timestamps' nanoseconds and the
    escaped lines by joining, replacing and splitting, so no Python code runs
    per record; anything unusual (labels or metadata that read per-line
    fields, ``rewrite_timestamp``, timestamps not in the kubelet's form,
    lines needing repair) is encoded record by record.
    """

    content_type = "application/json"
    parts_per_record = 5

    def __init__(
        self,
        labels: dict[str, Template],
        structured_metadata: dict[str, Template],
        codec: Codec,
        out_of_order_action: OutOfOrderAction,
        guard: LabelSetGuard,
        shaper: Shaper | None = None,
    ) -> None:
        self.labels = labels
        self.structured_metadata = structured_metadata
        self.codec = codec
        self.rewrite_timestamps = out_of_order_action == "rewrite_timestamp"
        self.drop_out_of_order = out_of_order_action == "drop"
        #: the line's shaping (encoding options, removed label fields); labels read the record as it came
        self.line_shaper = shaper if shaper and codec == "json" else None
        #: records dropped by ``out_of_order_action: drop``, and those not yet reported to the batcher
        self.dropped_events = 0
        self._unreported_drops = 0
        self.guard = guard
        self._overflow_labels = _encode(
            dict(sorted((*((n, t.text) for n, t in labels.items() if t.is_static), OVERFLOW_LABEL)))
        )
        self._labels_per_line = any(t.reads_per_line for t in labels.values())
        self._metadata_per_line = any(t.reads_per_line for t in structured_metadata.values())
        self._per_record = (self._labels_per_line or self._metadata_per_line or self.rewrite_timestamps
                            or self.drop_out_of_order or self.line_shaper is not None)
        #: file context -> (labels JSON, capped)
        self._label_cache: dict[Hashable, tuple[bytes, bool]] = {}
        #: file context -> what ends its entries: ``]`` or ``,{metadata}]`` (after the line's closing quote, codec json)
        self._ends: dict[Hashable, bytes] = {}
        self._escaped_heads: dict[Hashable, bytes] = {}
        #: ``YYYY-MM-DDTHH:MM:SS`` (bytes) -> ``,["<seconds since the epoch>``
        self._seconds: dict[bytes, bytes | None] = {}
        self._cache_until = 0.0
        #: records that got timestamps rewritten (``rewrite_timestamp``)
        self.rewritten_events = 0

    # -- encoding ------------------------------------------------------------------

    def encode(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        parts = None if self._per_record or not events else self._encode_run(events)
        if parts is not None:
            return parts, 0
        return self._encode_each(events)

    def _encode_run(self, events: list[LogEvent]) -> list[bytes] | None:
        """The parts of a run of one file's records in whole-run calls; None if it needs ``_encode_each``.

        The messages are encoded as one JSON array (and, for codec json,
        escaped as one string), then split at the separators: ``","`` appears
        in an encoded array only between items, because a quote inside an
        item is always escaped (``\\"``), and ``\\",\\"`` likewise in the
        escaped array. The entries' prefixes and rests are then joined with
        line feeds (which no part holds) and split again into one part each.
        """
        if not is_plain_run(events):
            return None
        ctx = events[0].ctx
        count = len(events)
        converted = kubelet_nanos_texts(list(map(TIMESTAMP, events)))
        if converted is None:
            return None
        nanos, raw_stamps = converted
        messages = list(map(MESSAGE, events))
        if messages.count(None):
            return None
        try:
            array = _encode(messages)
        except UnicodeEncodeError:  # lone surrogates: repaired record by record
            return None
        self._expire_caches()
        end = self._end(events[0])
        prefixes = (b',["' + nanos.replace(b"\n", b'","\n,["') + b'","').split(b"\n")
        if self.codec == "json":
            streams = list(map(_ESCAPED_STREAMS.get, map(STREAM, events)))
            if streams.count(None):
                return None
            # the array as a JSON string: its text escaped (msgspec does it faster than two replaces)
            texts = _encode(array.decode())[4:-4].split(b'\\",\\"')
            head = self._escaped_head(ctx)
            # \",\"stream\":\"stdout\",\"timestamp\":\" <timestamp> \"}"]
            pieces: list[bytes] = [b'\\"}"' + end + b"\n"] * (3 * count)
            pieces[0::3] = streams  # type: ignore[assignment]
            pieces[1::3] = raw_stamps.split(b"\n")
            rests = b"".join(pieces).split(b"\n")
            rests.pop()
        else:
            texts = array[2:-2].split(b'","')
            head = b""
            rests = [b'"' + end] * count
        if len(texts) != count:
            return None
        labels, capped = self._labels(events[0])
        if capped:
            self.guard.capped_events += count
        parts: list[bytes] = [labels] * (5 * count)
        parts[1::5] = prefixes
        parts[2::5] = [head] * count
        parts[3::5] = texts
        parts[4::5] = rests
        return parts

    def _encode_each(self, events: list[LogEvent]) -> tuple[list[bytes], int]:
        """Record by record: per-line labels or metadata, rewritten timestamps, records needing repairs."""
        parts: list[bytes] = []
        skipped = 0
        self._expire_caches()
        for event in events:
            line = self._line(event)
            if line is None:
                skipped += 1
                continue
            labels, capped = self._labels(event)
            if capped:
                self.guard.capped_events += 1
            if self.drop_out_of_order:
                nanos = unix_nanos(event.timestamp) or now_nanos()
                if nanos < self.guard.newest(labels):
                    skipped += 1
                    self.dropped_events += 1
                    self._unreported_drops += 1
                    continue
                self.guard.advance(labels, nanos)
                text = str(nanos)
            elif self.rewrite_timestamps:
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
            head, rest = line
            parts += (labels, b',["' + text.encode() + b'","', head, rest, b'"' + self._end(event))
        return parts, skipped

    def skipped_reasons(self, skipped: int) -> Counter[str]:
        drops, self._unreported_drops = self._unreported_drops, 0
        reasons = Counter({"out_of_order": drops}) if drops else Counter()
        if skipped > drops:
            reasons["unencodable"] = skipped - drops
        return reasons

    def _expire_caches(self) -> None:
        now = self.guard.clock()
        if now >= self._cache_until or len(self._label_cache) >= _CACHE_LIMIT:
            self._label_cache.clear()
            self._ends.clear()
            self._escaped_heads.clear()
            self._cache_until = now + _CACHE_SECS

    def _labels(self, event: LogEvent) -> tuple[bytes, bool]:
        """The record's labels (JSON) and whether the label-set cap replaced them by the overflow set."""
        if not self._labels_per_line:
            cached = self._label_cache.get(event.ctx)
            if cached is not None:
                return cached
        now = self.guard.clock()
        labels = _encode(dict(render_labels(self.labels, event) or DEFAULT_LABELS))
        capped = not self.guard.admit(labels, now)
        if capped:
            labels = self._overflow_labels
            self.guard.admit(labels, now, force=True)
        if not self._labels_per_line:
            self._label_cache[event.ctx] = (labels, capped)
        return labels, capped

    def _line(self, event: LogEvent) -> tuple[bytes, bytes] | None:
        """The line as the inside of a JSON string, in two parts: the file's escaped fields (or nothing), the rest."""
        if self.codec == "text":
            message = event.message
            if not isinstance(message, str):
                message = encode_text(event).decode("utf-8", "replace")
            try:
                return b"", _encode(message)[1:-1]
            except UnicodeEncodeError:  # lone surrogates from a line that is not UTF-8
                return b"", _encode(message.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))[1:-1]
        if self.line_shaper is not None:
            event = self.line_shaper(event)
        record = encode_record(event)
        if record is None:
            return None
        # The record as a JSON string. Compact JSON text has no raw control
        # characters, so only backslashes and quotes need escaping; the file's
        # fields are escaped once per file.
        head = event.ctx.json_head
        if not record.startswith(head + b'"'):
            return b"", escape_json_text(record)
        return self._escaped_head(event.ctx), escape_json_text(record[len(head) + 1 :])

    def _escaped_head(self, ctx: Hashable) -> bytes:
        escaped = self._escaped_heads.get(ctx)
        if escaped is None:
            # the file's fields up to the message's opening quote, escaped
            escaped = self._escaped_heads[ctx] = escape_json_text(ctx.json_head + b'"')  # type: ignore[attr-defined]
        return escaped

    def _end(self, event: LogEvent) -> bytes:
        """``]``, or ``,{metadata}]`` when structured metadata renders anything."""
        if not self.structured_metadata:
            return b"]"
        if not self._metadata_per_line:
            cached = self._ends.get(event.ctx)
            if cached is not None:
                return cached
        values = {name: text for name, t in self.structured_metadata.items() if (text := t.render(event)) is not None}
        end = b"," + _encode(values) + b"]" if values else b"]"
        if not self._metadata_per_line:
            self._ends[event.ctx] = end
        return end

    # -- bodies ----------------------------------------------------------------------

    def body_size(self, parts: Sequence[bytes], nbytes: int) -> int | None:
        """The body's length, so a large one is streamed: the records less their labels, plus each stream's frame."""
        streams = _streams(parts)
        if not streams:
            return len(_EMPTY_BODY)
        frames = sum(len(_STREAM_OPEN) + len(key) + len(_VALUES_OPEN) - 1 + len(_STREAM_CLOSE) for key in streams)
        return len(_BODY_OPEN) + frames + nbytes - sum(map(len, parts[0::5])) - len(_STREAM_CLOSE) + len(_LAST_STREAM_CLOSE)

    def body_pieces(self, parts: Sequence[bytes], records_per_piece: int) -> Iterator[bytes]:
        """``{"streams":[...]}``: one stream per label set, entries sorted by timestamp; about ``records_per_piece`` entries a piece.

        An entry's first part, ``,["<nanoseconds>",``, sorts it: the
        nanoseconds of a kubelet timestamp are always 19 digits.
        """
        streams = _streams(parts)
        if not streams:
            yield _EMPTY_BODY
            return
        prefixes = parts[1::5]
        sort_key: Callable[[int], Any] = prefixes.__getitem__
        if len(set(map(len, prefixes))) > 1:  # timestamps before 2001 or far ahead
            sort_key = lambda index: (len(prefixes[index]), prefixes[index])  # noqa: E731
        opening = _BODY_OPEN
        step = 4 * records_per_piece
        for key, indices in streams.items():
            order = sorted(indices, key=sort_key)
            if order == list(range(order[0], order[0] + len(order))):
                values = list(parts[5 * order[0] : 5 * order[-1] + 5])
                del values[0::5]
            else:
                values = []
                for index in order:
                    values += parts[5 * index + 1 : 5 * index + 5]
            values[0] = values[0][1:]  # the first entry has no comma before it
            values[0:0] = (opening, _STREAM_OPEN, key, _VALUES_OPEN)
            opening = _STREAM_CLOSE
            for start in range(0, len(values), step):
                yield b"".join(values[start : start + step])
        yield _LAST_STREAM_CLOSE

    def build_body(self, parts: Sequence[bytes]) -> bytes:
        return b"".join(self.body_pieces(parts, len(parts)))

    def record(self, parts: Sequence[bytes]) -> bytes:
        """The record as a one-entry stream (valid JSON), for the dead-letter file."""
        return _STREAM_OPEN + parts[0] + _VALUES_OPEN + parts[1][1:] + parts[2] + parts[3] + parts[4] + b"]}"


_BODY_OPEN = b'{"streams":['
_STREAM_OPEN = b'{"stream":'
_VALUES_OPEN = b',"values":['
_STREAM_CLOSE = b"]},"
_LAST_STREAM_CLOSE = b"]}]}"
_EMPTY_BODY = b'{"streams":[]}'


def _streams(parts: Sequence[bytes]) -> dict[bytes, list[int]]:
    """Labels (JSON) -> indices of the records with them, in order of first appearance."""
    streams: dict[bytes, list[int]] = {}
    start = 0
    for key, run in groupby(parts[0::5]):
        end = start + len(list(run))
        streams.setdefault(key, []).extend(range(start, end))
        start = end
    return streams


def escape_json_text(text: bytes) -> bytes:
    """Compact JSON text (no raw control characters) as the inside of a JSON string."""
    return text.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


def render_labels(templates: dict[str, Template], event: LogEvent) -> LabelSet:
    """The label set of a record, sorted by name; labels whose fields are missing are left out."""
    labels = []
    for name, template in templates.items():
        if is_expansion(name):
            labels += expand(name, template, event)
            continue
        value = template.render(event)
        if value is not None and value != "":
            labels.append((name, value))
    labels.sort()
    return tuple(labels)
