"""Tap: a bounded sample of the records passing components of the running graph.

A tap session is attached by adding a :class:`TapPoint` to the consumers of
each port it watches, in the topology's current ``Wiring`` (the lists are
replaced, never changed in place, so a delivery under way keeps the list it
started with). With no session attached the pipeline runs exactly as before:
not even an attribute check is added to the hot path. An attached point costs
one more consumer per batch of its port: it takes at most ``limit`` records per
``interval`` into a ring buffer of its session and releases the batch at once.
The session's writer (the HTTP handler, see :mod:`.tap_http`) drains the ring
every interval; when the client reads too slowly the writer waits on the
socket, the ring overwrites its oldest records and the client is told how many
it missed. The pipeline never waits for a tap.

``outputs_of`` patterns (globs) name sources and transforms, whose output
ports are watched; ``inputs_of`` patterns name transforms and sinks, whose
input ports are watched: the records a component receives are the ones on
the ports it consumes.
"""

from __future__ import annotations

import fnmatch
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from logagent.acks import Batch
from logagent.encoding import encode_json
from logagent.graph import output_ports

#: at most this many records per interval per session
MAX_LIMIT = 10_000
#: at most this many sessions at once (each costs a consumer per watched batch)
MAX_SESSIONS = 8

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True)
class TapLabel:
    """What a watched port stands for in one session: a component's output or input."""

    component_id: str
    component_kind: str  # source, transform, sink
    component_type: str  # kubernetes_logs, filter, http...
    direction: str  # "output" or "input"
    port: str

    def prefix(self) -> bytes:
        """The start of an event message of this label, up to the event's JSON."""
        head = {
            "type": "event",
            "component_id": self.component_id,
            "component_kind": self.component_kind,
            "component_type": self.component_type,
            "direction": self.direction,
            "port": self.port,
        }
        return _encode(head)[:-1] + b',"event":'


class TapPoint:
    """A consumer of one port for one session: samples, releases, passes nothing on."""

    __slots__ = ("session", "labels", "component_id")

    def __init__(self, session: TapSession, labels: tuple[TapLabel, ...]) -> None:
        self.session = session
        self.labels = labels
        self.component_id = f"tap:{labels[0].port}"

    def process(self, batch: Batch) -> Iterable[tuple[str, Batch]]:
        try:
            self.session.sample(batch.events, self)
        except Exception:  # noqa: BLE001 - a tap must never break the pipeline
            self.session.errors += 1
        finally:
            batch.release()
        return ()


