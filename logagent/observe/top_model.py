"""What ``logagent top`` shows, computed from two scrapes of the agent's ``/metrics``.

``top`` reads the Prometheus exposition rather than an endpoint of its own:
it holds counters only (never a record), so it is served on the network
address too (``kubectl port-forward`` works, and the same numbers reach
Prometheus and the dashboard); rates are differences of two scrapes over
the time between them.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

#: sample name -> [(labels, value)]
Samples = dict[str, list[tuple[dict[str, str], float]]]


@dataclass
class Scrape:
    at: float
    samples: Samples

    def per_component(self, name: str, where: dict[str, str] | None = None, exclude: dict[str, str] | None = None) -> dict[str, float]:
        """Sum of ``name``'s samples per ``component_id`` (labels matching ``where``, not ``exclude``)."""
        totals: dict[str, float] = defaultdict(float)
        for labels, value in self.samples.get(name, ()):
            cid = labels.get("component_id")
            if cid is None:
                continue
            if where and any(labels.get(k) != v for k, v in where.items()):
                continue
            if exclude and any(labels.get(k) == v for k, v in exclude.items()):
                continue
            totals[cid] += value
        return dict(totals)

    def single(self, name: str) -> float | None:
        values = self.samples.get(name)
        return values[0][1] if values else None

    def label(self, name: str, key: str) -> str | None:
        values = self.samples.get(name)
        return values[0][0].get(key) if values else None


def parse(text: str, at: float) -> Scrape:
    samples: Samples = defaultdict(list)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[sample.name].append((dict(sample.labels), sample.value))
    return Scrape(at, dict(samples))


@dataclass
class Row:
    component_id: str
    role: str  # source, transform, sink
    kind: str
    rates: dict[str, float | None] = field(default_factory=dict)
    values: dict[str, float | None] = field(default_factory=dict)


#: counters shown as per-second rates: column -> sample name
RATE_COLUMNS = {
    "events_in": "logagent_component_received_events_total",
    "events_out": "logagent_component_sent_events_total",
    "bytes_in": "logagent_component_received_bytes_total",
    "bytes_out": "logagent_component_sent_bytes_total",
}


def _errors(scrape: Scrape) -> dict[str, float]:
    """Per component: malformed lines (sources), records a transform could not process or condition
    errors (transforms), requests that failed (sinks: answers other than 2xx, or none)."""
    errors: dict[str, float] = defaultdict(float)
    for name in ("logagent_parse_errors_total", "logagent_component_errors_total",
                 "logagent_condition_runtime_errors_total"):
        for cid, value in scrape.per_component(name).items():
            errors[cid] += value
    for cid, value in scrape.per_component("logagent_sink_requests_total", exclude={"status": "2xx"}).items():
        errors[cid] += value
    return errors


def _values(scrape: Scrape) -> dict[str, dict[str, float]]:
    """Column -> per-component value, for the columns shown as they are."""
    return {
        "errors": _errors(scrape),
        "queue_fill": scrape.per_component("logagent_sink_queue_fill_ratio"),
        "in_flight": scrape.per_component("logagent_sink_requests_in_flight"),
        "retries": scrape.per_component("logagent_sink_retries_total"),
        "dead_lettered": scrape.per_component("logagent_sink_dead_lettered_events_total"),
        "files_open": scrape.per_component("logagent_files_open"),
        "behind_bytes": scrape.per_component("logagent_source_behind_bytes"),
        "oldest_age": scrape.per_component("logagent_oldest_unacked_age_seconds"),
    }


def _roles(scrape: Scrape) -> dict[str, tuple[str, str]]:
    """component_id -> (role, kind), in the order the agent lists them (sources, transforms, sinks)."""
    sources = set(scrape.per_component("logagent_files_open")) | set(scrape.per_component("logagent_source_behind_bytes"))
    sinks = set(scrape.per_component("logagent_sink_queue_events"))
    roles: dict[str, tuple[str, str]] = {}
    for labels, _ in scrape.samples.get("logagent_component_received_events_total", ()):
        cid = labels.get("component_id")
        if cid is None or cid in roles:
            continue
        role = "source" if cid in sources else "sink" if cid in sinks else "transform"
        roles[cid] = (role, labels.get("component_kind", ""))
    order = {"source": 0, "transform": 1, "sink": 2}
    return dict(sorted(roles.items(), key=lambda item: order[item[1][0]]))


