"""What the tailer hands to its consumer: files and chunks of their lines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from logagent.acks import AckGroup


class TailedFile:
    """One file being tailed, as long as it stays the same file (identity).

    ``id`` is unique within the process; a new file that reuses a path or an
    inode gets a new ``TailedFile`` (key parser state by the object or ``id``).
    ``identity`` is ``"<st_dev>:<st_ino>"``. ``path`` follows a rename; the pod
    fields come from the path where the file was found (None when the
    directory names do not follow the kubelet layout). ``state`` is private to
    the tailer.
    """

    __slots__ = ("id", "path", "pod_dir", "namespace", "pod_name", "pod_uid", "container", "identity", "state")

    def __init__(
        self,
        id: int,
        path: str,
        pod_dir: str | None,
        namespace: str | None,
        pod_name: str | None,
        pod_uid: str | None,
        container: str | None,
        identity: str,
        state: Any = None,
    ) -> None:
        self.id = id
        self.path = path
        self.pod_dir = pod_dir
        self.namespace = namespace
        self.pod_name = pod_name
        self.pod_uid = pod_uid
        self.container = container
        self.identity = identity
        self.state = state

    def __repr__(self) -> str:
        return f"TailedFile(id={self.id}, path={self.path!r}, identity={self.identity})"


class Chunk:
    """Complete lines from one read of one file, acknowledged as a unit.

    ``lines`` hold no "\\n"; ``truncated`` holds the indexes of lines cut at
    ``max_line_bytes`` (None when none were). The consumer owns one reference
    on ``ack`` and releases it when every record made from these lines is
    delivered or dropped on purpose; the file's checkpoint then moves to
    ``end_offset`` once every earlier chunk of the file is done too.
    ``nbytes`` is the number of file bytes the chunk accounts for. The tailer
    may hand the lines over as one ``block`` (see there); ``count`` is the
    number of lines either way.

    ``eof`` is True on the last chunk of a file: nothing more will come for
    this ``TailedFile`` (it was deleted or rotated away and drained, or a
    ``once`` run ended), so the consumer can flush partial-line state. Its
    ``lines`` are usually empty; for a file that is gone it may hold the final
    bytes that never got their newline.
    """

    __slots__ = ("file", "_lines", "block", "truncated", "ack", "nbytes", "end_offset", "eof")

    def __init__(
        self,
        file: TailedFile,
        lines: list[bytes] | None,
        truncated: frozenset[int] | None,
        ack: AckGroup,
        nbytes: int,
        end_offset: int,
        eof: bool = False,
        block: bytes | None = None,
    ) -> None:
        self.file = file
        self._lines = lines
        #: the same lines as one buffer, joined by "\n" (no final newline), when
        #: the tailer read them so (never with truncated lines); ``lines`` is
        #: then split from it on first use
        self.block = block
        self.truncated = truncated
        self.ack = ack
        self.nbytes = nbytes
        self.end_offset = end_offset
        self.eof = eof

    @property
    def count(self) -> int:
        """``len(lines)``, without splitting a block."""
        if self._lines is not None:
            return len(self._lines)
        return self.block.count(b"\n") + 1 if self.block is not None else 0

    @property
    def lines(self) -> list[bytes]:
        if self._lines is None:
            self._lines = self.block.split(b"\n") if self.block is not None else []
        return self._lines

    def __repr__(self) -> str:
        return (f"Chunk(file={self.file.id}, lines={self.count}, end_offset={self.end_offset}, "
                f"eof={self.eof})")
