"""Configuration of the Kubernetes metadata side (the ``kubernetes`` config section)."""

from __future__ import annotations

from typing import Literal

import msgspec

#: how namespace labels are obtained (see README, "Namespace fields at scale")
NamespaceMetadataMode = Literal["watch", "lookup", "auto"]


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
    #: namespace labels (only fetched if some source has insert_namespace_fields):
    #: ``watch`` lists and watches every namespace of the cluster; ``lookup`` GETs
    #: only the namespaces of this node's pods and refreshes them on a TTL;
    #: ``auto`` counts the cluster's namespaces once and picks ``watch`` up to
    #: ``namespace_watch_max``, else ``lookup``
    namespace_metadata: NamespaceMetadataMode = "auto"
    #: ``auto``: the most namespaces for which the whole set is watched
    namespace_watch_max: int = 5_000
    #: ``lookup``: a namespace in use is fetched again after about this long
    #: (each refresh is jittered down by up to 20 %, so nodes spread out)
    namespace_lookup_ttl_secs: float = 300.0
    #: ``lookup``: the most namespace GETs in flight at once
    namespace_lookup_concurrency: int = 4
    #: ``lookup``: the most namespace GETs per second (a token bucket of this
    #: size, so a start with many namespaces may burst up to it)
    namespace_lookup_rate: float = 20.0
    #: ``lookup``: how long a new pod's first lines wait for its namespace's
    #: first lookup before they are sent without namespace labels
    namespace_lookup_wait_secs: float = 2.0

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
        for name in ("namespace_lookup_ttl_secs", "namespace_lookup_rate"):
            if getattr(self, name) <= 0:
                raise ValueError(f"`{name}` must be > 0")
        for name in ("namespace_lookup_concurrency", "namespace_watch_max"):
            if getattr(self, name) < 1:
                raise ValueError(f"`{name}` must be >= 1")
        if self.namespace_lookup_wait_secs < 0:
            raise ValueError("`namespace_lookup_wait_secs` must be >= 0")
        if self.request_timeout_secs <= 0:
            raise ValueError("`request_timeout_secs` must be > 0")
