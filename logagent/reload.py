"""Apply a new config to a running topology by diff (a live reload).

What changes live, and how:

- transforms: a new or changed one is built anew; one whose only change is
  its ``inputs`` keeps its object (and its counters) and is rewired;
- sinks: a new one is started; a removed one drains (what it holds is
  delivered and acknowledged) and stops; a changed one is replaced: the new
  instance opens its connections before anything is swapped and starts
  reading its inbox once the old one has drained, so a sink's records stay in
  order; one whose only change is its ``inputs`` keeps running;
- sources: a new one starts reading (from its checkpoints, if the id had
  some); a removed one stops reading (what it already emitted is delivered
  and acknowledged); a changed one keeps its tailer, its open files and
  offsets, and takes the new enrichment and selection settings (see
  ``LIVE_SOURCE_KEYS``); any other source setting needs a restart;
- the metadata hub: the pod watch is never touched; a namespace or node watch
  starts when the new config needs it (and the reload waits for its initial
  state, up to ``kubernetes.sync_timeout_secs``) and stops when nothing needs it.

The swap of the wiring is synchronous (no await), so it happens between two
batches: a batch goes through the pipeline that was current when its source
emitted it, and a component the reload retires is drained only once no
delivery uses the old wiring any more.

Refused with a "restart needed" message: ``data_dir``, ``kubernetes``,
``api``, and the source settings that shape the tailer and the parsers.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import structlog

from logagent.config import Config, ConfigError
from logagent.queue import BatchQueue
from logagent.sinks.base import Sink
from logagent.sinks.healthcheck import Unhealthy, run_healthchecks
from logagent.sources.internal_metrics import log_sources
from logagent.topology import (
    HubKinds,
    Topology,
    Wiring,
    build_sink,
    build_transform,
    hub_kinds,
    new_inbox,
    pod_retention_ms,
    wire,
)

log = structlog.get_logger(__name__)

#: top-level sections that cannot change while the agent runs
RESTART_SECTIONS = ("data_dir", "kubernetes", "api")

#: source settings a running source takes on (``KubernetesLogsSource.reconfigure``)
LIVE_SOURCE_KEYS = frozenset({
    "insert_namespace_fields",
    "insert_node_fields",
    "extra_label_selector",
    "extra_field_selector",
    "extra_namespace_label_selector",
    "pod_annotation_fields",
    "namespace_annotation_fields",
    "node_annotation_fields",
})


class RestartNeeded(ConfigError):
    """The new config changes settings that only a restart can apply."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        super().__init__(f"cannot change while the agent runs ({', '.join(keys)}); restart the agent to apply this config")


def restart_keys(old: Config, new: Config) -> list[str]:
    """Dotted keys of the changes that a live reload cannot apply."""
    keys = [name for name in RESTART_SECTIONS if getattr(old, name) != getattr(new, name)]
    for cid in old.sources.keys() & new.sources.keys():
        before, after = old.sources[cid], new.sources[cid]
        for name in before.__struct_fields__:
            if name not in LIVE_SOURCE_KEYS and getattr(before, name) != getattr(after, name):
                keys.append(f"sources.{cid}.{name}")
    if pod_retention_ms(old) != pod_retention_ms(new) and not any(k.endswith(".delay_deletion_ms") for k in keys):
        keys.append("sources.*.delay_deletion_ms (the longest one sets how long deleted pods are kept)")
    return keys


def _same_but_inputs(before: Any, after: Any) -> bool:
    if type(before) is not type(after):
        return False
    return bool(msgspec.structs.replace(before, inputs=[]) == msgspec.structs.replace(after, inputs=[]))


@dataclass
class SectionDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: rebuilt (transforms, sinks) or reconfigured in place (sources)
    changed: list[str] = field(default_factory=list)
    #: untouched, or only rewired
    kept: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, list[str]]:
        return {k: v for k, v in (("added", self.added), ("removed", self.removed), ("changed", self.changed)) if v}


def diff_section(old: Mapping[str, Any], new: Mapping[str, Any], same: Callable[[Any, Any], bool]) -> SectionDiff:
    diff = SectionDiff(removed=[cid for cid in old if cid not in new])
    for cid, cfg in new.items():
        if cid not in old:
            diff.added.append(cid)
        elif same(old[cid], cfg):
            diff.kept.append(cid)
        else:
            diff.changed.append(cid)
    return diff


@dataclass
class Plan:
    """What a reload does, section by section."""

    new: Config
    sources: SectionDiff
    transforms: SectionDiff
    sinks: SectionDiff
    kinds_before: HubKinds
    kinds_after: HubKinds

    @property
    def empty(self) -> bool:
        sections = (self.sources, self.transforms, self.sinks)
        return not any(s.added or s.removed or s.changed for s in sections) and self.kinds_before == self.kinds_after

    def summary(self) -> dict[str, dict[str, list[str]]]:
        return {
            name: section.summary()
            for name, section in (("sources", self.sources), ("transforms", self.transforms), ("sinks", self.sinks))
            if section.summary()
        }


