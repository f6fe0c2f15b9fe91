"""Realistic ACP (protocol version 1) message corpus for encode/decode benchmarks.

Stdlib only.  Every payload is valid against the corresponding ``$defs`` type of
the v1 JSON schema (``/work/shared/acp-spec/v1/schema.json``); run
``python bench/corpus.py --check`` to re-validate (needs ``jsonschema``; also
round-trips every case through the official pydantic SDK if ``acp`` is importable).

``CORPUS[name] = (method, kind, params_json_bytes)`` where ``kind`` is

* ``"request"``      -> the bytes are the ``params`` of a JSON-RPC request,
* ``"response"``     -> the bytes are the ``result`` of a JSON-RPC response,
* ``"notification"`` -> the bytes are the ``params`` of a JSON-RPC notification.

``SCHEMA_DEF[name]`` gives the schema ``$defs`` type each payload conforms to.
``MIX`` is one realistic prompt turn worth of traffic (mostly streamed
``agent_message_chunk`` notifications, a few tool calls, a plan, one permission
round-trip); ``SETUP`` is the once-per-connection handshake.
``envelope(name, id=...)`` wraps a case in its full JSON-RPC 2.0 frame (bytes,
no trailing newline).

Notes on the bytes: compact separators (``","``/``":"``), keys in the order a
typical TypeScript/Rust implementation emits them, and UTF-8 (not
``\\uXXXX``-escaped) for the one non-ASCII character (the ``→`` in the plan).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["CORPUS", "MIX", "OBJECTS", "SCHEMA_DEF", "SETUP", "envelope"]

SESSION_ID = "sess_01JD8Z6Q3V5K2M7N9P4R8T6W1X"
CWD = "/home/alice/projects/webshop"

# --------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------

# ~1 KB of Python source, embedded as a text resource in the prompt.
_CART_PY = '''\
"""Shopping cart domain logic."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass
class LineItem:
    sku: str
    quantity: int
    unit_price: Decimal

    @property
    def total(self) -> Decimal:
        return self.unit_price * self.quantity


@dataclass
class Cart:
    items: list[LineItem] = field(default_factory=list)
    coupon: str | None = None

    def add(self, sku: str, quantity: int, unit_price: Decimal) -> None:
        for item in self.items:
            if item.sku == sku:
                item.quantity += quantity
                return
        self.items.append(LineItem(sku, quantity, unit_price))

    def subtotal(self) -> Decimal:
        total = Decimal("0")
        for item in self.items:
            total += item.total
        return total

    def total(self, tax_rate: Decimal) -> Decimal:
        subtotal = self.subtotal()
        if self.coupon == "WELCOME10":
            subtotal = subtotal * Decimal("0.9")
        return (subtotal * (1 + tax_rate)).quantize(Decimal("0.01"))
