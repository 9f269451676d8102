"""Several endpoints of one service: requests spread over them, an unhealthy one out of rotation.

As Vector's ``elasticsearch`` sink does with several ``endpoints``: each
request (each attempt, so a retry may go elsewhere) goes to the endpoint with
the fewest requests in flight among those in rotation, ties taken in turn. An
endpoint leaves the rotation when it cannot be reached (no connection, a
timeout) or answers 5xx ``FAILURES_TO_TRIP`` times in a row (a 429 or a 4xx
comes from a working node and counts as a success). It stays out for
``distribution.retry_initial_backoff_secs``, doubled after each failed
return up to ``distribution.retry_max_duration_secs``; when that time is up,
one request at a time goes to it, and the first that succeeds puts it back.
With every endpoint out of rotation, requests go to the one due back first
(the sink's own retries and backoff then apply).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import structlog

#: consecutive 5xx answers that take an endpoint out of rotation (unreachable: the first failure)
FAILURES_TO_TRIP = 3


class Endpoint:
    """One endpoint's health: failures in a row, when it may be tried again, requests in flight."""

    __slots__ = ("index", "name", "failures", "in_flight", "out_until", "backoff", "probing")

    def __init__(self, index: int, name: str) -> None:
        self.index = index
        #: for logs (credentials masked)
        self.name = name
        self.failures = 0
        self.in_flight = 0
        #: clock time until which it is out of rotation; None while in rotation
        self.out_until: float | None = None
        #: how long it stays out the next time it leaves the rotation
        self.backoff = 0.0
        #: a request is testing whether it is back
        self.probing = False

    @property
    def in_rotation(self) -> bool:
        return self.out_until is None


class EndpointPool:
    """Chooses the endpoint for each request and keeps each one's health."""

    def __init__(
        self,
        names: list[str],
        initial_backoff_secs: float,
        max_backoff_secs: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.endpoints = [Endpoint(index, name) for index, name in enumerate(names)]
        self.initial_backoff_secs = initial_backoff_secs
        self.max_backoff_secs = max_backoff_secs
        self._clock = clock
        self._turn = itertools.count()
        self._log = structlog.get_logger(__name__)
        for endpoint in self.endpoints:
            endpoint.backoff = initial_backoff_secs

    def __len__(self) -> int:
        return len(self.endpoints)

    @property
    def in_rotation(self) -> int:
        return sum(1 for endpoint in self.endpoints if endpoint.in_rotation)

    def choose(self) -> Endpoint:
        """The endpoint for the next request (counted in flight until ``done``)."""
        now = self._clock()
        candidates = [e for e in self.endpoints if e.in_rotation]
        due = [e for e in self.endpoints if not e.in_rotation and not e.probing and e.out_until <= now]  # type: ignore[operator]
        if due:
            chosen = min(due, key=lambda e: e.out_until)  # type: ignore[arg-type, return-value]
            chosen.probing = True
        elif candidates:
            turn = next(self._turn)
            size = len(self.endpoints)
            chosen = min(candidates, key=lambda e: (e.in_flight, (e.index - turn) % size))
        else:
            chosen = min(self.endpoints, key=lambda e: e.out_until)  # type: ignore[arg-type, return-value]
        chosen.in_flight += 1
        return chosen

    def done(self, endpoint: Endpoint, healthy: bool | None, reachable: bool = True) -> None:
        """Record how a request to ``endpoint`` went.

        ``healthy`` unless it failed (None: no verdict, the request was
        cancelled), ``reachable`` unless nothing answered.
        """
        endpoint.in_flight -= 1
        probing, endpoint.probing = endpoint.probing, False
        if healthy is None:
            return
        if healthy:
            endpoint.failures = 0
            endpoint.backoff = self.initial_backoff_secs
            if not endpoint.in_rotation:
                endpoint.out_until = None
                self._log.info("endpoint back in rotation", endpoint=endpoint.name)
            return
        endpoint.failures += 1
        if probing or (endpoint.in_rotation and (not reachable or endpoint.failures >= FAILURES_TO_TRIP)):
            endpoint.out_until = self._clock() + endpoint.backoff
            self._log.warning(
                "endpoint out of rotation",
                endpoint=endpoint.name,
                failures_in_a_row=endpoint.failures,
                retry_in_secs=round(endpoint.backoff, 3),
            )
            endpoint.backoff = min(endpoint.backoff * 2, self.max_backoff_secs)
