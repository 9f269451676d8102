"""Errors raised while compiling and evaluating conditions."""

from __future__ import annotations


class ConditionSyntaxError(ValueError):
    """A condition that cannot be compiled, with the position of the problem.

    ``str()`` gives ``line L, column C: <reason>`` followed by the source line
    and a caret under the column, ready to be shown to the user as is.
    """

    def __init__(self, message: str, line: int, column: int, source_line: str = "") -> None:
        self.reason = message
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    def _render(self) -> str:
        text = f"line {self.line}, column {self.column}: {self.reason}"
        if self.source_line:
            # keep tabs in the padding so the caret lines up under tab-indented text
            pad = "".join("\t" if ch == "\t" else " " for ch in self.source_line[: self.column - 1])
            text += f"\n  {self.source_line}\n  {pad}^"
        return text


class ConditionRuntimeError(Exception):
    """Raised inside a compiled condition; the condition then evaluates to False."""


def error_at(source: str, offset: int, reason: str) -> ConditionSyntaxError:
    """Build a :class:`ConditionSyntaxError` for a character offset in ``source``."""
    offset = max(0, min(offset, len(source)))
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    if line_end == -1:
        line_end = len(source)
    line = source.count("\n", 0, offset) + 1
    column = offset - line_start + 1
    return ConditionSyntaxError(reason, line, column, source[line_start:line_end].rstrip("\r"))
