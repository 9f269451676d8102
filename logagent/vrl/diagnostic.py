"""Compile-time errors of VRL programs, worded and numbered as Vector's VRL reports them.

A :class:`VrlError` carries VRL's error code (``E103``), its title
(``unhandled fallible assignment``), where in the source it points (a
character offset, shown as line and column), the labels VRL prints under the
caret and the fix VRL suggests, if any. ``str()`` renders all of it on a
few lines, ready for a config error.
"""

from __future__ import annotations


class VrlError(ValueError):
    """A program that does not compile."""

    def __init__(self, code: str, title: str, source: str, offset: int, end: int | None = None,
                 labels: tuple[str, ...] = (), fix: str | None = None) -> None:
        self.code = code
        self.title = title
        self.offset = max(0, min(offset, len(source)))
        self.end = self.offset + 1 if end is None else max(end, self.offset + 1)
        self.line, self.column, self.source_line = position(source, self.offset)
        self.labels = labels
        self.fix = fix
        super().__init__(self.render())

    @property
    def reason(self) -> str:
        """The error without its position: ``error[E103]: unhandled fallible assignment``."""
        return f"error[{self.code}]: {self.title}"

    def render(self) -> str:
        text = f"line {self.line}, column {self.column}: {self.reason}"
        if self.source_line:
            pad = "".join("\t" if ch == "\t" else " " for ch in self.source_line[: self.column - 1])
            width = max(1, min(self.end - self.offset, len(self.source_line) - self.column + 1))
            text += f"\n  {self.source_line}\n  {pad}{'^' * width}"
        for label in self.labels:
            text += f"\n  {label}"
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


def position(source: str, offset: int) -> tuple[int, int, str]:
    """(line, column, text of that line) of a character offset, both counted from 1."""
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    if line_end == -1:
        line_end = len(source)
    line = source.count("\n", 0, offset) + 1
    return line, offset - line_start + 1, source[line_start:line_end].rstrip("\r")


class Diagnostics:
    """Builds the errors of one program's source."""

    __slots__ = ("source",)

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, code: str, title: str, offset: int, end: int | None = None,
              labels: tuple[str, ...] = (), fix: str | None = None) -> VrlError:
        return VrlError(code, title, self.source, offset, end, labels, fix)

    def syntax(self, offset: int, label: str, end: int | None = None) -> VrlError:
        return self.error("E203", "syntax error", offset, end, (label,))

    def text(self, offset: int, end: int) -> str:
        return self.source[offset:end]

    def byte_span(self, offset: int, end: int) -> str:
        """``start:end`` in UTF-8 bytes, as VRL's runtime messages show a call's position."""
        start = len(self.source[:offset].encode())
        return f"{start}:{start + len(self.source[offset:end].encode())}"
