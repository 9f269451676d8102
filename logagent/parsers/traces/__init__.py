"""The built-in stack trace detectors, one table per language, as data.

Each language is a :class:`~logagent.parsers.traces.shapes.Language`: the
rules that start a trace, and for each named state the rules a following
line may match (``(regex, next state)``, ``TENTATIVE`` for lines that only
belong to the trace if a later line continues it, ``END`` for the line a
trace ends with). A line no rule of the trace's states takes ends the trace
and may start the next one, so two traces back to back are two records. The
formats are those the runtimes print for an uncaught exception and their
usual logging libraries print for a caught one. The regexes are RE2 (Rust
``regex`` syntax, compiled once per machine): a new runtime is a new module
here, not code in the grouper (``multiline_rules`` builds the machine).
"""

from __future__ import annotations

from logagent.parsers.traces import dart, dotnet, go, java, nodejs, php, python, ruby, rust
from logagent.parsers.traces.shapes import Language

#: every language, by name, in the order ``auto`` lists them
LANGUAGES: dict[str, Language] = {
    "java": java.LANGUAGE,
    "python": python.LANGUAGE,
    "go": go.LANGUAGE,
    "ruby": ruby.LANGUAGE,
    "nodejs": nodejs.LANGUAGE,
    "dotnet": dotnet.LANGUAGE,
    "php": php.LANGUAGE,
    "dart": dart.LANGUAGE,
    "rust": rust.LANGUAGE,
}
