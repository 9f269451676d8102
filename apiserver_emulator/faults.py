"""Fault injection rules and request accounting."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

VERBS = ("list", "watch", "get")


@dataclass(slots=True)
class FaultRule:
    """Answer the next `remaining` requests matching (verb, resource) with `status`.

    verb/resource "*" match anything. 429 answers carry Retry-After.
    """

    verb: str
    resource: str
    status: int
    remaining: int
    retry_after: int = 1
    message: str = ""

    def matches(self, verb: str, resource: str) -> bool:
        return self.remaining > 0 and self.verb in ("*", verb) and self.resource in ("*", resource)


@dataclass(slots=True)
class RequestRecord:
    verb: str
    resource: str
    namespace: str
    query: dict[str, str]
    status: int = 0
    #: response body bytes sent so far (headers not counted)
    bytes: int = 0
    #: the object's name for a GET of one object, else ""
    name: str = ""


@dataclass
class Accounting:
    """What clients asked for. Python attributes for in-process tests, `to_json()` for subprocess ones."""

    requests: Counter[tuple[str, str]] = field(default_factory=Counter)
    statuses: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    open_watches: Counter[str] = field(default_factory=Counter)
    watch_events_sent: Counter[str] = field(default_factory=Counter)
    #: response body bytes by (verb, resource), counted as they are written (open watches included)
    bytes_sent: Counter[tuple[str, str]] = field(default_factory=Counter)
    log: deque[RequestRecord] = field(default_factory=lambda: deque(maxlen=10_000))

    def record(self, verb: str, resource: str, namespace: str, query: dict[str, str]) -> RequestRecord:
        self.requests[(verb, resource)] += 1
        rec = RequestRecord(verb, resource, namespace, query)
        self.log.append(rec)
        return rec

    def finish(self, rec: RequestRecord, status: int) -> None:
        rec.status = status
        self.statuses[(rec.verb, rec.resource, status)] += 1

    def sent(self, rec: RequestRecord, nbytes: int) -> None:
        rec.bytes += nbytes
        self.bytes_sent[(rec.verb, rec.resource)] += nbytes

    def requests_matching(self, verb: str | None = None, resource: str | None = None) -> list[RequestRecord]:
        return [r for r in self.log if (verb is None or r.verb == verb) and (resource is None or r.resource == resource)]

    def reset(self) -> None:
        self.requests.clear()
        self.statuses.clear()
        self.watch_events_sent.clear()
        self.bytes_sent.clear()
        self.log.clear()

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": {f"{v}/{r}": n for (v, r), n in sorted(self.requests.items())},
            "statuses": {f"{v}/{r}/{c}": n for (v, r, c), n in sorted(self.statuses.items())},
            "open_watches": dict(self.open_watches),
            "watch_events_sent": dict(self.watch_events_sent),
            "bytes_sent": {f"{v}/{r}": n for (v, r), n in sorted(self.bytes_sent.items())},
            "log": [{"verb": r.verb, "resource": r.resource, "namespace": r.namespace, "query": r.query,
                     "status": r.status, "bytes": r.bytes, "name": r.name} for r in list(self.log)[-200:]],
        }


@dataclass
class Faults:
    rules: list[FaultRule] = field(default_factory=list)
    delays: dict[tuple[str, str], float] = field(default_factory=dict)
    # Close every watch of a resource after this many events (None = never).
    close_watch_after: dict[str, int] = field(default_factory=dict)

    def inject(self, verb: str, resource: str, status: int, count: int = 1, retry_after: int = 1,
               message: str = "") -> FaultRule:
        if verb not in (*VERBS, "*"):
            raise ValueError(f"verb must be one of {VERBS} or '*', got {verb!r}")
        rule = FaultRule(verb, resource, status, count, retry_after, message)
        self.rules.append(rule)
        return rule

    def take(self, verb: str, resource: str) -> FaultRule | None:
        for rule in self.rules:
            if rule.matches(verb, resource):
                rule.remaining -= 1
                return rule
        return None

    def delay_for(self, verb: str, resource: str) -> float:
        for key in ((verb, resource), (verb, "*"), ("*", resource), ("*", "*")):
            if key in self.delays:
                return self.delays[key]
        return 0.0

    def clear(self) -> None:
        self.rules.clear()
        self.delays.clear()
        self.close_watch_after.clear()
