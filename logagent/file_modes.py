"""Files that hold records: 0600 in 0700 directories, whatever the umask.

Every file the agent writes under ``data_dir`` holds record content or says
what the node's containers wrote (dead-letter files hold whole records,
checkpoints name every log file, the tap socket streams records), so they are
made with explicit modes and the modes are set again after creating, since
the umask only ever removes bits (a restrictive umask would otherwise leave a
file the agent cannot write). A directory the agent finds wider than 0700 is
narrowed when it owns it, with a warning; one it does not own, or a shared
sticky directory such as ``/tmp``, is left alone with a warning (``data_dir``
should be the agent's own directory).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

#: mode of a file holding records
FILE_MODE = 0o600
#: mode of a directory holding such files
DIR_MODE = 0o700

_OPEN_FLAGS = os.O_CLOEXEC | os.O_NOFOLLOW


def private_directory(path: str | os.PathLike[str]) -> Path:
    """Make ``path`` (and missing parents) a 0700 directory; narrow it if it exists wider (raises OSError)."""
    directory = Path(path)
    missing = []
    probe = directory
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for created in reversed(missing):
        try:
            created.mkdir(DIR_MODE)
        except FileExistsError:
            pass
        else:
            os.chmod(created, DIR_MODE)  # the umask may have taken bits away
    narrow_directory(directory)
    return directory


def narrow_directory(directory: Path) -> None:
    """Set an existing directory to 0700 when it is ours and wider; warn when it cannot be."""
    st = os.stat(directory)
    mode = stat.S_IMODE(st.st_mode)
    if mode == DIR_MODE:
        return
    if st.st_uid != os.geteuid() or mode & stat.S_ISVTX:
        if mode & 0o077:
            log.warning("directory holding records is readable by others and not the agent's own; left as is",
                        path=str(directory), mode=oct(mode))
        return
    os.chmod(directory, DIR_MODE)
    if mode & 0o077:
        log.warning("directory holding records was readable by others; set to 0700", path=str(directory),
                    was=oct(mode))


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """``os.open`` with ``O_CREAT``: a file made 0600, or an existing one narrowed to 0600."""
    fd = os.open(path, flags | os.O_CREAT | _OPEN_FLAGS, FILE_MODE)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
            os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd
