"""The one list of Vector's keys: what README's Vector table shows and the key tests walk.

Each part is owned by the code it describes: ``sources.py`` (``kubernetes_logs``,
``internal_metrics``), ``transforms.py``, ``sinks.py``, ``globals.py`` (top-level keys).

The config loader reads it too (``config_vector.apply_key_list``): a ``refused``
key is an error whose text is its note; an ``accepted`` key our config Structs
have no field for is taken out (our behaviour already gives what it asks). A
path may be listed twice, once ``same``/``accepted`` and once ``refused``, when
the value decides; ``*_VALUES`` then holds the predicate of the accepted values.
A ``*`` segment stands for any key (``route.*``: every route).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logagent.vector_keys import sinks as _sinks
from logagent.vector_keys.globals import GLOBALS_KEYS, GLOBALS_VALUES
from logagent.vector_keys.model import Status, VectorKey
from logagent.vector_keys.sinks import SINKS_KEYS
from logagent.vector_keys.sources import SOURCES_KEYS, SOURCES_VALUES
from logagent.vector_keys.transforms import TRANSFORMS_KEYS, TRANSFORMS_VALUES

__all__ = ["ALL_KEYS", "ALL_VALUES", "Status", "VectorKey", "render_markdown"]

#: section ("global", "sources", "transforms", "sinks") -> component type -> keys
ALL_KEYS: dict[str, dict[str, tuple[VectorKey, ...]]] = {
    "global": GLOBALS_KEYS,
    "sources": SOURCES_KEYS,
    "transforms": TRANSFORMS_KEYS,
    "sinks": SINKS_KEYS,
}

#: section -> component type -> path -> whether a value is one the same/accepted entry stands for
ALL_VALUES: dict[str, dict[str, dict[str, Callable[[Any], bool]]]] = {
    "global": GLOBALS_VALUES,
    "sources": SOURCES_VALUES,
    "transforms": TRANSFORMS_VALUES,
    # the sinks' part keeps its predicates next to its keys (an empty mapping until it has some)
    "sinks": getattr(_sinks, "SINKS_VALUES", {}),
}

_STATUS_TEXT = {"same": "same", "accepted": "accepted", "refused": "refused"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _example(value: Any) -> str:
    if value is None:
        return ""
    import json

    return "`" + _cell(json.dumps(value)) + "`"


def render_markdown() -> str:
    """README's Vector table: one row per listed key, by section and component type."""
    lines = ["| section | type | key | status | example | note |", "|---|---|---|---|---|---|"]
    for section, kinds in ALL_KEYS.items():
        for kind, keys in kinds.items():
            for key in keys:
                lines.append(
                    f"| {section} | `{kind}` | `{key.path}` | {_STATUS_TEXT[key.status]} | {_example(key.example)} "
                    f"| {_cell(key.note)} |"
                )
    return "\n".join(lines) + "\n"