def plan_reload(old: Config, new: Config) -> Plan:
    """The diff between two valid configs; RestartNeeded if it cannot be applied live."""
    keys = restart_keys(old, new)
    if keys:
        raise RestartNeeded(keys)
    return Plan(
        new=new,
        sources=diff_section(old.sources, new.sources, lambda a, b: a == b),
        transforms=diff_section(old.transforms, new.transforms, _same_but_inputs),
        sinks=diff_section(old.sinks, new.sinks, _same_but_inputs),
        kinds_before=hub_kinds(old),
        kinds_after=hub_kinds(new),
    )


# ---------------------------------------------------------------- applying


async def apply_plan(topology: Topology, plan: Plan) -> None:
    """Apply ``plan``; if it raises (a sink cannot start), the running topology is unchanged."""
    new = plan.new
    sinks = {cid: build_sink(cid, new.sinks[cid], topology.stdout_fd, new.data_dir) for cid in plan.sinks.added + plan.sinks.changed}
    transforms = {cid: build_transform(cid, new.transforms[cid]) for cid in plan.transforms.added + plan.transforms.changed}
    await topology.start_sinks(sinks)
    try:
        if new.healthchecks.enabled:  # as Vector: the sinks a reload adds or changes are checked
            await run_healthchecks(sinks, new.sinks, new.healthchecks.require_healthy)
    except Unhealthy as exc:
        await _stop_all(sinks.values())
        raise ConfigError(str(exc)) from None
    try:
        await _widen_hub(topology, plan)
    except BaseException:
        await _stop_all(sinks.values())
        raise
    _swap(topology, plan, transforms, sinks)
    await _narrow_hub(topology, plan)


async def _widen_hub(topology: Topology, plan: Plan) -> None:
    """Start the watches the new config needs and wait for their initial state."""
    before, after = plan.kinds_before, plan.kinds_after
    hub = topology.hub
    if hub is None or ((after.namespaces <= before.namespaces) and (after.node <= before.node)):
        return
    await hub.set_kinds(needs_namespaces=before.namespaces or after.namespaces, needs_node=before.node or after.node)
    timeout = plan.new.kubernetes.sync_timeout_secs
    if not await hub.wait_synced(timeout=timeout):
        log.warning("metadata of a newly needed kind not synced in time; applying the config anyway", timeout_secs=timeout)


async def _narrow_hub(topology: Topology, plan: Plan) -> None:
    """Close the watches nothing needs any more (after the sources stopped asking)."""
    after = plan.kinds_after
    if topology.hub is not None and after != plan.kinds_before:
        await topology.hub.set_kinds(needs_namespaces=after.namespaces, needs_node=after.node)


def _swap(topology: Topology, plan: Plan, transforms: dict[str, Any], sinks: dict[str, Sink]) -> None:
    """Install the new graph: synchronous, so it falls between two batches."""
    new = plan.new
    old_wiring = topology.wiring
    replaced = {cid: _retire_sink(topology, old_wiring, cid) for cid in plan.sinks.removed + plan.sinks.changed}
    for cid in plan.sources.removed:
        if cid in topology.sources:  # internal_metrics has no running source
            _retire_source(topology, cid)
    for cid in plan.sources.changed:
        if cid in topology.sources:
            topology.sources[cid].reconfigure(new.sources[cid])
    topology.transforms = {cid: transforms[cid] if cid in transforms else topology.transforms[cid] for cid in new.transforms}
    for cid, sink in sinks.items():
        topology.sinks[cid] = sink
        topology.inboxes[cid] = new_inbox(new.sinks[cid])
        topology.start_sink_task(cid, sink, topology.inboxes[cid], after=replaced.get(cid))
    topology.sinks = {cid: topology.sinks[cid] for cid in new.sinks}
    topology.inboxes = {cid: topology.inboxes[cid] for cid in new.sinks}
    topology.wiring = wire(new, topology.transforms, topology.inboxes)
    topology.wiring.replaces(old_wiring)
    topology.config = new
    for cid in log_sources({cid: new.sources[cid] for cid in plan.sources.added}):
        source = topology.sources[cid] = topology.build_source(cid, new.sources[cid])
        topology.start_source_task(cid, source)


def _retire_sink(topology: Topology, wiring: Wiring, cid: str) -> asyncio.Task[None]:
    sink = topology.sinks.pop(cid)
    inbox = topology.inboxes.pop(cid)
    task = topology.sink_tasks.pop(cid)
    retire = asyncio.create_task(_drain_sink(wiring, cid, sink, inbox, task), name=f"retire-sink:{cid}")
    topology.retiring.add(retire)
    retire.add_done_callback(topology.retiring.discard)
    return retire


async def _drain_sink(wiring: Wiring, cid: str, sink: Sink, inbox: BatchQueue, task: asyncio.Task[None]) -> None:
    try:
        await wiring.quiesced()  # no batch is on its way to this inbox any more
        inbox.close()
        await asyncio.wait({task})
    finally:
        with contextlib.suppress(Exception):
            await sink.stop()
    log.info("sink drained and stopped", component_id=cid)


def _retire_source(topology: Topology, cid: str) -> None:
    source = topology.sources.pop(cid)
    source.stop()
    task = topology.source_tasks.pop(cid)
    topology.retiring.add(task)
    task.add_done_callback(topology.retiring.discard)


async def _stop_all(sinks: Any) -> None:
    for sink in sinks:
        with contextlib.suppress(Exception):
            await sink.stop()
