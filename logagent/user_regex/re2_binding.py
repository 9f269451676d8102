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

import re2
from re2 import _re2

#: the google-re2 release this module was written against (pinned in pyproject.toml)
PINNED_VERSION = "1.1.20251105"
_USED = ("Match", "NumberOfCapturingGroups", "NamedCapturingGroups", "ok", "error", "Anchor")

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
    if missing:
        installed = importlib.metadata.version("google-re2")
        raise BindingChanged(
            f"google-re2 {installed}: re2._re2.RE2 lacks {', '.join(missing)}; "
            f"logagent/user_regex/re2_binding.py is written for google-re2=={PINNED_VERSION}"
        )


def compile_native(pattern: str, options: re2.Options) -> _re2.RE2:
    """The binding's compiled pattern; check ``.ok()`` and ``.error()`` (bytes) before use."""
    return _re2.RE2(pattern.encode("utf-8", "surrogatepass"), options)


def group_names(compiled: _re2.RE2) -> dict[str, int]:
    """Named groups of a compiled pattern: name -> group index."""
    return {name.decode("utf-8"): index for name, index in compiled.NamedCapturingGroups()}


check_binding()
