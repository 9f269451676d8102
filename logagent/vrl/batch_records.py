"""A batch program over plain records (dicts): the batch engine's simplest source and result.

``run_records(program, records)`` gives, per record, what ``Program.run``
gives one at a time: ``("ok", event)``, ``("error", message)`` or
``("abort", message)``. The remap transform reads and writes ``LogEvent``s
instead (``transforms/remap_batch.py``); this form is for tests and tools.
"""

from __future__ import annotations

from typing import Any

from .batch_compiler import BatchProgram
from .batch_run import BatchRun
from .batch_values import ABSENT, Column, Uniform


class RecordsSource:
    """Columns read from a list of dicts (the records are not changed)."""

    __slots__ = ("records", "n")

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records
        self.n = len(records)

    def column(self, key: str) -> tuple[Column, list[bool] | None, set[type] | None]:
        present = [key in record for record in self.records]
        if True not in present:
            return Uniform(ABSENT), None, None
        return [record.get(key) for record in self.records], None if False not in present else present, None


def run_records(program: BatchProgram, records: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    run = program.run(RecordsSource(records))
    return [outcome(run, i, record) for i, record in enumerate(records)]


def outcome(run: BatchRun, i: int, record: dict[str, Any]) -> tuple[str, Any]:
    failed = run.failed.get(i)
    if failed is not None:
        return failed[0], str(failed[1])
    event = dict(record)
    for key in run.written:
        col, present = run.final(key)
        value = col.value if type(col) is Uniform else col[i]
        if value is ABSENT or (present is not None and not present[i]):
            event.pop(key, None)
        else:
            event[key] = value
    return "ok", event
