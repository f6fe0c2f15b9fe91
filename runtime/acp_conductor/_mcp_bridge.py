"""The conductor's MCP bridge: stdio MCP clients of the agent, relayed as ``mcp/message``.

For an agent that does not advertise ``mcpCapabilities.acp`` the router
rewrites each ``"type": "acp"`` server of a session setup into a stdio server
running :mod:`._mcp_shim` (``bridge.command(server_id)``).  Each shim
connects to this bridge's Unix socket (in a fresh directory only this user
can enter) and names its server; the bridge turns each MCP request line it
relays into an ``mcp/message`` request, written on the bridge's hop of the
chain (:data:`~._routing.BRIDGE`, a stream in memory), and each answer back
into the MCP response line: ``{"result": ...}`` the result, ``{"error":
...}`` or an outer ACP error an MCP error.  The provider's ``mcp/message``
notifications for a request go to the shim that sent it.

Older MCP clients open with the ``initialize`` handshake, which MCP
2026-07-28 (the binding's revision) does not have: the bridge answers it
from the server's ``server/discover`` and stamps the 2026-07-28 envelope
(``params._meta``) on the requests that follow.  MCP notifications from
the agent (``notifications/initialized``, cancellation) have no carrier in
the schema and are dropped.

Bounds: ``max_active`` requests in flight per shim (past it an MCP error,
-33000); lines of at most ``limits.max_message_size`` bytes.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import msgspec
import trio
from acp_core import Limits, LineBuffer, Oversized
from acp_host import socket_directory

__all__ = ["DEFAULT_BRIDGE_MAX_ACTIVE", "McpBridge"]

log = logging.getLogger("acp_conductor.mcp")

#: MCP requests one shim may have in flight.
DEFAULT_BRIDGE_MAX_ACTIVE: Final = 64
SHIM: Final = str(Path(__file__).with_name("_mcp_shim.py"))
MCP_VERSION: Final = "2026-07-28"
_VERSION_KEY: Final = "io.modelcontextprotocol/protocolVersion"
_CAPS_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
_INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
_SERVER_INFO_KEY: Final = "io.modelcontextprotocol/serverInfo"
_RESOURCE_LIMIT: Final = -33000
_PARSE_ERROR: Final = -32700

_decode = msgspec.json.Decoder(Any)
_encode = msgspec.json.encode


def _obj(value: Any) -> dict[str, Any] | None:
    """``value`` if it is a JSON object."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


