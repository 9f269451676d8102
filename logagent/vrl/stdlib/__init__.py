"""VRL's functions, declared with ``vrl.function.Function``.

``FUNCTIONS`` maps each name to its declaration; the compiler looks names up
here and nowhere else. ``VRL_FUNCTION_NAMES`` is every function VRL has, so
that a call to one this package lacks is refused with the function named.
One module per family: ``types`` (assertions, ``is_*``, ``to_*``).
"""

from __future__ import annotations

from ..function import Function
from . import aws, codecs, grok, misc, objects, parse_logs, parse_text, redact, strings, timestamps, types, url
from .names import VRL_FUNCTION_NAMES

__all__ = ["FUNCTIONS", "VRL_FUNCTION_NAMES"]

FUNCTIONS: dict[str, Function] = {
    declared.name: declared for family in (types, strings, objects, parse_text, codecs, misc, timestamps, redact, parse_logs, url, aws, grok) for declared in family.FUNCTIONS
}
