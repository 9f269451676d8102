"""google-re2's private binding is used in one module only, against a pinned release."""

import importlib.metadata
import pathlib
import random

from logagent.user_regex import re2_binding

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_installed_release_is_the_pinned_one():
    installed = importlib.metadata.version("google-re2")
    assert installed == re2_binding.PINNED_VERSION, (
        f"google-re2 {installed} is installed, re2_binding.py is written for {re2_binding.PINNED_VERSION}: "
        "check the binding's API and update PINNED_VERSION and pyproject.toml together"
    )
    assert f'"google-re2=={re2_binding.PINNED_VERSION}"' in (ROOT / "pyproject.toml").read_text()


def test_binding_has_what_is_used():
    re2_binding.check_binding()
    options = re2_binding.Options()
    options.log_errors = False
    compiled = re2_binding.compile_native("(?P<a>x)(y)?", options)
    assert compiled.ok() and compiled.NumberOfCapturingGroups() == 2
    assert re2_binding.group_names(compiled) == {"a": 1}
    data = b"zzx"
    assert compiled.Match(re2_binding.UNANCHORED, data, 0, len(data)) == [(2, 3), (2, 3), (-1, -1)]


def test_no_other_module_imports_the_binding():
    users = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "logagent").rglob("*.py")
        if "_re2" in path.read_text() and path.name != "re2_binding.py"
    ]
    assert users == []


def test_a_literal_set_lists_every_literal_found_overlapping_or_not() -> None:
    present = re2_binding.literal_set(["Error", "Error (", "RuntimeError", "a.b", "日本"])
    assert sorted(present("java.lang.RuntimeError (x)".encode())) == [0, 1, 2]
    assert present(b"axb") == [] and present(b"a.b") == [3]  # literally, not as a pattern
    assert present("日本語".encode()) == [4]
    assert present(b"") == []


def test_a_literal_set_agrees_with_substring_search_on_texts_made_of_its_literals_pieces() -> None:
    # texts dense in literals and their prefixes make many automaton states: the set must not give up
    literals = ["Exception", "Exception (", "Error", "Error]: ", "Traceback (most recent call last):", ".js", "):",
                "panic: ", "PHP Fatal error:  ", "SIG", ":in `", '", line ']
    present = re2_binding.literal_set(literals)
    pieces = literals + [literal[:cut] for literal in literals for cut in range(1, len(literal))] + list(" x\n:(")
    chooser = random.Random(23)
    for size in (1, 10, 100, 1000, 10000) * 8:
        text = "".join(chooser.choice(pieces) for _ in range(size))
        assert sorted(present(text.encode())) == [i for i, literal in enumerate(literals) if literal in text]
