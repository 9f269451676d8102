"""The file side of the kubernetes_logs source: discovery, tailing, rotation, checkpoints.

Knows nothing of Kubernetes APIs; pod fields come from the kubelet path layout
``<log_dir>/<namespace>_<pod>_<uid>/<container>/<n>.log``.
"""

from logagent.files.checkpoints import Checkpoint, CheckpointStore
from logagent.files.config import TailerConfig
from logagent.files.model import Chunk, TailedFile
from logagent.files.tailer import FileTailer

__all__ = ["Checkpoint", "CheckpointStore", "Chunk", "FileTailer", "TailedFile", "TailerConfig"]
