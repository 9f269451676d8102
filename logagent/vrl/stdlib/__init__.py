"""VRL's functions, declared with ``vrl.function.Function``.

``FUNCTIONS`` maps each name to its declaration; the compiler looks names up
here and nowhere else.
"""

from __future__ import annotations

from ..function import Function

FUNCTIONS: dict[str, Function] = {}
