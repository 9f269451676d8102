"""Vector's documented keys of the globals logagent implements, with their status here."""

from __future__ import annotations

from logagent.vector_keys.model import VectorKey

#: component type (for globals: "global") -> its Vector keys
GLOBALS_KEYS: dict[str, tuple[VectorKey, ...]] = {}
