"""Vector's label expansion: a label key ending in ``*`` takes every key of an object field.

``"pod_labels_*": "{{ kubernetes.pod_labels }}"`` gives one label per pod label
(``pod_labels_app="web"`` ...); ``"*": "{{ labels }}"`` uses the keys as they
are. Vector's documentation quotes such keys (``'"pod_labels_*"'``); the quotes
are dropped. A key that Loki would refuse as a label name has its other
characters replaced by ``_`` (``app.kubernetes.io/name`` ->
``app_kubernetes_io_name``); values that are not scalars are left out.
"""

from __future__ import annotations

import re

from logagent.event import LogEvent
from logagent.sinks.templates import Template, lookup, scalar_text

_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def label_key(name: str) -> str:
    """The label key without Vector's quotes."""
    return name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name


def is_expansion(name: str) -> bool:
    return label_key(name).endswith("*")


def check_expansion(name: str, template: Template) -> None:
    """``ValueError("labels.<name>: ...")`` unless the prefix can start a label name and the value is one field."""
    prefix = label_key(name)[:-1]
    if prefix and not _LABEL_NAME.fullmatch(prefix):
        raise ValueError(f"labels.{name}: the prefix {prefix!r} cannot start a Loki label name")
    text = template.text.strip()
    if len(template.paths) != 1 or text.count("{{") != 1 or not (text.startswith("{{") and text.endswith("}}")):
        raise ValueError(f"labels.{name}: a key ending in * takes one object field, e.g. '{{{{ kubernetes.pod_labels }}}}'")


def expand(name: str, template: Template, event: LogEvent) -> list[tuple[str, str]]:
    """The labels an expansion gives for one record (none when the field is not an object)."""
    value = lookup(event, template.paths[0])
    if not isinstance(value, dict):
        return []
    prefix = label_key(name)[:-1]
    labels = []
    for key, item in value.items():
        text = scalar_text(item)
        if text:
            label = prefix + _UNSAFE.sub("_", str(key))
            labels.append((label if _LABEL_NAME.fullmatch(label) else "_" + label, text))
    return labels