'''

# ~30-line diff: old (~23 lines) and new (~31 lines) text of the edited region.
_DIFF_OLD = """\
@dataclass
class Cart:
    items: list[LineItem] = field(default_factory=list)
    coupon: str | None = None

    def add(self, sku: str, quantity: int, unit_price: Decimal) -> None:
        for item in self.items:
            if item.sku == sku:
                item.quantity += quantity
                return
        self.items.append(LineItem(sku, quantity, unit_price))

    def subtotal(self) -> Decimal:
        total = Decimal("0")
        for item in self.items:
            total += item.total
        return total

    def total(self, tax_rate: Decimal) -> Decimal:
        subtotal = self.subtotal()
        if self.coupon == "WELCOME10":
            subtotal = subtotal * Decimal("0.9")
        return (subtotal * (1 + tax_rate)).quantize(Decimal("0.01"))
"""

_DIFF_NEW = """\
COUPONS: dict[str, Decimal] = {"WELCOME10": Decimal("0.10"), "VIP20": Decimal("0.20")}


@dataclass
class Cart:
    items: list[LineItem] = field(default_factory=list)
    coupon: str | None = None

    def add(self, sku: str, quantity: int, unit_price: Decimal) -> None:
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        for item in self.items:
            if item.sku == sku:
                item.quantity += quantity
                return
        self.items.append(LineItem(sku, quantity, unit_price))

    def remove(self, sku: str) -> None:
        self.items = [item for item in self.items if item.sku != sku]

    def subtotal(self) -> Decimal:
        return sum((item.total for item in self.items), Decimal("0"))

    def discount(self, subtotal: Decimal) -> Decimal:
        rate = COUPONS.get(self.coupon or "", Decimal("0"))
        return (subtotal * rate).quantize(Decimal("0.01"))

    def total(self, tax_rate: Decimal) -> Decimal:
        subtotal = self.subtotal()
        discounted = subtotal - self.discount(subtotal)
        return (discounted * (1 + tax_rate)).quantize(Decimal("0.01"))
"""

_CART_PATH = f"{CWD}/src/webshop/cart.py"

# --------------------------------------------------------------------------
# payloads (as Python objects; serialised below)
# --------------------------------------------------------------------------

INITIALIZE_REQUEST: dict[str, Any] = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
    },
    "clientInfo": {"name": "zed", "title": "Zed", "version": "0.201.3"},
}

INITIALIZE_RESPONSE: dict[str, Any] = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "mcpCapabilities": {"http": True, "sse": False},
    },
    "authMethods": [],
    "agentInfo": {
        "name": "claude-code-acp",
        "title": "Claude Code",
        "version": "0.5.1",
    },
}

SESSION_NEW_REQUEST: dict[str, Any] = {
    "cwd": CWD,
    "mcpServers": [
        {
            # stdio variant: no "type" discriminator on the wire
            "name": "filesystem",
            "command": "/usr/local/bin/npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", CWD],
            "env": [
                {"name": "NODE_ENV", "value": "production"},
                {"name": "LOG_LEVEL", "value": "warn"},
            ],
        },
        {
            "type": "http",
            "name": "github",
            "url": "https://api.githubcopilot.com/mcp/",
            "headers": [
                {
                    "name": "Authorization",
                    "value": "Bearer ghp_4f9Xk2LmQ8vR1tY7uW3zA6bC0dE5gH",
                },
                {"name": "X-MCP-Toolsets", "value": "repos,issues,pull_requests"},
            ],
        },
    ],
}

SESSION_PROMPT_REQUEST: dict[str, Any] = {
    "sessionId": SESSION_ID,
    "prompt": [
        {
            "type": "text",
            "text": "Add input validation to Cart.add, a remove() method, and move coupon handling "
            "into a discount() helper. Keep the public API backwards compatible.",
        },
        {
            "type": "resource",
            "resource": {
                "uri": f"file://{_CART_PATH}",
                "mimeType": "text/x-python",
                "text": _CART_PY,
            },
        },
    ],
}

UPDATE_AGENT_MESSAGE_CHUNK: dict[str, Any] = {
    "sessionId": SESSION_ID,
    "update": {
        "sessionUpdate": "agent_message_chunk",
        "messageId": "msg_01JD8Z7B2C4E6G8J0K2M4P6R8T",
        "content": {
            "type": "text",
            "text": "I'll start by reading the cart module to see how coupons are applied today.\n",
        },
    },
}

UPDATE_TOOL_CALL: dict[str, Any] = {
    "sessionId": SESSION_ID,
    "update": {
        "sessionUpdate": "tool_call",
        "toolCallId": "toolu_01HkV8mN3pQ7rS2tU9wX4yZ6",
        "title": "Edit src/webshop/cart.py",
        "kind": "edit",
        "status": "pending",
        "locations": [{"path": _CART_PATH, "line": 27}],
        "rawInput": {
            "file_path": _CART_PATH,
            "old_string": "    def subtotal(self) -> Decimal:",
            "new_string": "    def remove(self, sku: str) -> None:",
            "replace_all": False,
        },
    },
}

UPDATE_TOOL_CALL_UPDATE_DIFF: dict[str, Any] = {
    "sessionId": SESSION_ID,
    "update": {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "toolu_01HkV8mN3pQ7rS2tU9wX4yZ6",
        "status": "completed",
        "content": [
            {
                "type": "diff",
                "path": _CART_PATH,
                "oldText": _DIFF_OLD,
                "newText": _DIFF_NEW,
            }
        ],
    },
}

UPDATE_PLAN: dict[str, Any] = {
    "sessionId": SESSION_ID,
    "update": {
        "sessionUpdate": "plan",
        "entries": [
            {
                "content": "Read src/webshop/cart.py and its tests",
                "priority": "high",
                "status": "completed",
            },
            {
                "content": "Validate quantity in Cart.add and add Cart.remove",
                "priority": "high",
                "status": "in_progress",
            },
            {
                "content": "Extract coupon logic → Cart.discount() using a COUPONS table",
                "priority": "medium",
                "status": "pending",
            },
            {
                "content": "Run pytest and fix any regressions",
                "priority": "low",
                "status": "pending",
            },
        ],
    },
}

REQUEST_PERMISSION_REQUEST: dict[str, Any] = {
    "sessionId": SESSION_ID,
    "toolCall": {
        "toolCallId": "toolu_01Jq2W5eR8tY1uI4oP7aS0dF",
        "title": "Run `pytest -q tests/test_cart.py`",
        "kind": "execute",
        "status": "pending",
        "rawInput": {
            "command": "pytest -q tests/test_cart.py",
            "description": "Run the cart unit tests",
        },
    },
    "options": [
        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
        {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
    ],
}

# Small extras so MIX can contain the per-turn responses too.
SESSION_PROMPT_RESPONSE: dict[str, Any] = {"stopReason": "end_turn"}
REQUEST_PERMISSION_RESPONSE: dict[str, Any] = {
    "outcome": {"outcome": "selected", "optionId": "allow"}
}


# name -> (method, kind, schema $defs type, object)
_CASES: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "initialize_request": (
        "initialize",
        "request",
        "InitializeRequest",
        INITIALIZE_REQUEST,
    ),
    "initialize_response": (
        "initialize",
        "response",
        "InitializeResponse",
        INITIALIZE_RESPONSE,
    ),
    "session_new_request": (
        "session/new",
        "request",
        "NewSessionRequest",
        SESSION_NEW_REQUEST,
    ),
    "session_prompt_request": (
        "session/prompt",
        "request",
        "PromptRequest",
        SESSION_PROMPT_REQUEST,
    ),
    "update_agent_message_chunk": (
        "session/update",
        "notification",
        "SessionNotification",
        UPDATE_AGENT_MESSAGE_CHUNK,
    ),
    "update_tool_call": (
        "session/update",
        "notification",
        "SessionNotification",
        UPDATE_TOOL_CALL,
    ),
    "update_tool_call_update_diff": (
        "session/update",
        "notification",
        "SessionNotification",
        UPDATE_TOOL_CALL_UPDATE_DIFF,
    ),
    "update_plan": (
        "session/update",
        "notification",
        "SessionNotification",
        UPDATE_PLAN,
    ),
    "request_permission_request": (
        "session/request_permission",
        "request",
        "RequestPermissionRequest",
        REQUEST_PERMISSION_REQUEST,
    ),
    # extras (tiny responses)
    "session_prompt_response": (
        "session/prompt",
        "response",
        "PromptResponse",
        SESSION_PROMPT_RESPONSE,
    ),
    "request_permission_response": (
        "session/request_permission",
        "response",
        "RequestPermissionResponse",
        REQUEST_PERMISSION_RESPONSE,
    ),
}


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


OBJECTS: dict[str, dict[str, Any]] = {name: case[3] for name, case in _CASES.items()}
SCHEMA_DEF: dict[str, str] = {name: case[2] for name, case in _CASES.items()}
CORPUS: dict[str, tuple[str, str, bytes]] = {
    name: (method, kind, _dumps(obj))
    for name, (method, kind, _def, obj) in _CASES.items()
}

# Once per connection.
SETUP: list[str] = ["initialize_request", "initialize_response", "session_new_request"]


def _build_mix() -> list[str]:
    """One realistic prompt turn (100 messages) in wire order.

    82 agent_message_chunk, 2 plan, 5 tool_call, 5 tool_call_update (diff),
    2 permission request/response pairs, 1 prompt request, 1 prompt response.
    """
    mix: list[str] = ["session_prompt_request", "update_plan"]
    chunks = "update_agent_message_chunk"
    mix += [chunks] * 10
    for step in range(5):
        mix.append("update_tool_call")
        if step in (1, 3):
            mix += ["request_permission_request", "request_permission_response"]
        mix.append("update_tool_call_update_diff")
        mix += [chunks] * 12
        if step == 2:
            mix.append("update_plan")
    mix += [chunks] * (82 - mix.count(chunks))
    mix.append("session_prompt_response")
    return mix


MIX: list[str] = _build_mix()


def envelope(name: str, id: int | str = 1) -> bytes:
    """Full JSON-RPC 2.0 frame for a corpus case (no trailing newline)."""
    method, kind, payload = CORPUS[name]
    if kind == "request":
        head = (
            b'{"jsonrpc":"2.0","id":'
            + _dumps(id)
            + b',"method":'
            + _dumps(method)
            + b',"params":'
        )
    elif kind == "notification":
        head = b'{"jsonrpc":"2.0","method":' + _dumps(method) + b',"params":'
    else:
        head = b'{"jsonrpc":"2.0","id":' + _dumps(id) + b',"result":'
    return head + payload + b"}"


def _check(
    schema_path: str = "/work/shared/acp-spec/v1/schema.json",
) -> None:  # pragma: no cover
    import jsonschema

    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    validator_cls = jsonschema.validators.validator_for(schema)
    root = validator_cls(schema)
    for name, (method, kind, payload) in CORPUS.items():
        sub = validator_cls(
            {
                "$schema": schema["$schema"],
                "$defs": schema["$defs"],
                "$ref": f"#/$defs/{SCHEMA_DEF[name]}",
            }
        )
        sub.validate(json.loads(payload))
        root.validate(
            json.loads(envelope(name))
        )  # whole JSON-RPC frame against the root schema
        print(
            f"ok  {name:30s} {kind:12s} {method:28s} {SCHEMA_DEF[name]:26s} {len(payload):6d} B"
        )
    assert len(MIX) == 100 and set(MIX) <= set(CORPUS)


if __name__ == "__main__":  # pragma: no cover
    import sys

    if "--check" in sys.argv:
        _check()
    else:
        for name, (method, kind, payload) in CORPUS.items():
            print(f"{name:30s} {kind:12s} {method:28s} {len(payload):6d} B")
        print("MIX:", len(MIX), {n: MIX.count(n) for n in dict.fromkeys(MIX)})
