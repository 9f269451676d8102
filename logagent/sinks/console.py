"""The console sink: one record per line on stdout or stderr.

Writes to a pipe or socket happen on a dedicated thread, so a slow reader of
the pipe slows the agent's reading (backpressure) without blocking its event
loop. Writes to a regular file or /dev/null cannot be held up by a reader, so they
are made inline: handing each write to
a thread costs more CPU than the write itself. A batch is
acknowledged after its bytes were written and flushed. A closed pipe ends the
sink with :class:`SinkClosed`; the topology then shuts the agent down in order.
"""

from __future__ import annotations

import asyncio
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from typing import Literal

import msgspec
import structlog

from logagent.acks import Batch
from logagent.encoding import encode_json, encode_ndjson_parts, encode_text
from logagent.observe.latency import DeliveryLatency
from logagent.queue import BatchQueue
from logagent.sinks.base import Sink
from logagent.sinks.common_config import CodecEncoding, CommonSinkOptions, FramingConfig, check_fields
from logagent.sinks.shaping import shaper_for

log = structlog.get_logger(__name__)

#: write at most this much in one system call batch
_WRITE_BYTES = 1 << 20
#: buffers per writev call (the kernel's IOV_MAX)
_IOV_MAX = min(os.sysconf("SC_IOV_MAX"), 1024)


class ConsoleSinkConfig(CommonSinkOptions, tag="console", tag_field="type", forbid_unknown_fields=True, kw_only=True):
    #: ours: ``json`` or ``text``; or Vector's mapping (``codec``, ``only_fields`` ...)
    encoding: Literal["json", "text"] | CodecEncoding = "json"
    target: Literal["stdout", "stderr"] = "stdout"
    framing: FramingConfig | None = None

    @property
    def codec(self) -> str:
        encoding = self.encoding
        return encoding if isinstance(encoding, str) else encoding.checked_codec(("json", "text"))

    @property
    def pretty(self) -> bool:
        return not isinstance(self.encoding, str) and self.encoding.json.pretty

    def validate(self) -> None:
        self.validate_common()
        if self.healthcheck_config.uri is not None:
            raise ValueError("healthcheck.uri: the console has no destination to check")
        if self.framing is not None and (self.framing.method != "newline_delimited" or self.framing.character_delimited):
            raise ValueError("framing.method: the console writes one record a line (newline_delimited)")
        self.codec  # noqa: B018 - raises ValueError for a codec the console cannot write
        if not isinstance(self.encoding, str):
            check_fields(self.encoding)


class SinkClosed(Exception):
    """The sink's destination went away (for example a closed pipe)."""


class ConsoleSink(Sink):
    kind = "console"

    def __init__(self, component_id: str, config: ConsoleSinkConfig, fd: int | None = None) -> None:
        super().__init__(component_id)
        self.config = config
        self.fd = fd if fd is not None else (1 if config.target == "stdout" else 2)
        self._json = config.codec == "json"
        self._pretty = config.pretty
        self._shaper = shaper_for(None if isinstance(config.encoding, str) else config.encoding)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"console-{component_id}")
        self._inline = _never_blocks(self.fd)
        self.events_in = 0
        #: from the records' timestamps to their write
        self.delivery_latency = DeliveryLatency()
        self.events_sent = 0
        self.bytes_sent = 0

    async def run(self, inbox: BatchQueue) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = await inbox.get()
            if batch is None:
                return
            batches = [batch]
            size = batch.nbytes
            while size < _WRITE_BYTES and (more := inbox.get_nowait()) is not None:
                batches.append(more)
                size += more.nbytes
            count = sum(len(b.events) for b in batches)
            self.events_in += count
            parts = self._render(batches)
            try:
                if self._inline:
                    written = _write_parts(self.fd, parts)
                    await asyncio.sleep(0)  # let the sources and watchers run between writes
                else:
                    written = await loop.run_in_executor(self._executor, _write_parts, self.fd, parts)
            except (BrokenPipeError, ConnectionResetError) as exc:
                log.error("console sink output closed; shutting down", component_id=self.component_id, error=str(exc))
                raise SinkClosed(str(exc)) from None
            self.events_sent += count
            self.bytes_sent += written
            for b in batches:
                b.release()
                self.delivery_latency.observe_events(b.events)

    def _render(self, batches: list[Batch]) -> list[bytes]:
        events = chain.from_iterable(b.events for b in batches)
        if self._shaper:
            events = map(self._shaper, events)  # type: ignore[assignment]
        if self._pretty:
            return [msgspec.json.format(encode_json(event), indent=2) + b"\n" for event in events]
        if self._json:
            return encode_ndjson_parts(events)
        lines = [encode_text(event) for event in events]
        lines.append(b"")
        return [b"\n".join(lines)]

    async def stop(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _never_blocks(fd: int) -> bool:
    """Whether writes to ``fd`` cannot wait on a reader: a regular file or /dev/null.

    A terminal can be paused (^S) and a pipe can fill, so those go through the
    writer thread.
    """
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            return True
        return stat.S_ISCHR(st.st_mode) and st.st_rdev == os.stat(os.devnull).st_rdev
    except OSError:
        return False


def _write_parts(fd: int, parts: list[bytes]) -> int:
    """Write ``parts`` in order with writev, never joining them; returns the byte count.

    A short write (a signal, a non-blocking descriptor) goes on with the rest.
    """
    total = 0
    for start in range(0, len(parts), _IOV_MAX):
        group = parts[start : start + _IOV_MAX]
        size = sum(map(len, group))
        written = os.writev(fd, group)
        if written < size:
            _write_all(fd, memoryview(b"".join(group))[written:])
        total += size
    return total


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


