"""Which family module declares each function, and the declarations loaded per family on first use.

``FAMILIES`` is a static table (family module -> the names it declares), so
that knowing whether a name exists, listing names and suggesting one for a
misspelling import nothing; a family's module (and what it imports: grok's
library, chrono's parser, url, aws, ...) is imported the first time a program
or condition looks up one of its functions. ``tests/test_vrl_stdlib_registry.py``
imports every family and checks this table against their declarations.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from ..function import Function

FAMILIES: dict[str, tuple[str, ...]] = {
    "types": (
        "string", "int", "float", "bool", "object", "array", "timestamp", "to_string", "to_int", "to_float",
        "to_bool", "to_regex", "is_string", "is_integer", "is_float", "is_boolean", "is_timestamp", "is_array",
        "is_object", "is_null", "is_regex", "is_nullish", "is_json", "is_empty",
    ),
    "strings": (
        "downcase", "upcase", "contains", "starts_with", "ends_with", "contains_all", "replace", "split", "find", "join",
        "slice", "strip_whitespace", "strip_ansi_escape_codes", "truncate", "strlen", "match", "match_any",
    ),
    "objects": (
        "zip", "merge", "compact", "flatten", "keys", "values", "length", "get", "set", "remove", "push", "append",
        "includes", "unique", "object_from_array",
    ),
    "parse_text": (
        "parse_json", "parse_int", "parse_float", "parse_regex", "parse_regex_all", "parse_duration",
        "parse_query_string",
    ),
    "key_value": ("parse_key_value", "parse_logfmt"),
    "codecs": (
        "encode_json", "encode_key_value", "encode_logfmt", "md5", "sha1", "sha2", "uuid_v4", "encode_base64",
        "decode_base64",
    ),
    "misc": ("now", "get_env_var", "get_hostname", "log", "assert", "assert_eq"),
    "timestamps": ("format_timestamp", "parse_timestamp", "to_unix_timestamp", "from_unix_timestamp"),
    "redact": ("redact",),
    "parse_logs": ("parse_nginx_log", "parse_apache_log", "parse_klog", "parse_glog", "parse_common_log"),
    "tokens": ("parse_tokens",),
    "numbers": ("round", "floor", "ceil", "mod"),
    "network": ("ip_to_ipv6", "ipv6_to_ipv4"),
    "syslog": (
        "parse_syslog", "to_syslog_level", "to_syslog_severity", "to_syslog_facility", "to_syslog_facility_code",
    ),
    "url": ("parse_url",),
    "aws": ("parse_aws_cloudwatch_log_subscription_message",),
    "grok": ("parse_groks", "parse_grok"),
}

_FAMILY_OF: dict[str, str] = {name: family for family, names in FAMILIES.items() for name in names}


def load_family(family: str) -> list[Function]:
    """The declarations of one family module, importing it."""
    return list(importlib.import_module(f"{__package__}.{family}").FUNCTIONS)


class Functions(Mapping[str, Function]):
    """Every declared function by name; a family is imported when one of its names is first looked up."""

    def __init__(self) -> None:
        self._loaded: dict[str, Function] = {}

    def __getitem__(self, name: str) -> Function:
        declared = self._loaded.get(name)
        if declared is not None:
            return declared
        family = _FAMILY_OF[name]  # KeyError: not a function logagent declares
        for function in load_family(family):
            self._loaded[function.name] = function
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in _FAMILY_OF

    def __iter__(self) -> Iterator[str]:
        return iter(_FAMILY_OF)

    def __len__(self) -> int:
        return len(_FAMILY_OF)
