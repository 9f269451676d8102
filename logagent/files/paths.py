"""What a kubelet log path tells us, and the include/exclude glob filter."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import NamedTuple


class PodPath(NamedTuple):
    """Fields parsed from ``<log_dir>/<ns>_<pod>_<uid>/<container>/<n>.log``."""

    pod_dir: str | None
    namespace: str | None
    pod_name: str | None
    pod_uid: str | None
    container: str | None


def parse_pod_path(log_dir: str, path: str) -> PodPath:
    """Parse a file path under ``log_dir``; parts that do not fit are None."""
    rel = os.path.relpath(path, log_dir)
    parts = rel.split(os.sep)
    if len(parts) != 3 or parts[0] in ("..", "."):
        return PodPath(None, None, None, None, None)
    pod_dir, container = parts[0], parts[1]
    # namespace and pod names are DNS names and cannot contain "_"
    fields = pod_dir.split("_")
    if len(fields) == 3 and all(fields):
        return PodPath(pod_dir, fields[0], fields[1], fields[2], container)
    return PodPath(pod_dir, None, None, None, container)


def glob_to_regex(pattern: str) -> str:
    """Translate a glob (``**`` crosses "/", ``*`` and ``?`` do not, ``[...]``) to a regex."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                i += 2
                if i < n and pattern[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")  # zero or more directories
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) or pattern.startswith("[^", i) else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:].replace("\\", "\\\\")
                else:
                    body = body.replace("\\", "\\\\")
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class PathFilter:
    """Include/exclude globs, matched against the relative and the absolute path."""

    def __init__(self, log_dir: str, include: Iterable[str], exclude: Iterable[str]) -> None:
        self.log_dir = os.path.abspath(log_dir)
        self._include = self._compile(include)
        self._exclude = self._compile(exclude)

    @staticmethod
    def _compile(patterns: Iterable[str]) -> re.Pattern[str] | None:
        parts = [glob_to_regex(p) for p in patterns]
        return re.compile("(?:" + "|".join(parts) + r")\Z", re.DOTALL) if parts else None

    def accepts(self, path: str) -> bool:
        rel = os.path.relpath(path, self.log_dir)
        candidates = (rel, path)
        if self._include is None or not any(self._include.match(c) for c in candidates):
            return False
        return not (self._exclude is not None and any(self._exclude.match(c) for c in candidates))
