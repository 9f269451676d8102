"""File identity: (st_dev, st_ino) guarded by a fingerprint of the leading bytes.

An inode number is reused once a file is deleted and closed, so a checkpoint
keyed by it alone could make a new file resume at an old file's offset. The
fingerprint hashes the first ``min(size, fingerprint_bytes)`` bytes and
remembers how many bytes it covers; a file matches a stored fingerprint when
its own first ``fp_len`` bytes hash the same. While a file is shorter than
``fingerprint_bytes`` the fingerprint grows with it.
"""

from __future__ import annotations

import hashlib
import os


def identity_key(dev: int, ino: int) -> str:
    return f"{dev}:{ino}"


def fingerprint(fd: int, length: int) -> str:
    """Hash of the first ``length`` bytes of the open file (fewer if it is shorter)."""
    data = os.pread(fd, length, 0) if length > 0 else b""
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def fingerprint_matches(fd: int, fp_len: int, fp: str) -> bool:
    if fp_len == 0:
        return True
    data = os.pread(fd, fp_len, 0)
    return len(data) == fp_len and hashlib.blake2b(data, digest_size=8).hexdigest() == fp
