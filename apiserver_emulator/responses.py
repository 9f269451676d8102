"""Status objects, continue tokens and discovery documents as the real apiserver writes them."""

from __future__ import annotations

import base64
import json
from typing import Any

import msgspec
from aiohttp import web

from .store import KINDS

JSON = "application/json"


def status_body(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason}
    if details:
        body["details"] = details
    body["code"] = code
    return body


def status_response(code: int, reason: str, message: str, details: dict[str, Any] | None = None,
                    headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=code, body=msgspec.json.encode(status_body(code, reason, message, details)),
                        content_type=JSON, headers=headers)


def invalid_list_options(causes: list[tuple[str, str, str]]) -> web.Response:
    """422 for bad ListOptions; causes are (field, reason, message) like field.ErrorList."""
    joined = ", ".join(f"{f}: {m}" for f, _, m in causes)
    if len(causes) > 1:
        joined = f"[{joined}]"
    return status_response(
        422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {joined}',
        {"group": "meta.k8s.io", "kind": "ListOptions",
         "causes": [{"reason": r, "message": m, "field": f} for f, r, m in causes]})


def encode_continue(rv: int, last_key: str) -> str:
    token = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": last_key + "\x00"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


class BadContinue(ValueError):
    pass


def decode_continue(token: str) -> tuple[int, str]:
    """(snapshot RV, last key returned) from a continue token."""
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if raw.get("v") != "meta.k8s.io/v1" or not isinstance(raw.get("rv"), int):
            raise ValueError("unsupported token version or missing rv")
        start = raw["start"]
        if not isinstance(start, str) or not start.endswith("\x00"):
            raise ValueError("bad start key")
        return raw["rv"], start[:-1]
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        raise BadContinue(f"continue key is not valid: {exc}") from None


VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0", "gitCommit": "logagent-apiserver-emulator",
    "gitTreeState": "clean", "buildDate": "2024-12-11T00:00:00Z", "goVersion": "go1.23.3",
    "compiler": "gc", "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


API_GROUPS = {"kind": "APIGroupList", "apiVersion": "v1", "groups": []}


def api_resource_list() -> dict[str, Any]:
    resources = []
    for kind in KINDS.values():
        resources.append({
            "name": kind.resource, "singularName": kind.singular, "namespaced": kind.namespaced,
            "kind": kind.kind, "verbs": ["get", "list", "watch"], "shortNames": list(kind.short_names),
            **({"categories": ["all"]} if kind.resource == "pods" else {}),
        })
    return {"kind": "APIResourceList", "groupVersion": "v1", "resources": resources}
