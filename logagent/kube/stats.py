"""Counters of the metadata side, read by the metrics exporter."""

from __future__ import annotations


class KindStats:
    """Counters for the watch of one kind (all monotonically increasing)."""

    __slots__ = (
        "list_requests",
        "watch_requests",
        "relists",
        "events",
        "bookmarks",
        "decode_errors",
        "request_errors",
        "throttled",
        "requests",
        "watch_restarts",
        "last_event_at",
    )

    def __init__(self) -> None:
        #: list requests (one per page)
        self.list_requests = 0
        #: watch requests (streaming watch-lists included)
        self.watch_requests = 0
        #: full relists after the server answered 410 Gone
        self.relists = 0
        #: ADDED / MODIFIED / DELETED events applied
        self.events = 0
        self.bookmarks = 0
        #: watch lines or list pages that could not be decoded (skipped)
        self.decode_errors = 0
        #: failed requests or broken streams (each followed by a backoff)
        self.request_errors = 0
        #: 429 Too Many Requests answers
        self.throttled = 0
        #: requests by (verb, status class): ("watch", "2xx"), ("list", "error") ...
        self.requests: dict[tuple[str, str], int] = {}
        #: watches started again from a known resourceVersion (after a timeout or a drop)
        self.watch_restarts = 0
        #: time.monotonic() of the last event or bookmark; None before the first
        self.last_event_at: float | None = None

    def count_request(self, verb: str, status: str) -> None:
        key = (verb, status)
        self.requests[key] = self.requests.get(key, 0) + 1

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"KindStats({self.as_dict()})"
