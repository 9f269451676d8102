"""The checkpoint files on disk: their format, atomic writes, and reading them back.

A document is ``{"version": 1, "generation": n, "sources": {source_id:
{identity: Checkpoint}}}``. Writes go to a temp file in the same directory
that is renamed over the target (optionally with fsync of the file and the
directory), so a reader never sees half a document. A document that cannot
be decoded is moved aside as ``<name>.<UTC time>.corrupt`` and logged.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Annotated

import msgspec
import structlog

from logagent.file_modes import open_private, private_directory

log = structlog.get_logger(__name__)

FORMAT_VERSION = 1

NonNegative = Annotated[int, msgspec.Meta(ge=0)]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
#: the temp names of checkpoints.json and checkpoints.synced.json
_TEMP_PREFIX = ".checkpoints."


class Checkpoint(msgspec.Struct, frozen=True):
    """Where to resume one file: ``offset`` is a line boundary (or, with
    ``skip``, a point inside a line that was already emitted truncated)."""

    offset: NonNegative
    fp: str
    fp_len: NonNegative
    skip: bool = False
    path: str = ""


class Document(msgspec.Struct):
    version: int = FORMAT_VERSION
    #: grows with every write of a process and across restarts: the newer of two files wins
    generation: NonNegative = 0
    sources: dict[str, dict[str, Checkpoint]] = {}


encode_document = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder(Document).decode


def read_document(path: Path) -> Document | None:
    """The document in ``path``; None when there is none or it is unreadable
    (logged, and a corrupt one is moved aside)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.error("cannot read checkpoint file; ignoring it", path=str(path), error=str(exc))
        return None
    try:
        document = _decode(raw)
        if document.version != FORMAT_VERSION:
            raise ValueError(f"unknown format version {document.version}")
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        aside = path.with_name(f"{path.name}.{stamp}.corrupt")
        try:
            os.replace(path, aside)
            moved_to = str(aside)
        except OSError as move_error:
            moved_to = f"(not moved: {move_error})"
        log.error("checkpoint file is corrupt; moved aside, files without a valid checkpoint "
                  "are read as new ones (read_from)", path=str(path), moved_to=moved_to, error=str(exc))
        return None
    return document


def write_atomically(path: Path, payload: bytes, *, sync: bool) -> None:
    """Temp file + rename (raises OSError); ``sync``: fsync the file and its directory."""
    directory = path.parent
    tmp = directory / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        try:
            fd = open_private(tmp, _CREATE)
        except FileNotFoundError:  # data_dir not there (yet, or any more)
            private_directory(directory)
            fd = open_private(tmp, _CREATE)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view):]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync:
        dir_fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def remove_temp_files(directory: Path) -> None:
    """Temp files left by a process killed in the middle of a write."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if entry.name.startswith(_TEMP_PREFIX) and entry.name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
