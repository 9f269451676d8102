"""Configuration of the Kubernetes metadata side (the ``kubernetes`` config section)."""

from __future__ import annotations

import msgspec


class KubernetesConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    #: the node whose pods are watched; usually from the downward API
    #: (``${NODE_NAME}``). None means every pod (only sensible with a snapshot).
    node_name: str | None = None
    #: kubeconfig path; else in-cluster when KUBERNETES_SERVICE_HOST is set,
    #: else $KUBECONFIG, else ~/.kube/config
    kubeconfig: str | None = None
    #: read metadata once from a ``kubectl get pods,namespaces,nodes -A -o json``
    #: file instead of talking to an apiserver
    snapshot: str | None = None
    #: how long a deleted pod's metadata is still used for late lines
    delay_deletion_ms: int = 60_000
    #: a random delay up to this before the first request, so that a DaemonSet
    #: rollout does not hit the apiserver as one spike
    initial_delay_ms: int = 1_000
    #: each watch request asks the server to end it after a random time in this range
    watch_timeout_min_secs: int = 240
    watch_timeout_max_secs: int = 480
    #: exponential backoff with full jitter between failed requests
    backoff_initial_ms: int = 500
    backoff_max_ms: int = 30_000
    #: a watch that ran this long without an error resets the backoff
    backoff_reset_secs: float = 60.0
    #: initial state by a streaming watch-list (sendInitialEvents) where the
    #: server accepts it, else by a paged list from the watch cache
    use_watch_list: bool = True
    #: items per list page
    list_page_size: int = 500
    #: timeout for connecting and for non-watch requests
    request_timeout_secs: float = 30.0
    #: files are read only once the metadata stores have their initial state,
    #: so first lines are enriched; if the API stays unreachable this long,
    #: reading starts anyway with the metadata paths carry
    sync_timeout_secs: float = 60.0

    def __post_init__(self) -> None:
        for name in (
            "delay_deletion_ms",
            "initial_delay_ms",
            "backoff_initial_ms",
            "backoff_max_ms",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"`{name}` must be >= 0")
        if self.watch_timeout_min_secs < 1:
            raise ValueError("`watch_timeout_min_secs` must be >= 1")
        if self.watch_timeout_max_secs < self.watch_timeout_min_secs:
            raise ValueError("`watch_timeout_max_secs` must be >= `watch_timeout_min_secs`")
        if self.backoff_max_ms < self.backoff_initial_ms:
            raise ValueError("`backoff_max_ms` must be >= `backoff_initial_ms`")
        if self.list_page_size < 1:
            raise ValueError("`list_page_size` must be >= 1")
        if self.request_timeout_secs <= 0:
            raise ValueError("`request_timeout_secs` must be > 0")
