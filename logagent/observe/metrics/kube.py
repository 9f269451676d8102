"""Metrics of the metadata hub: watches and requests per resource, the stores, the namespace mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from logagent.observe.metrics.reading import AttributeMetric, AttributeReader

#: kinds of objects the metadata hub may watch
RESOURCES = ("pods", "namespaces", "nodes")

KIND_COUNTERS: tuple[AttributeMetric, ...] = (
    ("logagent_kube_relists", "Full relists after the apiserver answered 410 Gone.", "relists"),
    ("logagent_kube_watch_restarts", "Watch streams that ended or broke and were started again.", "watch_restarts"),
    ("logagent_kube_events", "Watch events (added, modified, deleted) applied to the store.", "events"),
    ("logagent_kube_bookmarks", "Watch bookmarks received.", "bookmarks"),
    ("logagent_kube_decode_errors", "Watch lines or list pages that could not be decoded (skipped).", "decode_errors"),
    ("logagent_kube_request_errors", "Failed apiserver requests or broken streams (each followed by a backoff).",
     "request_errors"),
    ("logagent_kube_throttled", "429 Too Many Requests answers from the apiserver.", "throttled"),
)


def kube_families(topology: Any, read: AttributeReader, now: float) -> list[Metric]:
    """The hub's families; only ``logagent_kube_synced`` (empty) when there is no hub.

    ``now`` is the monotonic time the hub's ``last_event_at`` stamps compare with.
    """
    hub = getattr(topology, "hub", None)
    synced = GaugeMetricFamily("logagent_kube_synced", "1 when every watched resource has its initial state.")
    if hub is None:
        return [synced]
    synced.add_metric([], 1 if hub.synced else 0)
    stats: Mapping[str, Any] = hub.stats
    families: list[Metric] = [synced, _requests(stats, read)]
    for name, help, attr in KIND_COUNTERS:
        family = CounterMetricFamily(name, help, labels=["resource"])
        for resource, kind_stats in stats.items():
            value = read.number(kind_stats, attr)
            if value is not None:
                family.add_metric([resource], value)
        families.append(family)
    return [*families, *_store(hub, stats), _since_last_event(stats, read, now), *_namespace_mode(hub)]


def _requests(stats: Mapping[str, Any], read: AttributeReader) -> Metric:
    requests = CounterMetricFamily(
        "logagent_kube_requests",
        "Requests to the apiserver by resource, verb (list, watch) and answer status class "
        '("unknown" while the watcher does not record answers).',
        labels=["resource", "verb", "status"],
    )
    for resource, kind_stats in stats.items():
        by_answer = getattr(kind_stats, "requests", None)
        if isinstance(by_answer, Mapping):
            for (verb, status), count in by_answer.items():
                requests.add_metric([resource, str(verb), str(status)], count)
            continue
        read.note(kind_stats, "requests")
        for verb in ("list", "watch"):
            value = read.number(kind_stats, f"{verb}_requests")
            if value is not None:
                requests.add_metric([resource, verb, "unknown"], value)
    return requests


def _since_last_event(stats: Mapping[str, Any], read: AttributeReader, now: float) -> Metric:
    since = GaugeMetricFamily(
        "logagent_kube_seconds_since_last_event",
        "Seconds since the last watch event or bookmark of a resource (absent until the first).",
        labels=["resource"],
    )
    for resource, kind_stats in stats.items():
        if not hasattr(kind_stats, "last_event_at"):
            read.note(kind_stats, "last_event_at")
            continue
        last = kind_stats.last_event_at
        if last is not None:
            since.add_metric([resource], max(0.0, now - last))
    return since


def _store(hub: Any, stats: Mapping[str, Any]) -> list[Metric]:
    objects = GaugeMetricFamily("logagent_kube_store_objects", "Objects held in the metadata store.",
                                labels=["resource"])
    for resource, count in _store_sizes(hub).items():
        if resource in stats:
            objects.add_metric([resource], count)
    retained = GaugeMetricFamily(
        "logagent_kube_store_deleted_retained",
        "Deleted objects kept for delay_deletion_ms so late log lines still find their metadata.",
        labels=["resource"],
    )
    graveyard = getattr(getattr(hub, "pods", None), "graveyard_size", None)
    if isinstance(graveyard, int):
        retained.add_metric(["pods"], graveyard)
    return [objects, retained]


def _store_sizes(hub: Any) -> dict[str, int]:
    sizes = {"pods": len(hub.pods)}
    if getattr(hub, "namespaces", None) is not None:
        sizes["namespaces"] = len(hub.namespaces)
    sizes["nodes"] = 1 if getattr(hub, "node", None) is not None else 0
    return sizes


def _namespace_mode(hub: Any) -> list[Metric]:
    """kubernetes.namespace_metadata: the mode chosen, and the lookup cache (lookup mode)."""
    mode = GaugeMetricFamily(
        "logagent_kube_namespace_mode",
        "1 for the namespace mode in use (watch or lookup) and why: configured, counted (auto), "
        "count_unknown (auto could not count namespaces).",
        labels=["mode", "reason"],
    )
    choice = getattr(hub, "namespace_mode", None)
    if choice is not None:
        mode.add_metric([choice.mode, choice.reason], 1)
    lookup = getattr(hub, "namespace_lookup", None)
    if lookup is None:
        return [mode]
    lookups = CounterMetricFamily(
        "logagent_kube_namespace_lookups",
        "Namespace GETs of the lookup mode by result: ok (new labels), unchanged, not_found, forbidden, "
        "throttled, error.",
        labels=["result"],
    )
    for result, count in lookup.lookup_stats.results.items():
        lookups.add_metric([result], count)
    cached = GaugeMetricFamily("logagent_kube_namespace_lookup_cached", "Namespaces held by the lookup mode.")
    cached.add_metric([], len(lookup))
    oldest = GaugeMetricFamily(
        "logagent_kube_namespace_lookup_oldest_age_seconds",
        "Seconds since the least recently fetched cached namespace was fetched (absent when none is cached).",
    )
    age = lookup.oldest_age()
    if age is not None:
        oldest.add_metric([], age)
    return [mode, lookups, cached, oldest]
