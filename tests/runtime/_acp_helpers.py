"""Agents, clients and a raw-bytes peer shared by the runtime tests."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import acp_trio
import msgspec
import trio
from acp_schema import v1
from acp_schema import v2_alpha0 as v2
from acp_trio._framing import LineReader

HERE = os.path.dirname(os.path.abspath(__file__))
ECHO_AGENT = os.path.join(HERE, "echo_agent.py")
PYTHON = sys.executable


class EchoAgent:
    """A v1 agent: echoes each text block of a prompt as an agent_message_chunk."""

    capabilities = v1.AgentCapabilities(load_session=False)

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.conn = conn
        self.client = conn.client
        self.sessions = 0
        self.seen: list[Any] = []

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1, agent_capabilities=self.capabilities
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        self.sessions += 1
        return v1.NewSessionResponse(session_id=f"sess_{self.sessions}")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.seen.append(params)
        for block in params.prompt:
            if isinstance(block, v1.TextContent):
                await self.client.session_update(chunk(params.session_id, block.text))
        return v1.PromptResponse(stop_reason="end_turn", meta=params.meta)

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"method": method, "params": params}


class EchoAgentV2:
    """The same agent for protocol v2."""

    acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

    def __init__(self, conn: acp_trio.AgentSideConnection[v2.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        return v2.InitializeResponse(protocol_version=2)

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id="sess_v2")


def chunk(session_id: str, text: str) -> v1.SessionNotification:
    return v1.SessionNotification(
        session_id=session_id,
        update=v1.AgentMessageChunk(content=v1.TextContent(text=text)),
    )


def text_prompt(session_id: str, *texts: str) -> v1.PromptRequest:
    return v1.PromptRequest(
        session_id=session_id, prompt=[v1.TextContent(text=t) for t in texts]
    )


class RecordingClient:
    """A v1 client recording every session/update it handles."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.conn = conn
        self.updates: list[v1.SessionNotification] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.updates.append(params)

    def texts(self) -> list[str]:
        return [u.update.content.text for u in self.updates]  # type: ignore[union-attr]


INIT_V1 = v1.InitializeRequest(protocol_version=1)


def pipe_pair() -> tuple[trio.StapledStream[Any, Any], trio.StapledStream[Any, Any]]:
    """Two ends of a connection over two real pipes (``FdStream``s, as stdio uses)."""
    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    a = trio.StapledStream(
        trio.lowlevel.FdStream(a_write), trio.lowlevel.FdStream(a_read)
    )
    b = trio.StapledStream(
        trio.lowlevel.FdStream(b_write), trio.lowlevel.FdStream(b_read)
    )
    return a, b


class RawPeer:
    """The other end of a connection, speaking bytes."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.reader = LineReader(stream)

    async def send(self, data: bytes | Any) -> None:
        if not isinstance(data, bytes):
            data = msgspec.json.encode(data)
        await self.stream.send_all(data + b"\n")

    async def receive(self) -> Any:
        with trio.fail_after(5):
            line = await self.reader.receive_line()
        assert isinstance(line, bytes), line
        return msgspec.json.decode(line)

    async def call(self, ident: Any, method: str, params: Any) -> Any:
        await self.send(
            {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        )
        return await self.receive()

    async def initialize(self, version: int = 1) -> Any:
        return await self.call(0, "initialize", {"protocolVersion": version})


@asynccontextmanager
async def raw_client_of(agents: acp_trio.Offer) -> AsyncIterator[RawPeer]:
    """An agent served over the in-memory seam; the test holds the client end."""
    ours, theirs = acp_trio.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        await nursery.start(acp_trio.serve_agent, ours, agents)
        yield RawPeer(theirs)
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def raw_agent_of(
    client: acp_trio.Offer,
) -> AsyncIterator[tuple[acp_trio.ClientSideConnection, RawPeer]]:
    """A client connection whose agent end the test speaks as raw bytes."""
    ours, theirs = acp_trio.memory_stream_pair()
    async with acp_trio.connect_to_agent(ours, client) as conn:
        yield conn, RawPeer(theirs)


async def initialize_raw(
    conn: acp_trio.ClientSideConnection[Any], peer: RawPeer
) -> None:
    """Have ``conn`` send ``initialize`` and ``peer`` answer it (protocol v1)."""
    async with trio.open_nursery() as nursery:

        async def answer() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"protocolVersion": 1},
                }
            )

        nursery.start_soon(answer)
        await conn.agent.initialize(INIT_V1)


@asynccontextmanager
async def connected(
    agents: acp_trio.Offer, client: acp_trio.Offer
) -> AsyncIterator[tuple[acp_trio.ClientSideConnection, acp_trio.AgentSideConnection]]:
    """A client and an agent connection over the in-memory seam."""
    a, b = acp_trio.memory_stream_pair()
    async with acp_trio.connect_to_client(a, agents) as agent_conn:
        async with acp_trio.connect_to_agent(b, client) as client_conn:
            yield client_conn, agent_conn
