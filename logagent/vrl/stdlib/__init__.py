"""VRL's functions, declared with ``vrl.function.Function``.

``FUNCTIONS`` maps each name to its declaration; the compiler looks names up
here and nowhere else. It is read-only and lazy (``registry.py``): every name
is known from a static table, and a family module is imported only when a
program looks up one of its functions. ``VRL_FUNCTION_NAMES`` is every
function VRL has, so that a call to one this package lacks is refused with
the function named. One module per family: ``types`` (assertions, ``is_*``,
``to_*``), ``strings``, ``objects``, ``parse_text``, ``codecs``, ``misc``,
``timestamps``, ``redact``, ``parse_logs``, ``syslog``, ``tokens``, ``numbers``,
``network``, ``url``, ``aws``, ``grok``.
"""

from __future__ import annotations

from .names import VRL_FUNCTION_NAMES
from .registry import Functions

__all__ = ["FUNCTIONS", "VRL_FUNCTION_NAMES"]

FUNCTIONS: Functions = Functions()
