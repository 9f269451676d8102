"""The one way to compile a regex from a config: Rust's ``regex`` syntax (VRL's) on Google's RE2.

``compile_regex(pattern) -> Pattern`` (``rust_syntax``), used by VRL's regex
values (``vrl/stdlib/regex.py``) and multiline's ``start_pattern`` /
``condition_pattern``; ``re2_binding`` is the one module that touches
google-re2's private binding, loaded with the first pattern compiled.
"""

from .rust_syntax import Pattern, RegexError, compile_regex, compile_rust_pattern, required_literal

__all__ = ["Pattern", "RegexError", "compile_regex", "compile_rust_pattern", "required_literal"]
