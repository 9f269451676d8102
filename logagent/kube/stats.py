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

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return f"KindStats({self.as_dict()})"
