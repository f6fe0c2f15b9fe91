"""The method tables: which types are a method's params, result and
notification, from ``meta.json`` and the types' ``x-method`` / ``x-side``."""

from __future__ import annotations

from typing import Any

from . import ir
from .nodes import SchemaError, walk_refs


def preview_table(
    methods: list[ir.Method], stable_methods: list[ir.Method]
) -> list[ir.Method]:
    """The unstable surface's table: every method, those missing from the
    stable one marked ``preview``; a stable method the unstable meta lost
    stays (the unstable surface is a superset)."""
    stable = {(m.side, m.wire): m for m in stable_methods}
    listed = set()
    for method in methods:
        listed.add((method.side, method.wire))
        method.preview = (method.side, method.wire) not in stable
    return methods + [m for key, m in stable.items() if key not in listed]


def method_table(
    defs: dict[str, dict[str, Any]], meta: dict[str, Any]
) -> list[ir.Method]:
    """The methods one ``meta.json`` lists, with their params, result and
    notification types (from the types' ``x-method`` / ``x-side``)."""
    kinds: dict[str, str] = {}
    # The JSON-RPC envelopes (`AgentRequest`, `ProxyNotification`, ...:
    # marked x-docs-ignore) say which types are requests, notifications
    # and responses.
    for envelope, node in defs.items():
        kind = next(
            (
                k.lower()
                for k in ("Request", "Notification", "Response")
                if envelope.endswith(k)
            ),
            None,
        )
        if node.get("x-docs-ignore") and kind is not None:
            for ref in walk_refs(node):
                kinds.setdefault(ref, kind)
    by_method: dict[tuple[str, str], dict[str, str]] = {}
    for name, node in defs.items():
        if "x-method" in node:
            sides = (
                ("agent", "client") if node["x-side"] == "both" else (node["x-side"],)
            )
            for side in sides:
                found = by_method.setdefault((side, node["x-method"]), {})
                found[kinds.get(name, "request")] = name
    methods = []
    for table, side in (
        ("agentMethods", "agent"),
        ("clientMethods", "client"),
        ("protocolMethods", "protocol"),
        ("proxyMethods", "proxy"),  # a proxy chain's conductor and proxies
    ):
        for handler, wire in meta.get(table, {}).items():
            entry = by_method.get((side, wire))
            if not entry:
                raise SchemaError(
                    f"meta.json names {wire!r} but no type has x-method for it"
                )
            # A method may be both a request and a notification (`mcp/message`
            # in the unstable surface): the request is the method, the
            # notification form rides along.
            params = entry.get("request") or entry.get("notification")
            if params is None:
                raise SchemaError(f"no params type for {wire!r}")
            is_request = "request" in entry
            methods.append(
                ir.Method(
                    wire=wire,
                    handler=handler,
                    side=side,
                    params=params,
                    result=entry.get("response") if is_request else None,
                    doc=str(defs.get(params, {}).get("description", "")),
                    notification=entry.get("notification") if is_request else None,
                )
            )
    return methods
