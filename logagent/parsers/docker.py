"""Docker json-file log lines: ``{"log":"...\\n","stream":"stdout","time":"..."}``.

Docker splits a line longer than 16 KiB into chunks; every chunk but the last
has a ``log`` value without the trailing newline. Keys other than
log/stream/time (e.g. ``attrs``) are ignored.
"""

from __future__ import annotations

import msgspec


class DockerLine(msgspec.Struct, forbid_unknown_fields=False):
    """The only keys of a json-file line we keep."""

    log: str
    stream: str
    time: str


#: (timestamp, stream, partial, message); the message lacks the final newline.
DockerParsed = tuple[str, str, bool, str]

#: Maps the decoded stream value to the one shared str object used in records.
STREAMS: dict[str, str] = {"stdout": "stdout", "stderr": "stderr"}

decode_line = msgspec.json.Decoder(DockerLine).decode


def decode_docker(line: bytes) -> DockerLine | None:
    """Decode one line; None if it is not a json-file record.

    Invalid UTF-8 (which Docker itself never writes) is replaced by U+FFFD and
    decoding retried, so one bad byte does not turn a record into garbage.
    """
    try:
        return decode_line(line)
    except msgspec.DecodeError:
        pass
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        repaired = line.decode("utf-8", "replace").encode("utf-8")
        try:
            return decode_line(repaired)
        except msgspec.DecodeError:
            return None
    return None


def parse_docker(line: bytes) -> DockerParsed | None:
    """Parse one json-file line (without its trailing newline); None if malformed.

    A ``log`` value that does not end in a newline is a partial chunk. Exactly
    one trailing newline is stripped from the message.
    """
    record = decode_docker(line)
    if record is None:
        return None
    stream = STREAMS.get(record.stream)
    if stream is None:
        return None
    log = record.log
    if log.endswith("\n"):
        return record.time, stream, False, log[:-1]
    return record.time, stream, True, log
