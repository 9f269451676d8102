"""Conditions for the filter and route transforms: the subset of Vector's VRL they use.

``compile_condition(text)`` parses and compiles a condition once into Python
closures; the resulting :class:`Condition` is called per record. See
``lexer``, ``parser``, ``compiler``, ``functions`` and ``regex`` for the parts.
"""

from .condition import Condition, compile_condition
from .errors import ConditionSyntaxError

__all__ = ["Condition", "ConditionSyntaxError", "compile_condition"]
