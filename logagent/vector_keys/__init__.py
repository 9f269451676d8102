"""The one list of Vector's keys: what README's Vector table shows and the key tests walk.

Each part is owned by the code it describes: ``sources.py`` (``kubernetes_logs``,
``internal_metrics``), ``transforms.py``, ``sinks.py``, ``globals.py`` (top-level keys).
"""

from __future__ import annotations

from logagent.vector_keys.globals import GLOBALS_KEYS
from logagent.vector_keys.metrics import METRICS_KEYS
from logagent.vector_keys.model import Status, VectorKey
from logagent.vector_keys.sinks import HEALTHCHECKS_KEYS, SINKS_KEYS
from logagent.vector_keys.sources import SOURCES_KEYS
from logagent.vector_keys.transforms import TRANSFORMS_KEYS

__all__ = ["ALL_KEYS", "Status", "VectorKey"]

#: section ("global", "sources", "transforms", "sinks") -> component type -> keys
ALL_KEYS: dict[str, dict[str, tuple[VectorKey, ...]]] = {
    "global": {**GLOBALS_KEYS, "global": (*GLOBALS_KEYS.get("global", ()), *HEALTHCHECKS_KEYS)},
    "sources": {**SOURCES_KEYS, **METRICS_KEYS},
    "transforms": TRANSFORMS_KEYS,
    "sinks": SINKS_KEYS,
}
