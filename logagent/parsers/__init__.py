"""Container log line parsers: CRI and Docker json-file, with partial-line merging.

Pure functions of bytes: no I/O, no asyncio. See ``line_parser`` for format
detection and ``merge`` for how fragments are joined and capped.
"""

from logagent.parsers.cri import CriLine, parse_cri
from logagent.parsers.docker import DockerLine, DockerParsed, parse_docker
from logagent.parsers.line_parser import CRI, DOCKER, LineParser
from logagent.parsers.merge import ParsedLine

__all__ = [
    "CRI",
    "DOCKER",
    "CriLine",
    "DockerLine",
    "DockerParsed",
    "LineParser",
    "ParsedLine",
    "parse_cri",
    "parse_docker",
]
