"""The own fields a batch program's records keep (``transforms/remap_fields.py``)."""

from __future__ import annotations

import gc
import sys
import tracemalloc

import msgspec

from logagent.transforms.remap_fields import own_fields


def test_objects_are_kept_as_their_json_in_bytes_of_exactly_its_size() -> None:
    # records wait in sinks' inboxes holding these: an encoder's spare capacity would be held with them
    values = [{"path": f"/api/orders/{i}", "trace_id": f"{i:032x}", "pad": "x" * (150 + i % 97), "n": i}
              for i in range(500)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        rows = own_fields([("json", values, None)], ["m"] * len(values), {})
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert rows is not None
    raws = [row["json"] for row in rows]
    assert [msgspec.json.decode(raw) for raw in raws] == values
    empty_bytes = sys.getsizeof(b"")
    needed = sys.getsizeof(rows) + sum(sys.getsizeof(row) + sys.getsizeof(raw) + empty_bytes + len(memoryview(raw))
                                       for row, raw in zip(rows, raws))
    assert after - before <= needed + 8 * len(rows)
