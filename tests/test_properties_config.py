"""Properties of the public config contract (``load_config``, ``interpolate``) and of ``compile_condition``.

A config either loads or fails with a ``ConfigError`` that names where
(a dotted key path, or a line for YAML and variables); nothing else escapes.
``${VAR}`` interpolation replaces exactly what it names. A condition either
compiles or raises ``VrlError``; a compiled one never raises on
any record.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from logagent.vrl.condition import VrlError, compile_condition
from logagent.config import ConfigError, interpolate, load_config
from logagent.event import FileContext, LogEvent

BASE: dict[str, Any] = {
    "data_dir": "/tmp/logagent-properties",
    "api": {"enabled": False},
    "kubernetes": {"node_name": "n", "snapshot": "/tmp/snapshot.json"},
    "sources": {"pods": {"type": "kubernetes_logs", "log_dir": "/var/log/pods", "max_line_bytes": 32768}},
    "transforms": {"keep": {"type": "filter", "inputs": ["pods"], "condition": '.stream == "stdout"'}},
    "sinks": {"out": {"type": "console", "inputs": ["keep"], "encoding": "json"},
              "ship": {"type": "http", "inputs": ["pods"], "uri": "http://127.0.0.1:9/x", "compression": "gzip"}},
}

json_value = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.text(max_size=12) | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def key_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    paths = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, child in value.items():
            paths += key_paths(child, prefix + (key,))
    return paths


ALL_PATHS = key_paths(BASE)


def write(tmp_path: Path, raw: Any) -> Path:
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_the_base_config_loads(tmp_path: Path) -> None:
    load_config(write(tmp_path, BASE), {})


@given(st.sampled_from(ALL_PATHS), json_value, st.booleans())
@example(("data_dir",), {"$0": None}, False)  # found by the long profile: a reference as a key
def test_a_changed_key_loads_or_fails_naming_its_path(tmp_path_factory, path: tuple, value: Any, add: bool) -> None:  # type: ignore[no-untyped-def]
    raw = copy.deepcopy(BASE)
    target = raw
    for key in path[:-1]:
        target = target[key]
    name = path[-1] + "_extra" if add else path[-1]
    target[name] = value
    config = write(tmp_path_factory.mktemp("c"), raw)
    try:
        load_config(config, {})
    except ConfigError as error:
        if "environment variable" in str(error):
            # a text like "$A" is a reference: interpolation runs on the file's text before it is
            # parsed (as Vector's), so the error names the variable and its line, not a key path
            # (prefixed with the file, as every error of a file is)
            assert "$" in yaml.safe_dump(value) and re.match(r"\S+: line \d+: ", str(error)), (path, str(error))
            return
        # the error names the section and the component (or top-level key) it is about
        named = ".".join(str(p) for p in path[:2]) if len(path) > 1 else name
        if len(path) == 1 and add:
            named = name
        assert named.split(".")[0] in str(error), (path, name, str(error))


@given(st.text(max_size=200))
def test_any_text_loads_or_fails_with_a_config_error(tmp_path_factory, text: str) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path_factory.mktemp("t") / "agent.yaml"
    config.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_config(config, {})
    except ConfigError:
        pass


names = st.from_regex(r"[A-Z_][A-Z0-9_]{0,8}", fullmatch=True)
plain = st.text(st.characters(blacklist_characters="$", blacklist_categories=("Cs",)), max_size=20)
#: a variable's value: as Vector, a value with a line break is refused (it could change the file's structure)
value_text = st.text(st.characters(blacklist_characters="$\n\r", blacklist_categories=("Cs",)), max_size=20)


@given(st.lists(st.tuples(plain, names, value_text), max_size=5), plain)
def test_interpolation_replaces_exactly_the_named_variables(parts: list[tuple[str, str, str]], tail: str) -> None:
    env = {name: value for _, name, value in parts}
    text = "".join(f"{before}${{{name}}}" for before, name, _ in parts) + tail
    assert interpolate(text, env) == "".join(before + env[name] for before, name, _ in parts) + tail
    assert interpolate(text.replace("${", "$${"), env) == text.replace("${", "${")  # $$ is a literal $


@given(st.lists(st.tuples(plain, names), min_size=1, max_size=4), plain)
def test_unset_variables_fail_naming_them_and_defaults_apply(parts: list[tuple[str, str]], default: str) -> None:
    text = "".join(f"{before}${{{name}}}" for before, name in parts)
    try:
        interpolate(text, {})
    except ConfigError as error:
        assert all(name in str(error) for _, name in parts)
    else:
        raise AssertionError("unset variables were accepted")
    with_default = "".join(f"{before}${{{name}:-{default}}}" for before, name in parts)
    if "}" not in default:
        assert interpolate(with_default, {}) == "".join(before + default for before, _ in parts)


@given(st.text(max_size=300))
def test_interpolate_raises_nothing_but_config_errors(text: str) -> None:
    try:
        interpolate(text, {"A": "1", "B_2": ""})
    except ConfigError:
        pass


# ------------------------------------------------------------- conditions

TOKENS = [
    ".message", ".stream", ".timestamp", ".kubernetes.pod_labels.app", ".kubernetes.pod_labels", ".a[0]",
    ".\"odd key\"", "==", "!=", "<", ">=", "&&", "||", "!", "(", ")", "[", "]", "{", "}", ",", ":", "?", "??",
    '"stdout"', '"x\\n"', "'raw'", "r'^a+'", "r'(a|'", "1", "-2.5", "1e308", "null", "true", "false",
    "match(", "contains(", "starts_with(", "ends_with(", "exists(", "includes(", "length(", "upcase(",
    "downcase(", "to_string(", "to_int(", "is_string(", "is_null(", "parse_json(", "case_sensitive:",
    "+", "-", "*", "/", "%", " ", "\n", "#c\n", "=", "|", "@", "$", "\\",
]
condition_text = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=14).map("".join),
    st.lists(st.sampled_from(TOKENS), max_size=14).map(" ".join),
    st.text(max_size=40),
)
field_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["app", "a", "0", "x"]), inner, max_size=3),
    max_leaves=5,
)
records = st.builds(
    lambda message, stream, fields: LogEvent(message, stream, "2026-12-02T10:00:00Z", FileContext(fields)),
    st.one_of(st.none(), st.text(max_size=20)),
    st.sampled_from(["stdout", "stderr", None]),
    st.dictionaries(st.sampled_from(["kubernetes", "a", "file", "odd key"]), field_value, max_size=3),
)


@given(condition_text, st.lists(records, max_size=4))
def test_conditions_compile_or_fail_with_a_syntax_error_and_never_raise_on_records(text: str, events: list) -> None:  # type: ignore[type-arg]
    try:
        condition = compile_condition(text)
    except VrlError:
        return
    for event in events:
        assert condition(event) in (True, False)
