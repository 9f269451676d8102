"""Give back the memory start-up used and no longer needs, once the agent is running.

Start-up makes a lot of short-lived objects (module code, the config's YAML,
the pods' watch-list decoded, regexes compiled and dropped). Python frees
them, but the C allocator keeps the freed pages in its arenas: in an idle
agent that is a few MB of resident memory that nothing will use again.
After the first metadata sync, :func:`release_startup_memory` collects
garbage and asks glibc to return free pages (``malloc_trim``). Without glibc
(musl) the trim is skipped. (No ``gc.freeze``: a component a reload removes
must still be collectable, and frozen objects never are.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc


def _malloc_trim() -> bool:
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True


def release_startup_memory() -> bool:
    """Collect and trim; whether the allocator was asked to return pages."""
    gc.collect()
    return _malloc_trim()
