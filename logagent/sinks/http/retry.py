"""Retry timing: exponential backoff with full jitter, and ``Retry-After``."""

from __future__ import annotations

import email.utils
import random
import time

#: An absurd Retry-After (hours) is capped so that a sink cannot stall forever.
MAX_RETRY_AFTER_SECS = 300.0

#: Statuses worth retrying: the same request may succeed later.
RETRYABLE_STATUSES = frozenset({408, 429})


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


class Backoff:
    """Delays for consecutive failures: ``uniform(0, min(max, initial * 2**n))``.

    Full jitter spreads the retries of many agents that failed at the same
    moment (a receiver restart) instead of sending them back in waves.
    """

    def __init__(self, initial_secs: float, max_secs: float, rng: random.Random | None = None) -> None:
        self.initial_secs = initial_secs
        self.max_secs = max_secs
        self._rng = rng or random.Random()

    def delay(self, failures: int) -> float:
        """The delay after the ``failures``-th consecutive failure (1-based)."""
        exponent = min(max(failures - 1, 0), 62)
        ceiling = min(self.max_secs, self.initial_secs * (2**exponent))
        return self._rng.uniform(0.0, ceiling)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (seconds or HTTP-date).

    None when absent or unreadable; never negative; capped at
    ``MAX_RETRY_AFTER_SECS``.
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None or when.tzinfo is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECS)
