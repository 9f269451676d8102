"""The ``remap`` transform's config (light: validating compiles the program, runs nothing)."""

from __future__ import annotations

from pathlib import Path

import msgspec

#: the output dropped records go to with ``reroute_dropped: true``: ``<id>.dropped``
DROPPED = "dropped"


class RemapConfig(msgspec.Struct, tag="remap", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    inputs: list[str]
    source: str | None = None
    file: str | None = None
    drop_on_error: bool = False
    drop_on_abort: bool = True
    reroute_dropped: bool = False
    #: Vector's VRL module files: not supported (refused, never ignored)
    files: list[str] | None = None
    #: Vector: how metric tags are exposed; logs only here, so it changes nothing and any of Vector's values loads
    metric_tag_values: str = "single"
    #: Vector's default time zone for timestamp functions; only UTC is supported
    timezone: str | None = None

    def program_text(self) -> str:
        if self.source is not None:
            return self.source
        assert self.file is not None
        return Path(self.file).read_text(encoding="utf-8")

    def validate(self) -> None:
        from logagent.vrl.diagnostic import VrlError  # noqa: PLC0415  (keeps loading a config light)
        from logagent.vrl.program import compile_program  # noqa: PLC0415

        if (self.source is None) == (self.file is None):
            raise ValueError("source: exactly one of source and file must be set")
        if self.files:
            raise ValueError("files: VRL module files are not supported; put the program in source or file")
        if self.metric_tag_values not in ("single", "full"):
            raise ValueError(f'metric_tag_values: expected "single" or "full", got "{self.metric_tag_values}"')
        if self.timezone not in (None, "UTC", "utc", "Etc/UTC"):
            raise ValueError(f'timezone: only UTC is supported, got "{self.timezone}"')
        key = "source" if self.source is not None else "file"
        try:
            text = self.program_text()
        except OSError as exc:
            raise ValueError(f"file: cannot read {self.file}: {exc.strerror}") from None
        try:
            compile_program(text)
        except VrlError as exc:
            raise ValueError(f"{key}: {exc}") from None
