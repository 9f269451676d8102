"""Behaviour switches of the emulator (all changeable while it runs)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

WATCH_LIST_MODES = ("enabled", "forbidden", "ignored")


@dataclass
class Settings:
    token: str = "emulator-token"
    # Seconds between BOOKMARK events on watches that allowed them (real servers: ~1 min).
    bookmark_interval: float = 60.0
    # enabled: streaming watch-list works (WatchList on, 1.32+ default).
    # forbidden: 422 Invalid "sendInitialEvents is forbidden ..." (WatchList gate off, 1.27-1.31).
    # ignored: the parameters are ignored like a pre-1.27 server (plain watch, no end bookmark).
    watch_list: str = "enabled"
    # Answer a watch from a compacted RV with HTTP 410 instead of 200 + ERROR event.
    watch_expired_as_http_410: bool = False
    # RV=0 lists come from the watch cache, which (like real servers before the
    # snapshot-able cache) ignores `limit` and returns everything in one page.
    rv0_honours_limit: bool = False

    def update(self, changes: dict[str, Any]) -> None:
        known = {f.name for f in fields(self)}
        for key, value in changes.items():
            if key not in known:
                raise ValueError(f"unknown setting {key!r}; known: {sorted(known)}")
            if key == "watch_list" and value not in WATCH_LIST_MODES:
                raise ValueError(f"watch_list must be one of {WATCH_LIST_MODES}, got {value!r}")
            setattr(self, key, value)
