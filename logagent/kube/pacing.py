"""How the metadata side paces its requests: backoff after failures, a rate limit.

Shared by the list/watch :mod:`~logagent.kube.watcher` and the namespace
:mod:`~logagent.kube.lookup`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable


class Backoff:
    """Exponential backoff with full jitter (AWS architecture blog's "Full Jitter")."""

    def __init__(self, initial: float, maximum: float, rng: random.Random) -> None:
        self.initial = initial
        self.maximum = maximum
        self.attempt = 0
        self._rng = rng

    def next_delay(self) -> float:
        cap = min(self.maximum, self.initial * (2**self.attempt))
        self.attempt = min(self.attempt + 1, 62)
        return self._rng.uniform(0.0, cap)

    def reset(self) -> None:
        self.attempt = 0


class TokenBucket:
    """At most ``rate`` acquisitions per second on average, bursts up to ``burst``."""

    def __init__(
        self,
        rate: float,
        burst: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] = asyncio.sleep,
    ) -> None:
        self.rate = rate
        self.burst = max(1.0, burst)
        self._tokens = self.burst
        self._clock = clock
        self._sleep = sleep
        self._updated = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._updated) * self.rate)
        self._updated = now

    async def acquire(self) -> None:
        while True:
            self._refill()
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return
            await self._sleep((1.0 - self._tokens) / self.rate)  # type: ignore[misc]