def rows(previous: Scrape | None, current: Scrape) -> list[Row]:
    """One row per component: rates since ``previous`` (None without one), current values."""
    values = _values(current)
    totals_now = {column: current.per_component(name) for column, name in RATE_COLUMNS.items()}
    totals_then = {column: previous.per_component(name) for column, name in RATE_COLUMNS.items()} if previous else {}
    elapsed = current.at - previous.at if previous else 0.0
    result = []
    for cid, (role, kind) in _roles(current).items():
        row = Row(cid, role, kind)
        for column in RATE_COLUMNS:
            now, then = totals_now[column].get(cid), totals_then.get(column, {}).get(cid)
            row.rates[column] = (now - then) / elapsed if now is not None and then is not None and elapsed > 0 else None
        for column, per_component in values.items():
            row.values[column] = per_component.get(cid)
        result.append(row)
    return result


def summary(scrape: Scrape) -> dict[str, str]:
    """Agent-wide facts for the header line."""
    ready = scrape.single("logagent_ready")
    rss = scrape.single("logagent_process_resident_memory_bytes")
    return {
        "version": scrape.label("logagent_build_info", "version") or "?",
        "ready": "?" if ready is None else ("yes" if ready else "NO"),
        "rss": "?" if rss is None else human(rss, "B"),
    }


def header(where: str, current: Scrape) -> str:
    facts = summary(current)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return f"logagent top  {where}  {stamp}  version {facts['version']}  ready {facts['ready']}  rss {facts['rss']}"


def human(value: float | None, unit: str = "") -> str:
    """1234 -> 1.23k; None -> -."""
    if value is None:
        return "-"
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.2f}{suffix}{unit}"
    if value == int(value):
        return f"{int(value)}{unit}"
    return f"{value:.1f}{unit}"


COLUMNS: tuple[tuple[str, str], ...] = (
    ("ID", "id"), ("KIND", "kind"), ("EVENTS IN/s", "events_in"), ("EVENTS OUT/s", "events_out"),
    ("BYTES IN/s", "bytes_in"), ("BYTES OUT/s", "bytes_out"), ("ERRORS", "errors"), ("QUEUE", "queue_fill"),
    ("IN FLIGHT", "in_flight"), ("RETRIES", "retries"), ("DEAD LETTERED", "dead_lettered"), ("FILES", "files_open"),
    ("BEHIND", "behind_bytes"), ("OLDEST", "oldest_age"),
)


#: the titles on a narrow terminal, in ``COLUMNS`` order
SHORT_TITLES = ("ID", "KIND", "IN/s", "OUT/s", "B IN/s", "B OUT/s", "ERR", "QUEUE", "FLIGHT", "RETRY", "DEAD",
                "FILES", "BEHIND", "OLDEST")


def cells(row: Row) -> list[str]:
    """The row's cells in ``COLUMNS`` order, as text."""
    out = []
    for _, key in COLUMNS:
        if key == "id":
            out.append(row.component_id)
        elif key == "kind":
            out.append(f"{row.role}/{row.kind}")
        elif key in row.rates:
            out.append(human(row.rates[key], "B" if key.startswith("bytes") else ""))
        else:
            out.append(_value_cell(key, row.values.get(key)))
    return out


def _value_cell(key: str, value: float | None) -> str:
    if value is None:
        return "-"
    if key == "queue_fill":
        return f"{value * 100:.0f}%"
    if key == "behind_bytes":
        return human(value, "B")
    if key == "oldest_age":
        return f"{value:.1f}s"
    return human(value)


def text_table(table_rows: Iterable[list[str]]) -> str:
    """Plain text columns (the ``--once`` screen)."""
    grid = [[title for title, _ in COLUMNS], *table_rows]
    widths = [max(len(r[i]) for r in grid) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip()
                     for r in grid)
