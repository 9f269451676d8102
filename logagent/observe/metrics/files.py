"""Metrics of reading files: the sources' line counters, their tailers, the checkpoint file."""

from __future__ import annotations

from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric

from logagent.observe.metrics.reading import AttributeMetric, AttributeReader, mapping

SOURCE_COUNTERS: tuple[AttributeMetric, ...] = (
    ("logagent_parse_errors", "Malformed log lines (neither CRI nor Docker json-file), passed on whole.", "parse_errors"),
    ("logagent_lines_truncated", "Records cut at the line size limit.", "lines_truncated"),
    ("logagent_enrichment_misses", "Records whose pod was unknown to the metadata store (enriched from the path only).",
     "enrichment_misses"),
    ("logagent_files_excluded", "Files excluded by label, annotation or selector.", "files_excluded"),
    ("logagent_multiline_records", "Records joined from two or more lines by multiline grouping.", "multiline_records"),
    ("logagent_multiline_lines", "Lines that went into multiline records.", "multiline_lines"),
    ("logagent_multiline_splits", "Multiline groups cut at max_lines or max_bytes (the rest began a new record).",
     "multiline_splits"),
    ("logagent_multiline_timeouts", "Multiline groups emitted because no line joined them for timeout_ms.",
     "multiline_timeouts"),
)

TAILER_COUNTERS: tuple[AttributeMetric, ...] = (
    ("logagent_file_bytes_read", "Bytes read from log files.", "bytes_read"),
    ("logagent_files_opened", "Log files opened for tailing.", "files_opened"),
    ("logagent_files_closed", "Log files closed (rotated away, deleted or no longer included).", "files_closed"),
    ("logagent_files_closed_unread", "Log files closed with data left unread (rotate_wait_secs expired).",
     "files_closed_unread"),
    ("logagent_file_bytes_unread_on_close", "Bytes left unread in files closed before their end.", "bytes_unread_on_close"),
    ("logagent_file_truncations", "Log files that shrank below the read offset (copy-truncate) and were read again from 0.",
     "truncations"),
    ("logagent_backpressure_pauses", "Times reading paused because too many bytes were unacknowledged.",
     "backpressure_pauses"),
)

TAILER_GAUGES: tuple[AttributeMetric, ...] = (
    ("logagent_files_open", "Log files open for tailing.", "files_open"),
    ("logagent_files_open_deleted", "Open log files that were deleted on disk (kept open to read them to the end).",
     "files_open_deleted"),
    ("logagent_checkpoint_lag_bytes", "Bytes of open files past their checkpoint (read or not, not yet acknowledged).",
     "checkpoint_lag_bytes"),
    ("logagent_unacked_bytes", "Bytes read and handed on that no sink has acknowledged yet.", "unacked_bytes"),
)

CHECKPOINT_COUNTERS: tuple[AttributeMetric, ...] = (
    ("logagent_checkpoint_writes", "Checkpoint file writes (temp file + rename).", "writes"),
    ("logagent_checkpoint_syncs", "Writes of the fsync'ed checkpoint copy.", "syncs"),
    ("logagent_checkpoint_write_errors", "Checkpoint writes that failed (disk full, read-only data_dir); retried.",
     "write_errors"),
)


def source_families(topology: Any, read: AttributeReader) -> list[Metric]:
    """Per source: its line counters, then its tailer's gauges and counters."""
    sources = mapping(topology, "sources")
    tailers = {cid: source.tailer for cid, source in sources.items() if getattr(source, "tailer", None) is not None}
    return [
        *(read.per_object(CounterMetricFamily, spec, sources) for spec in SOURCE_COUNTERS),
        *(read.per_object(GaugeMetricFamily, spec, tailers) for spec in TAILER_GAUGES),
        *(read.per_object(CounterMetricFamily, spec, tailers) for spec in TAILER_COUNTERS),
    ]


def checkpoint_families(topology: Any, read: AttributeReader) -> list[Metric]:
    """The shared checkpoint store's write counters (no label: one file per agent)."""
    store = getattr(topology, "checkpoints", None)
    if store is None:
        return []
    families: list[Metric] = []
    for name, help, attr in CHECKPOINT_COUNTERS:
        value = read.number(store, attr)
        if value is not None:
            family = CounterMetricFamily(name, help)
            family.add_metric([], value)
            families.append(family)
    return families
