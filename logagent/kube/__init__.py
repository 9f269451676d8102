"""Kubernetes metadata: compact frozen objects decoded from raw API bytes, kept in
stores filled by one watcher per kind per process (see ARCHITECTURE.md).

- :mod:`.model` the frozen PodMeta / NamespaceMeta / NodeMeta
- :mod:`.decode` bytes -> model (objects, list pages, watch events, snapshots)
- :mod:`.store` read handles plus the reflector's writer side
- :mod:`.snapshot` the offline hub; :mod:`.hub` the live one
- :mod:`.interface` the hub contract sources rely on
"""