class TapSession:
    """One client's sample: a per-interval limit and a ring buffer of sampled records."""

    def __init__(self, limit: int, interval_secs: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError(f"limit: must be from 1 to {MAX_LIMIT}")
        if interval_secs <= 0:
            raise ValueError("interval: must be positive")
        self.limit = limit
        self.interval = interval_secs
        self._clock = clock
        #: (point, event): twice an interval's worth, so a writer a little late loses nothing
        self.ring: deque[tuple[TapPoint, Any]] = deque(maxlen=2 * limit)
        self._window_end = 0.0
        self._taken = 0
        #: records sampled but overwritten in the ring before the writer could send them
        self.missed = 0
        #: records seen and not sampled (over the limit of their interval)
        self.passed_over = 0
        self.errors = 0
        self.points: dict[str, TapPoint] = {}
        #: the wiring the points are in (see ``TapHub.refresh``)
        self.wiring: Any = None

    def sample(self, events: list[Any], point: TapPoint) -> None:
        now = self._clock()
        if now >= self._window_end:
            self._window_end = now + self.interval
            self._taken = 0
        room = self.limit - self._taken
        count = len(events)
        if count > room:
            self.passed_over += count - max(room, 0)
            if room <= 0:
                return
            events = events[:room]
            count = room
        self._taken += count
        ring = self.ring
        overflow = len(ring) + count - (ring.maxlen or 0)
        if overflow > 0:
            self.missed += overflow
        ring.extend((point, event) for event in events)

    def drain(self) -> list[bytes]:
        """The sampled records as event messages (ndjson lines), oldest first; empties the ring."""
        lines = []
        ring = self.ring
        while ring:
            point, event = ring.popleft()
            body = encode_json(event)
            for label in point.labels:
                lines.append(label.prefix() + body + b"}\n")
        return lines

    def take_missed(self) -> int:
        missed, self.missed = self.missed, 0
        return missed


def _component_type(config: Any) -> str:
    return str(type(config).__struct_config__.tag)


def resolve(config: Any, outputs_of: Iterable[str], inputs_of: Iterable[str]) -> tuple[dict[str, list[TapLabel]], list[str]]:
    """Watched port -> its labels, and notifications (one per pattern: matched or not)."""
    ports = output_ports(config)
    watched: dict[str, list[TapLabel]] = {}
    notes: list[str] = []
    producers = [("source", cid, cfg) for cid, cfg in config.sources.items()]
    producers += [("transform", cid, cfg) for cid, cfg in config.transforms.items()]
    consumers = [("transform", cid, cfg) for cid, cfg in config.transforms.items()]
    consumers += [("sink", cid, cfg) for cid, cfg in config.sinks.items()]
    for pattern in outputs_of:
        matched = [c for c in producers if fnmatch.fnmatchcase(c[1], pattern)]
        for kind, cid, cfg in matched:
            for port, owner in ports.items():
                if owner == cid:
                    watched.setdefault(port, []).append(TapLabel(cid, kind, _component_type(cfg), "output", port))
        notes.append(_match_note("outputs of", pattern, [c[1] for c in matched], "sources and transforms"))
    for pattern in inputs_of:
        matched = [c for c in consumers if fnmatch.fnmatchcase(c[1], pattern)]
        for kind, cid, cfg in matched:
            for port in cfg.inputs:
                watched.setdefault(port, []).append(TapLabel(cid, kind, _component_type(cfg), "input", port))
        notes.append(_match_note("inputs of", pattern, [c[1] for c in matched], "transforms and sinks"))
    return watched, notes


def _match_note(what: str, pattern: str, matched: list[str], kinds: str) -> str:
    if matched:
        return f'pattern "{pattern}" ({what}) matched: {", ".join(matched)}'
    return f'pattern "{pattern}" ({what}) matched no component: it names {kinds}'


class TapHub:
    """The sessions of one topology; attaches their points to its current wiring."""

    def __init__(self, topology: Any) -> None:
        self.topology = topology
        self.sessions: set[TapSession] = set()

    def open(self, outputs_of: list[str], inputs_of: list[str], limit: int, interval_secs: float) -> tuple[TapSession, list[str]]:
        """A new attached session and its notifications; ValueError for bad arguments or too many sessions."""
        if len(self.sessions) >= MAX_SESSIONS:
            raise ValueError(f"too many tap sessions (at most {MAX_SESSIONS} at once)")
        session = TapSession(limit, interval_secs)
        self.sessions.add(session)
        return session, self._attach(session, outputs_of, inputs_of)

    def refresh(self, session: TapSession, outputs_of: list[str], inputs_of: list[str]) -> list[str] | None:
        """After a config reload (a new wiring), attach the session to the new one; its notifications, or None."""
        if session.wiring is self.topology.wiring:
            return None
        self._detach(session)
        notes = self._attach(session, outputs_of, inputs_of)
        return ["the config was reloaded; tap attached again", *notes]

    def close(self, session: TapSession) -> None:
        self._detach(session)
        self.sessions.discard(session)

    def _attach(self, session: TapSession, outputs_of: list[str], inputs_of: list[str]) -> list[str]:
        wiring = self.topology.wiring
        watched, notes = resolve(self.topology.config, outputs_of, inputs_of)
        session.points = {port: TapPoint(session, tuple(labels)) for port, labels in watched.items()}
        edges = wiring.edges
        for port, point in session.points.items():
            edges[port] = [*edges.get(port, ()), point]  # a new list: deliveries under way keep theirs
        session.wiring = wiring
        return notes

    def _detach(self, session: TapSession) -> None:
        wiring = session.wiring
        if wiring is None:
            return
        edges = wiring.edges
        for port, point in session.points.items():
            targets = edges.get(port)
            if targets is not None and point in targets:
                edges[port] = [t for t in targets if t is not point]
        session.points = {}
        session.wiring = None
