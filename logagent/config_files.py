"""Config files as Vector reads them: YAML, TOML or JSON by extension, several merged.

Each file is interpolated (``${VAR}``, the same in every format, before it is
parsed, as Vector does) and parsed into a mapping; then the files are merged
as Vector merges them: components from every file (an id defined in two files
is an error naming both), top-level settings given in several files must not
disagree. ``--config-dir DIR`` reads DIR's files of the three formats, in name
order, and DIR's ``sources/``, ``transforms/`` and ``sinks/`` subdirectories,
where each file is one component named by the file's stem.
"""

from __future__ import annotations

import glob
import json
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from logagent.config_errors import ConfigError, raise_all, show

#: extension -> format, as Vector's ``Format::from_path``; any other extension is read as YAML
FORMATS = {".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json"}
COMPONENT_SECTIONS = ("sources", "transforms", "sinks")
#: where a merged config's keys came from: "sources.x" or a top-level key -> file
Origins = dict[str, str]


def format_of(path: str | os.PathLike[str]) -> str:
    return FORMATS.get(Path(path).suffix.lower(), "yaml")


# ---------------------------------------------------------------- interpolation

_VAR = re.compile(r"\$(?:\$|\{([A-Za-z0-9_.]+)(?:(:?[-?])([^}]*))?\}|([A-Za-z0-9_.]+))")


def interpolate(text: str, env: Mapping[str, str]) -> str:
    """Vector's interpolation: ``${VAR}``, ``$VAR``, ``${VAR:-default}``, ``${VAR-default}``,
    ``${VAR:?error}``, ``${VAR?error}``; ``$$`` is a literal ``$``.

    An unset variable without a default is an error naming it (and its line).
    """
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "$$":
            return "$"
        name = match.group(1) or match.group(4)
        flag, extra = match.group(2) or "", match.group(3) or ""
        value = env.get(name)
        if value is not None and ("\n" in value or "\r" in value):
            missing.append(f"{_line(match)}environment variable {name} contains a newline")
            return ""
        unset = value is None or (value == "" and flag.startswith(":"))
        if not unset:
            return value  # type: ignore[return-value]
        if flag.endswith("-"):
            return extra
        if flag.endswith("?"):
            missing.append(f"{_line(match)}environment variable {name} is required: {extra or 'not set'}")
        else:
            missing.append(f"{_line(match)}environment variable {name} is not set (use ${{{name}:-default}} for a default)")
        return ""

    def _line(match: re.Match[str]) -> str:
        return f"line {text.count(chr(10), 0, match.start()) + 1}: "

    result = _VAR.sub(replace, text)
    if missing:
        raise ConfigError("; ".join(missing))
    return result


