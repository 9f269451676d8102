"""Prometheus metrics read from the components' own counters at scrape time.

:mod:`.collector` holds the collector and the agent-wide families; one
module per area builds the rest: :mod:`.components` (events and bytes of
every component, transform errors), :mod:`.files` (sources, tailers,
checkpoints), :mod:`.sinks` (inboxes, HTTP requests), :mod:`.kube` (the
metadata hub); :mod:`.reading` is how they all read a counter.
"""

from logagent.observe.metrics.collector import LABEL_NAMES, TopologyCollector, build_registry
from logagent.observe.metrics.kube import RESOURCES

__all__ = ["LABEL_NAMES", "RESOURCES", "TopologyCollector", "build_registry"]
