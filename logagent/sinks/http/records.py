"""One record's JSON for a request body, repaired rather than lost when it cannot be encoded as is."""

from __future__ import annotations

from logagent.encoding import encode_json
from logagent.event import LogEvent


def _sanitize(text: object) -> str | None:
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def encode_record(event: LogEvent) -> bytes | None:
    """``encode_json``, or None for an event that cannot be encoded at all.

    A line that is not valid UTF-8 may reach here with lone surrogates
    (``surrogateescape``), which JSON cannot carry: those characters become
    U+FFFD rather than failing the whole request.
    """
    try:
        return encode_json(event)
    except (UnicodeEncodeError, TypeError, ValueError):
        pass
    try:
        clean = LogEvent(
            _sanitize(event.message), _sanitize(event.stream), _sanitize(event.timestamp), event.ctx, event.truncated,
            event.fields,
        )
        return encode_json(clean)
    except (UnicodeEncodeError, UnicodeDecodeError, TypeError, ValueError):
        return None