# ---------------------------------------------------------------- one file


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that rejects a key given twice in one mapping (such as a component id)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                mark = key_node.start_mark
                raise ConfigError(f"line {mark.line + 1}, column {mark.column + 1}: duplicate key {key!r}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _UniqueKeyLoader.construct_mapping)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ConfigError(f"duplicate key {key!r}")
        result[key] = value
    return result


def parse_text(text: str, fmt: str, env: Mapping[str, str]) -> dict[str, Any]:
    """Interpolate and parse one file's text; the top level must be a mapping."""
    text = interpolate(text, env)
    if fmt == "toml":
        try:
            raw: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"invalid TOML: {exc}") from None
    elif fmt == "json":
        try:
            raw = json.loads(text, object_pairs_hook=_unique_pairs) if text.strip() else None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    else:
        try:
            raw = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
            problem = getattr(exc, "problem", None) or str(exc)
            raise ConfigError(f"invalid YAML: {where}{problem}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"expected a mapping at the top level, got {show(raw)}")
    return raw


def read_bytes(path: Path) -> bytes:
    return path.read_bytes()


def read_file(path: str | os.PathLike[str], env: Mapping[str, str], read: Callable[[Path], bytes] = read_bytes) -> dict[str, Any]:
    """One file, its errors prefixed with its name."""
    try:
        text = read(Path(path)).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config file: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return parse_text(text, format_of(path), env)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


# ---------------------------------------------------------------- several files


def config_files(paths: Sequence[str | os.PathLike[str]], dirs: Sequence[str | os.PathLike[str]] = ()) -> list[tuple[Path, str | None]]:
    """Every file to read, with the component section it holds one component of (None: a whole config).

    A path with glob characters (``/etc/vector/*.toml``) stands for the files it matches, in name order, as in Vector.
    """
    files: list[tuple[Path, str | None]] = []
    for path in map(str, paths):
        if glob.has_magic(path):
            matches = sorted(glob.glob(path))
            if not matches:
                raise ConfigError(f"{path}: no config file matches this pattern")
            files.extend((Path(m), None) for m in matches)
        else:
            files.append((Path(path), None))
    for directory in map(Path, dirs):
        files.extend((f, None) for f in _dir_files(directory))
        # Vector also reads enrichment_tables/ and tests/: read too, so that they are refused, not skipped
        for section in (*COMPONENT_SECTIONS, "enrichment_tables", "tests"):
            files.extend((f, section) for f in _dir_files(directory / section))
    return files


def _dir_files(directory: Path) -> list[Path]:
    try:
        entries = sorted(directory.iterdir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"{directory}: cannot read config directory: {exc.strerror or exc}") from None
    return [e for e in entries if e.suffix.lower() in FORMATS and e.is_file() and not e.name.startswith(".")]


def read_configs(
    paths: Sequence[str | os.PathLike[str]],
    dirs: Sequence[str | os.PathLike[str]],
    env: Mapping[str, str],
    read: Callable[[Path], bytes] = read_bytes,
) -> tuple[dict[str, Any], Origins]:
    """Read (with ``read``) and merge every file; raise every error of every file at once."""
    errors: list[ConfigError] = []
    merged: dict[str, Any] = {}
    origins: Origins = {}
    files = config_files(paths, dirs)
    if not files:
        raise ConfigError("no config file given (--config FILE or --config-dir DIR)")
    for path, section in files:
        try:
            data = read_file(path, env, read)
        except ConfigError as exc:
            errors.append(exc)
            continue
        if section is not None:
            data = {section: {path.stem: data}}
        errors.extend(merge_into(merged, origins, data, str(path)))
    raise_all(errors)
    return merged, origins


def merge_into(merged: dict[str, Any], origins: Origins, data: dict[str, Any], origin: str) -> list[ConfigError]:
    """Merge one file's mapping into ``merged``; the conflicts, each naming both files."""
    errors: list[ConfigError] = []
    for key, value in data.items():
        key = str(key)
        if key in COMPONENT_SECTIONS and isinstance(value, dict) and isinstance(merged.get(key, {}), dict):
            section = merged.setdefault(key, {})
            for component_id, body in value.items():
                where = f"{key}.{component_id}"
                if component_id in section:
                    errors.append(ConfigError(f"defined in both {origins[where]} and {origin}", where))
                    continue
                section[component_id] = body
                origins[where] = origin
            continue
        if key not in merged:
            merged[key] = value
            origins[key] = origin
            continue
        conflict = _conflict(merged[key], value, key)
        if conflict is not None:
            errors.append(ConfigError(f"conflicting values in {origins[key]} and {origin}", conflict))
        elif isinstance(value, dict):
            _merge_dicts(merged[key], value)
    return errors


def _conflict(old: Any, new: Any, path: str) -> str | None:
    """The first key path at which two values disagree (mappings merge key by key)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in new:
            if key in old:
                found = _conflict(old[key], new[key], f"{path}.{key}")
                if found is not None:
                    return found
        return None
    return None if old == new else path


def _merge_dicts(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if key in into and isinstance(into[key], dict) and isinstance(value, dict):
            _merge_dicts(into[key], value)
        else:
            into[key] = value
