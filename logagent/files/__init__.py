"""The file side of the kubernetes_logs source: discovery, tailing, rotation, checkpoints.

Knows nothing of Kubernetes APIs; pod fields come from the kubelet path layout
``<log_dir>/<namespace>_<pod>_<uid>/<container>/<n>.log`` (other directory
names are still read, with None fields).

Usage::

    store = CheckpointStore(data_dir)              # one per process, shared by sources
    tailer = FileTailer(TailerConfig(log_dir=...), store, source_id="k8s")
    await tailer.run(emit)                         # emit(chunk) is awaited per chunk
    ...
    tailer.stop(); <drain sinks>; store.close()    # final fsync'ed write

Guarantees: a file's checkpoint only moves past a chunk once that chunk and
every earlier chunk of the file were acknowledged (``chunk.ack.release()``).
While a tailer runs, the store persists each change within ``HOLD_SECS``
(100 ms), sooner once ``HOLD_BYTES`` (8 KiB) of progress wait, but no closer
than ``WRITE_SPACING_SECS`` to the last write (more when the process is
saturated, as writes are then spaced by three times their duration; atomic
rename, at most one write in flight, newest state wins) and fsyncs a copy
about once a second. After a process crash only unacknowledged chunks and
the acknowledgements held back (at most 100 ms or 8 KiB of them) are read
again; after a machine crash at most a second more. A
corrupt checkpoint file is moved aside (``*.corrupt``) and its files start by
``read_from``; a failing write is retried, counted and logged, never raised.
Memory is bounded by ``max_unacked_bytes`` + ``max_read_bytes`` + one partial
line (``max_line_bytes``) per open file.

Inside: ``tailer.FileTailer`` coordinates ``reader.FileReader`` (one open
file), ``lifecycle.FileTable`` (discovery, rotation, gone files) and
``ledger.AckLedger`` (acknowledgements to checkpoints).

Each file ends with one ``Chunk`` with ``eof=True`` when it is closed because
it was deleted / rotated away and drained, or at the end of a ``once`` run; not
when ``stop()`` is called (the next start resumes from the checkpoint).

Stats on ``FileTailer`` for metrics: ``files_open``, ``files_open_deleted``
(fstat per open file: read it at scrape time), ``lines_truncated``,
``bytes_read``, ``checkpoint_lag_bytes`` (bytes of open files past their
checkpoint), ``unacked_bytes``, ``chunks_emitted``, ``files_opened``,
``files_closed``, ``files_closed_unread`` and ``bytes_unread_on_close``
(``rotate_wait_secs`` expired), ``truncations``, ``backpressure_pauses``.
"""

from logagent.files.checkpoints import Checkpoint, CheckpointStore
from logagent.files.config import TailerConfig
from logagent.files.model import Chunk, TailedFile
from logagent.files.tailer import FileTailer

__all__ = ["Checkpoint", "CheckpointStore", "Chunk", "FileTailer", "TailedFile", "TailerConfig"]
