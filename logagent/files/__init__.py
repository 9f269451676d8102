"""The file side of the kubernetes_logs source: discovery, tailing, rotation, checkpoints.

Knows nothing of Kubernetes APIs; pod fields come from the kubelet path layout
``<log_dir>/<namespace>_<pod>_<uid>/<container>/<n>.log`` (other directory
names are still read, with None fields).

Usage::

    store = CheckpointStore(data_dir)              # one per process, shared by sources
    tailer = FileTailer(TailerConfig(log_dir=...), store, source_id="k8s")
    await tailer.run(emit)                         # emit(chunk) is awaited per chunk
    ...
    tailer.stop(); <drain sinks>; store.flush()

Guarantees: a file's checkpoint only moves past a chunk once that chunk and
every earlier chunk of the file were acknowledged (``chunk.ack.release()``),
so after a crash only unacknowledged chunks (plus at most
``checkpoint_flush_secs`` of acknowledged ones) are read again. Memory is
bounded by ``max_unacked_bytes`` + ``max_read_bytes`` + one partial line
(``max_line_bytes``) per open file.

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
