"""The one place that touches google-re2's low-level ``_re2`` binding.

The public ``re2`` API builds a Python generator and a match object per
search, about 11 µs for a three-group pattern against 2 µs through the
binding; on the per-line path that difference is the whole budget. The
binding is not a documented API, so the package is pinned (pyproject.toml)
and ``check_binding`` (run at import, and by ``tests/test_re2_binding.py``)
fails with the reason if a release moves or renames what is used here.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence

import re2
from re2 import _re2

#: the google-re2 release this module was written against (pinned in pyproject.toml)
PINNED_VERSION = "1.1.20251105"
_USED = ("Match", "NumberOfCapturingGroups", "NamedCapturingGroups", "ok", "error", "Anchor")
_USED_OF_SET = ("Add", "Compile", "Match")

Options = re2.Options
NativeRegex = _re2.RE2
UNANCHORED = _re2.RE2.Anchor.UNANCHORED
ANCHOR_START = _re2.RE2.Anchor.ANCHOR_START
ANCHOR_BOTH = _re2.RE2.Anchor.ANCHOR_BOTH


class BindingChanged(ImportError):
    """google-re2's private binding is not what this module was written for."""


def check_binding() -> None:
    """Raise ``BindingChanged`` naming what is missing from the installed binding."""
    missing = [name for name in _USED if not hasattr(_re2.RE2, name)]
    missing += [f"Set.{name}" for name in _USED_OF_SET if not hasattr(getattr(_re2, "Set", None), name)]
    if missing:
        installed = importlib.metadata.version("google-re2")
        raise BindingChanged(
            f"google-re2 {installed}: re2._re2.RE2 lacks {', '.join(missing)}; "
            f"logagent/user_regex/re2_binding.py is written for google-re2=={PINNED_VERSION}"
        )


def compile_native(pattern: str, options: re2.Options) -> _re2.RE2:
    """The binding's compiled pattern; check ``.ok()`` and ``.error()`` (bytes) before use."""
    return _re2.RE2(pattern.encode("utf-8", "surrogatepass"), options)


def literal_set(literals: Sequence[str], max_mem: int = 1 << 20) -> Callable[[bytes], list[int]]:
    """The texts ``literals`` as one automaton: a function of UTF-8 data listing the indexes of those found
    in it, each once, in no particular order, in one pass however many there are.

    RE2's set match never gives up on a text that makes many states (it clears its cache and goes on), so
    ``max_mem`` bounds the memory without losing a match.
    """
    options = Options()
    options.literal = True
    options.log_errors = False
    options.max_mem = max_mem
    found = _re2.Set(UNANCHORED, options)
    for index, literal in enumerate(literals):
        if found.Add(literal.encode("utf-8", "surrogatepass")) != index:
            raise ValueError(f"RE2 did not take the literal {literal!r}")
    if not found.Compile():
        raise ValueError("RE2 could not compile the literal set")
    return found.Match


def group_names(compiled: _re2.RE2) -> dict[str, int]:
    """Named groups of a compiled pattern: name -> group index."""
    return {name.decode("utf-8"): index for name, index in compiled.NamedCapturingGroups()}


check_binding()