@dataclass(slots=True)
class _Shim:
    number: int
    stream: trio.SocketStream
    server_id: str = ""
    lock: trio.Lock = field(default_factory=trio.Lock)
    active: int = 0
    # set by a legacy ``initialize``: the envelope stamped on later requests
    envelope: dict[str, Any] | None = None

    async def write(self, message: dict[str, Any]) -> None:
        async with self.lock:
            try:
                await self.stream.send_all(_encode(message) + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass


@dataclass(slots=True)
class _Call:
    shim: _Shim
    mcp_id: Any
    handshake: str | None  # the protocol version of a legacy ``initialize``


class McpBridge:
    """The bridge of one chain: a Unix socket for the shims, a stream for the router."""

    def __init__(
        self, limits: Limits, *, max_active: int = DEFAULT_BRIDGE_MAX_ACTIVE
    ) -> None:
        self.limits = limits
        self.max_active = max_active
        self.directory = socket_directory("acp-mcp-", "bridge.sock")  # mode 0700
        self.path = os.path.join(self.directory, "bridge.sock")
        self._calls: dict[int, _Call] = {}
        self._shims: dict[int, _Shim] = {}
        self._next = 0
        self._router: trio.abc.Stream | None = None
        self._router_lock = trio.Lock()

    def command(self, server_id: str) -> list[str]:
        """The stdio server the agent runs in place of ``server_id``."""
        return [sys.executable, SHIM, self.path, server_id]

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    async def run(self, router: trio.abc.Stream) -> None:
        """Serve shims until cancelled; ``router`` is the bridge's hop."""
        self._router = router
        sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
        try:
            await sock.bind(self.path)
            sock.listen(16)
            listener = trio.SocketListener(sock)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._answers, router)
                await trio.serve_listeners(self._serve_shim, [listener])
        finally:
            sock.close()
            self.close()

    # -- shims -> router -------------------------------------------------------

    async def _serve_shim(self, stream: trio.SocketStream) -> None:
        self._next += 1
        shim = _Shim(self._next, stream)
        self._shims[shim.number] = shim
        lines = LineBuffer(max_message_size=self.limits.max_message_size)
        try:
            while True:
                try:
                    chunk = await stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    chunk = b""
                for line in lines.feed(chunk) if chunk else lines.feed_eof():
                    if isinstance(line, Oversized):
                        await shim.write(_error(None, _PARSE_ERROR, "message too long"))
                    elif not shim.server_id:
                        shim.server_id = _server_id(line)
                        if not shim.server_id:
                            return
                    else:
                        await self._from_shim(shim, line)
                if not chunk:
                    return
        finally:
            del self._shims[shim.number]
            await trio.aclose_forcefully(stream)

    async def _from_shim(self, shim: _Shim, line: bytes) -> None:
        try:
            message = _obj(_decode.decode(line))
        except msgspec.MsgspecError:
            message = None
        if message is None:
            await shim.write(_error(None, _PARSE_ERROR, "Parse error"))
            return
        method = message.get("method")
        if not isinstance(method, str):
            return  # a response: MCP 2026-07-28 servers send no requests
        if "id" not in message:
            return  # a notification: no carrier in the schema
        mcp_id: Any = message["id"]
        params = dict(_obj(message.get("params")) or {})
        handshake: str | None = None
        if method == "initialize":
            version = params.get("protocolVersion")
            handshake = version if isinstance(version, str) else MCP_VERSION
            shim.envelope = {_CAPS_KEY: _obj(params.get("capabilities")) or {}}
            info = _obj(params.get("clientInfo"))
            if info is not None:
                shim.envelope[_INFO_KEY] = info
            method, params = "server/discover", {}
        meta = dict(_obj(params.get("_meta")) or {})
        if _VERSION_KEY not in meta:
            meta[_VERSION_KEY] = MCP_VERSION
            for key, value in (shim.envelope or {_CAPS_KEY: {}}).items():
                meta.setdefault(key, value)
        params["_meta"] = meta
        if shim.active >= self.max_active:
            await shim.write(
                _error(
                    mcp_id,
                    _RESOURCE_LIMIT,
                    f"more than {self.max_active} MCP requests in flight",
                )
            )
            return
        shim.active += 1
        self._next += 1
        ident = self._next
        self._calls[ident] = _Call(shim, mcp_id, handshake)
        request = {
            "jsonrpc": "2.0",
            "id": ident,
            "method": "mcp/message",
            "params": {
                "serverId": shim.server_id,
                "requestId": f"{shim.number}/{_encode(mcp_id).decode()}",
                "method": method,
                "params": params,
            },
        }
        assert self._router is not None
        async with self._router_lock:
            await self._router.send_all(_encode(request) + b"\n")

    # -- router -> shims -------------------------------------------------------

    async def _answers(self, router: trio.abc.Stream) -> None:
        lines = LineBuffer(max_message_size=self.limits.max_message_size)
        while True:
            try:
                chunk = await router.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            for line in lines.feed(chunk) if chunk else lines.feed_eof():
                if not isinstance(line, Oversized):
                    await self._from_router(line)
            if not chunk:
                return

    async def _from_router(self, line: bytes) -> None:
        try:
            message = _obj(_decode.decode(line))
        except msgspec.MsgspecError:
            return
        if message is None:
            return
        if "method" in message:  # a provider's notification for a request
            params = _obj(message.get("params"))
            if params is None:
                return
            number, _, _ = str(params.get("requestId", "")).partition("/")
            shim = self._shims.get(int(number)) if number.isdigit() else None
            method = params.get("method")
            if shim is not None and isinstance(method, str):
                note: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
                inner = _obj(params.get("params"))
                if inner is not None:
                    note["params"] = inner
                await shim.write(note)
            return
        ident = message.get("id")
        call = self._calls.pop(ident, None) if isinstance(ident, int) else None
        if call is None:
            return
        call.shim.active -= 1
        await call.shim.write(_mcp_answer(call, message))


def _server_id(line: bytes) -> str:
    try:
        first = _obj(_decode.decode(line))
    except msgspec.MsgspecError:
        return ""
    ident = first.get("serverId") if first is not None else None
    return ident if isinstance(ident, str) else ""


def _error(mcp_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": mcp_id, "error": error}


def _mcp_answer(call: _Call, message: dict[str, Any]) -> dict[str, Any]:
    """The MCP response for the answer ``message`` to ``call``'s ``mcp/message``."""
    outer = _obj(message.get("error"))
    if outer is not None:
        code = outer.get("code")
        return _error(
            call.mcp_id,
            code if isinstance(code, int) else -32603,
            str(outer.get("message", "")),
            outer.get("data"),
        )
    carrier = _obj(message.get("result"))
    if carrier is not None and "result" in carrier:
        result: Any = carrier["result"]
        discover = _obj(result)
        if call.handshake is not None and discover is not None:
            result = _initialize_result(call.handshake, discover)
        return {"jsonrpc": "2.0", "id": call.mcp_id, "result": result}
    inner = _obj(carrier.get("error")) if carrier is not None else None
    if inner is not None:
        return {"jsonrpc": "2.0", "id": call.mcp_id, "error": inner}
    return _error(call.mcp_id, -33002, "invalid mcp/message answer")


def _initialize_result(version: str, discover: dict[str, Any]) -> dict[str, Any]:
    """A handshake's ``initialize`` result from the server's ``server/discover``."""
    meta = _obj(discover.get("_meta")) or {}
    info = _obj(meta.get(_SERVER_INFO_KEY))
    result: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": _obj(discover.get("capabilities")) or {},
        "serverInfo": info or {"name": "acp", "version": ""},
    }
    instructions = discover.get("instructions")
    if isinstance(instructions, str):
        result["instructions"] = instructions
    return result
