"""Rate-limited repeated warnings: the first occurrence of a key is logged at
once, repeats within the interval are only counted, and the next line that is
logged for the key says how many were left out (``suppressed=<n>``).

Meant for conditions that can repeat per line or per request ("no metadata for
pod", "sink failing, retrying"): the metrics count every occurrence, the log
shows that it happens without flooding stderr.

Keys should be bounded (a kind of problem, at most with a component id); a
per-pod key is acceptable because the number of remembered keys is capped:
past ``max_keys`` the oldest key is forgotten, so its next occurrence is
logged at once again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any

DEFAULT_INTERVAL_SECS = 60.0
DEFAULT_MAX_KEYS = 1024

Clock = Callable[[], float]


class RateLimiter:
    """Decides, per key, whether an occurrence is logged or suppressed."""

    __slots__ = ("_clock", "_max_keys", "_state")

    def __init__(self, *, clock: Clock = time.monotonic, max_keys: int = DEFAULT_MAX_KEYS) -> None:
        if max_keys < 1:
            raise ValueError("max_keys must be at least 1")
        self._clock = clock
        self._max_keys = max_keys
        #: key -> [time of the last logged occurrence, occurrences suppressed since]
        self._state: dict[Hashable, list[float | int]] = {}

    def admit(self, key: Hashable, interval_secs: float) -> int | None:
        """None when this occurrence is to be suppressed, else the number of
        occurrences suppressed since the previous logged one (0 the first time)."""
        now = self._clock()
        state = self._state.get(key)
        if state is None:
            if len(self._state) >= self._max_keys:
                del self._state[next(iter(self._state))]
            self._state[key] = [now, 0]
            return 0
        last, suppressed = state
        if now - last < interval_secs:
            state[1] = suppressed + 1
            return None
        state[0], state[1] = now, 0
        return int(suppressed)

    def suppressed(self, key: Hashable) -> int:
        """Occurrences of ``key`` suppressed and not reported yet."""
        state = self._state.get(key)
        return int(state[1]) if state is not None else 0

    def __len__(self) -> int:
        return len(self._state)


class RateLimitedLogger:
    """Wraps a (structlog) logger: ``warning(key, event, **fields)`` logs the
    first occurrence of ``key`` and then at most once per ``interval_secs``."""

    __slots__ = ("logger", "interval_secs", "limiter")

    def __init__(
        self,
        logger: Any,
        interval_secs: float = DEFAULT_INTERVAL_SECS,
        *,
        clock: Clock = time.monotonic,
        max_keys: int = DEFAULT_MAX_KEYS,
    ) -> None:
        self.logger = logger
        self.interval_secs = interval_secs
        self.limiter = RateLimiter(clock=clock, max_keys=max_keys)

    def log(self, level: str, key: Hashable, event: str, **fields: Any) -> bool:
        """Log ``event`` at ``level`` unless ``key`` was logged within the
        interval; True when it was logged."""
        return _emit(self.limiter, self.logger, level, key, event, self.interval_secs, fields)

    def debug(self, key: Hashable, event: str, **fields: Any) -> bool:
        return self.log("debug", key, event, **fields)

    def info(self, key: Hashable, event: str, **fields: Any) -> bool:
        return self.log("info", key, event, **fields)

    def warning(self, key: Hashable, event: str, **fields: Any) -> bool:
        return self.log("warning", key, event, **fields)

    def error(self, key: Hashable, event: str, **fields: Any) -> bool:
        return self.log("error", key, event, **fields)


_shared = RateLimiter()


def warn_limited(
    logger: Any, key: Hashable, event: str, interval_secs: float = DEFAULT_INTERVAL_SECS, **fields: Any
) -> bool:
    """A rate-limited warning through a process-wide limiter; True when logged.

    Keys are shared by every caller, so make them specific
    (``("unknown_pod", source_id)``, not ``"unknown"``).
    """
    return _emit(_shared, logger, "warning", key, event, interval_secs, fields)


def _emit(
    limiter: RateLimiter, logger: Any, level: str, key: Hashable, event: str, interval: float, fields: dict[str, Any]
) -> bool:
    suppressed = limiter.admit(key, interval)
    if suppressed is None:
        return False
    if suppressed:
        fields["suppressed"] = suppressed
    getattr(logger, level)(event, **fields)
    return True
