"""Whether the fields a sink's templates name can exist in the records it gets.

Known fields: the per-line ones (``message``, ``stream``, ``timestamp``,
``truncated``), ``file``, ``source_type`` and where each source puts its
Kubernetes fields (its ``*_annotation_fields``; any key below a labels or
annotations map). A transform that may add fields (any kind other than
``filter`` and ``route``) allows anything under its ``target`` (everything when
it has none, or ``target: .``). Used by the graph checks, so a typo such as
``{{ kubernetes.pod_nmespace }}`` stops the agent before it starts.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from logagent.sinks.templates import FieldPath, parse_field_path

_FIXED: tuple[FieldPath, ...] = (("message",), ("stream",), ("timestamp",), ("truncated",), ("file",), ("source_type",))
#: fields whose value is a map of arbitrary keys
_MAPS = frozenset({"pod_labels", "pod_annotations", "namespace_labels", "node_labels"})
_GROUPS = ("pod_annotation_fields", "namespace_annotation_fields", "node_annotation_fields")


def known_fields(config: Any) -> tuple[set[FieldPath], set[FieldPath]] | None:
    """(exact paths, prefixes with anything below); None when any path may exist."""
    exact: set[FieldPath] = set(_FIXED)
    open_prefixes: set[FieldPath] = set()
    for source in config.sources.values():
        for group_name in _GROUPS:
            group = getattr(source, group_name, None)
            if group is None:
                continue
            for name in group.__struct_fields__:
                text = getattr(group, name)
                if not text:
                    continue
                path = parse_field_path(text)
                (open_prefixes if name in _MAPS else exact).add(path)
    for transform in config.transforms.values():
        if type(transform).__name__ in ("FilterConfig", "RouteConfig"):
            continue
        target = getattr(transform, "target", None)
        if not isinstance(target, str) or target.strip() in ("", "."):
            return None
        open_prefixes.add(parse_field_path(target))
    return exact, open_prefixes


def unknown_template_field(sink: Any, config: Any) -> str | None:
    """``"<key>: <reason>"`` for the first template path no record can have, else None."""
    templates = getattr(sink, "templates", None)
    if templates is None:
        return None
    known = known_fields(config)
    if known is None:
        return None
    exact, open_prefixes = known
    for key, template in templates():
        for path in template.paths:
            if path in exact or any(path[: len(p)] == p for p in open_prefixes):  # a map itself too (loki label expansion)
                continue
            return f"{key}: no source gives a field {'.'.join(path)}{_suggest(path, exact | open_prefixes)}"
    return None


def _suggest(path: FieldPath, known: Iterable[FieldPath]) -> str:
    names = sorted(".".join(p) for p in known)
    close = difflib.get_close_matches(".".join(path), names, n=1)
    return f" (did you mean {close[0]}?)" if close else f"; known fields: {', '.join(names)}"
