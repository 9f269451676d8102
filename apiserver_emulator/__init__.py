"""A Kubernetes apiserver emulator for core/v1 pods, namespaces and nodes (see README.md)."""

from .objects import make_namespace, make_node, make_pod, stable_uid
from .server import ApiServerEmulator
from .settings import Settings

__all__ = ["ApiServerEmulator", "Settings", "make_namespace", "make_node", "make_pod", "stable_uid"]
