"""Helpers shared by the parser tests (no tests here)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import msgspec
import pytest

TS = "2026-01-01T00:00:00.123456789Z"


def ts(n: int) -> str:
    """A distinct valid RFC3339Nano timestamp per n."""
    return f"2026-01-01T00:00:{n % 60:02d}.{n:09d}Z"


def cri(message: bytes | str, stream: str = "stdout", tag: str = "F", timestamp: str = TS) -> bytes:
    if isinstance(message, str):
        message = message.encode()
    return f"{timestamp} {stream} {tag} ".encode() + message


def docker(log: str, stream: str = "stdout", time: str = TS, **extra: object) -> bytes:
    return msgspec.json.encode({"log": log, "stream": stream, "time": time, **extra})


def chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.fixture(autouse=True)
def time_limit() -> Iterator[None]:
    """Bound every parser test in time: they are pure CPU work, 20 s is plenty."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError("parser test took longer than 20 s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
