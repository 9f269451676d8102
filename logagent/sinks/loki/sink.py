"""The ``loki`` sink: Grafana Loki's push API (JSON).

The options (Vector's, plus ``max_label_sets``) are in
:mod:`logagent.sinks.loki.config`; the protocol is
:class:`~logagent.sinks.loki.push.PushProtocol`.
"""

from __future__ import annotations

import os

from logagent.sinks.http.backend import BackendSink
from logagent.sinks.loki.config import Codec, LokiEncoding, LokiSinkConfig, OutOfOrderAction
from logagent.sinks.loki.push import LabelSetGuard, PushProtocol
from logagent.sinks.shaping import shaper_for

__all__ = ["Codec", "LokiEncoding", "LokiSink", "LokiSinkConfig", "OutOfOrderAction"]


class LokiSink(BackendSink):
    kind = "loki"

    def __init__(self, component_id: str, config: LokiSinkConfig, *, data_dir: str | os.PathLike[str] | None = None) -> None:
        config.validate()
        self.backend_config = config
        self.label_sets = LabelSetGuard(config.max_label_sets)
        protocol = PushProtocol(
            config.compiled("labels"),
            config.compiled("structured_metadata"),
            config.codec,
            config.out_of_order_action,
            self.label_sets,
            shaper=shaper_for(config.fields_options, config.removed_paths()),
        )
        self.push = protocol
        super().__init__(component_id, config.http_config(config.uri, config.headers()), protocol, data_dir=data_dir)

    @property
    def capped_label_set_events(self) -> int:
        """Records sent with the overflow label set because ``max_label_sets`` was reached."""
        return self.label_sets.capped_events

    @property
    def out_of_order_dropped_events(self) -> int:
        """Records dropped by ``out_of_order_action: drop`` (older than their stream's newest sent)."""
        return self.push.dropped_events

    @property
    def active_label_sets(self) -> int:
        return len(self.label_sets)
