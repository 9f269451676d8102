"""What every sink implements. The topology gives each sink its own inbox."""

from __future__ import annotations

import abc

from logagent.queue import BatchQueue


class Sink(abc.ABC):
    """Consumes batches from its inbox and releases each one once delivered.

    ``run`` returns when the inbox is closed and drained (or raises on a fatal
    error, such as a closed stdout pipe). Delivery is at-least-once: release a
    batch only after its records are durably handed over (write flushed, 2xx).
    A batch dropped on purpose (a 4xx that retrying cannot fix) is released too,
    after it is counted and logged.
    """

    kind: str = "sink"

    def __init__(self, component_id: str) -> None:
        self.component_id = component_id

    async def start(self) -> None:
        """Open connections; called before any source starts reading."""

    @abc.abstractmethod
    async def run(self, inbox: BatchQueue) -> None: ...

    async def stop(self) -> None:
        """Close connections; called after ``run`` returned or was cancelled."""
