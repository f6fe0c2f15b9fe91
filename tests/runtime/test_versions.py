"""Version negotiation and capability checks (seed 004)."""

from __future__ import annotations

from typing import Any, ClassVar

import acp_trio
import msgspec
import pytest
import trio
import trio.testing
from _acp_helpers import (
    INIT_V1,
    EchoAgent,
    EchoAgentV2,
    RawPeer,
    RecordingClient,
    connected,
    raw_agent_of,
    raw_client_of,
    text_prompt,
)
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


class V2Client:
    acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

    def __init__(self, conn: acp_trio.ClientSideConnection) -> None:
        pass


@pytest.mark.parametrize(
    ("requested", "offered", "answered"),
    [
        (1, {1, 2}, 1),
        (2, {1, 2}, 2),
        (3, {1, 2}, 2),
        (1, {2}, 2),
        (2, {1}, 1),
        ("x", {1}, 1),
    ],
)
async def test_initialize_answers_the_requested_version_if_offered_else_the_latest(
    requested: Any, offered: set[int], answered: int
) -> None:
    agents = {1: EchoAgent, 2: EchoAgentV2}
    async with raw_client_of({v: agents[v] for v in offered}) as peer:
        reply = await peer.call(0, "initialize", {"protocolVersion": requested})
        if requested == "x":  # negotiated, then the params fail their type
            assert reply["error"]["code"] == -32602
        else:
            assert reply["result"]["protocolVersion"] == answered


async def test_the_connection_then_decodes_with_the_negotiated_tables() -> None:
    async with raw_client_of({1: EchoAgent, 2: EchoAgentV2}) as peer:
        await peer.initialize(2)
        reply = await peer.call(
            1,
            "session/new",
            {
                "cwd": "/",
                "mcpServers": [
                    {
                        "type": "stdio",
                        "name": "t",
                        "command": "/x",
                        "args": [],
                        "env": [],
                    }
                ],
            },
        )
        assert reply["result"] == {"sessionId": "sess_v2"}


class WrongVersionAgent(EchoAgent):
    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=7)


async def test_the_agent_cannot_answer_another_version_than_negotiated() -> None:
    async with raw_client_of(WrongVersionAgent) as peer:
        assert (await peer.initialize())["result"]["protocolVersion"] == 1


async def test_a_client_continues_in_the_version_it_gets() -> None:
    async with connected({1: EchoAgent}, {1: RecordingClient, 2: V2Client}) as (
        conn,
        _,
    ):
        init = await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
        assert isinstance(init, v1.InitializeResponse)
        assert conn.protocol_version == 1 and isinstance(conn.client, RecordingClient)
        s = await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
        assert isinstance(s, v1.NewSessionResponse)


async def test_a_client_fails_clearly_when_it_cannot_speak_the_answered_version() -> (
    None
):
    async with connected({2: EchoAgentV2}, {1: RecordingClient}) as (conn, _):
        with pytest.raises(acp_trio.ProtocolVersionError, match="version 2"):
            await conn.agent.initialize(INIT_V1)
        with pytest.raises(acp_trio.ConnectionClosed):
            await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))


# -- capabilities ---------------------------------------------------------------------


async def _initialized(
    peer: Any, conn: acp_trio.ClientSideConnection, result: bytes
) -> None:
    async def answer() -> None:
        request = await peer.receive()
        await peer.send(
            b'{"jsonrpc":"2.0","id":%d,"result":%b}' % (request["id"], result)
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer)
        await conn.agent.initialize(INIT_V1)


STDIO = v1.McpServerStdio(name="t", command="/bin/tool", args=[], env=[])
HTTP = v1.McpServerHttp(name="h", url="https://x", headers=[])
IMAGE = v1.ImageContent(data="AA==", mime_type="image/png")
RESOURCE = v1.EmbeddedResource(
    resource=v1.TextResourceContents(text="x", uri="file:///a")
)

REFUSED_V1 = [
    ("session_load", v1.LoadSessionRequest(session_id="s", cwd="/", mcp_servers=[])),
    ("session_resume", v1.ResumeSessionRequest(session_id="s", cwd="/")),
    ("session_close", v1.CloseSessionRequest(session_id="s")),
    ("session_list", v1.ListSessionsRequest()),
    (
        "session_new",
        v1.NewSessionRequest(cwd="/", mcp_servers=[], additional_directories=["/a"]),
    ),
    ("session_new", v1.NewSessionRequest(cwd="/", mcp_servers=[HTTP])),
    ("session_prompt", v1.PromptRequest(session_id="s", prompt=[IMAGE])),
    ("session_prompt", v1.PromptRequest(session_id="s", prompt=[RESOURCE])),
]


@pytest.mark.parametrize(("handler", "params"), REFUSED_V1, ids=lambda x: str(x)[:40])
async def test_the_client_refuses_locally_calls_the_agent_did_not_advertise(
    handler: str, params: Any
) -> None:
    async with raw_agent_of(RecordingClient) as (conn, peer):
        await _initialized(peer, conn, b'{"protocolVersion":1}')
        with pytest.raises(acp_trio.CapabilityError):
            await getattr(conn.agent, handler)(params)
        await conn.agent.ext_notification("_marker", {})
        assert (await peer.receive())["method"] == "_marker"  # nothing else was sent


async def test_advertised_capabilities_let_the_same_calls_through() -> None:
    caps = (
        b'{"protocolVersion":1,"agentCapabilities":{"loadSession":true,'
        b'"promptCapabilities":{"image":true,"embeddedContext":true},'
        b'"mcpCapabilities":{"http":true},"sessionCapabilities":{"resume":{},'
        b'"close":{},"list":{},"additionalDirectories":{}}}}'
    )
    async with raw_agent_of(RecordingClient) as (conn, peer):
        await _initialized(peer, conn, caps)
        for handler, params in REFUSED_V1:

            async def call(handler: str = handler, params: Any = params) -> None:
                with pytest.raises(acp_trio.RequestError, match="stop here"):
                    await getattr(conn.agent, handler)(params)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(call)
                request = await peer.receive()
                assert request["params"] == msgspec.to_builtins(params)
                await peer.send(
                    {
                        "jsonrpc": "2.0",
                        "id": request["id"],
                        "error": {"code": -32603, "message": "stop here"},
                    }
                )


async def test_v2_capabilities_are_read_from_the_session_object() -> None:
    async with raw_agent_of({2: V2Client}) as (conn, peer):

        async def answer() -> None:
            request = await peer.receive()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {
                        "protocolVersion": 2,
                        "capabilities": {"session": {"mcp": {"http": {}}}},
                    },
                }
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
        stdio = v2.McpServerStdio(name="t", command="/bin/t", args=[], env=[])
        with pytest.raises(acp_trio.CapabilityError, match="stdio"):
            await conn.agent.session_new(
                v2.NewSessionRequest(cwd="/", mcp_servers=[stdio])
            )
        with pytest.raises(acp_trio.CapabilityError, match="session/load"):
            await conn.agent.session_load(
                v2.LoadSessionRequest(session_id="s", cwd="/", mcp_servers=[])
            )


class ToolAgent(EchoAgent):
    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        with pytest.raises(acp_trio.CapabilityError, match="fs/read_text_file"):
            await self.client.fs_read_text_file(
                v1.ReadTextFileRequest(session_id=params.session_id, path="/a")
            )
        with pytest.raises(acp_trio.CapabilityError, match="terminal"):
            await self.client.terminal_create(
                v1.CreateTerminalRequest(session_id=params.session_id, command="ls")
            )
        return v1.PromptResponse(stop_reason="end_turn")


async def test_the_agent_refuses_client_methods_the_client_did_not_advertise() -> None:
    async with connected(ToolAgent, RecordingClient) as (conn, _):
        await conn.agent.initialize(INIT_V1)
        result = await conn.agent.session_prompt(text_prompt("s"))
        assert result.stop_reason == "end_turn"


RELATIVE = [
    v1.NewSessionRequest(cwd="project", mcp_servers=[]),
    v1.NewSessionRequest(cwd="/p", mcp_servers=[], additional_directories=["/a", "b"]),
    v1.NewSessionRequest(
        cwd="/p",
        mcp_servers=[v1.McpServerStdio(name="t", command="tool", args=[], env=[])],
    ),
]


@pytest.mark.parametrize(
    "params", RELATIVE, ids=["cwd", "additionalDirectories", "command"]
)
async def test_relative_paths_are_refused_at_the_sender(
    params: v1.NewSessionRequest,
) -> None:
    async with connected(EchoAgent, RecordingClient) as (conn, _):
        with pytest.raises(acp_trio.RequestError) as info:
            await conn.agent.session_new(params)
        assert info.value.code == -32602


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"cwd": "project", "mcpServers": []}, "$.params.cwd"),
        (
            {"cwd": "/p", "additionalDirectories": ["/a", "b"], "mcpServers": []},
            "$.params.additionalDirectories[1]",
        ),
        (
            {
                "cwd": "/p",
                "mcpServers": [{"name": "t", "command": "tool", "args": [], "env": []}],
            },
            "$.params.mcpServers[0].command",
        ),
    ],
)
async def test_relative_paths_are_answered_invalid_params_at_the_receiver(
    params: dict[str, Any], path: str
) -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        reply = await peer.call(1, "session/new", params)
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"]["path"] == path


# -- typed views -------------------------------------------------------------------------


async def test_the_typed_views_check_the_negotiated_version() -> None:
    async with connected({1: EchoAgent}, {1: RecordingClient, 2: V2Client}) as (
        conn,
        agent_conn,
    ):
        assert conn.agent_v2 is conn.agent  # before initialize: the highest offered
        await conn.agent_v2.initialize(v2.InitializeRequest(protocol_version=2))
        assert conn.protocol_version == 1
        with pytest.raises(acp_trio.ProtocolVersionError, match="speaks protocol v1"):
            conn.agent_v2  # noqa: B018
        s = await conn.agent_v1.session_new(
            v1.NewSessionRequest(cwd="/", mcp_servers=[])
        )
        assert isinstance(s, v1.NewSessionResponse)
        assert agent_conn.client_v1 is agent_conn.client
        with pytest.raises(acp_trio.ProtocolVersionError):
            agent_conn.client_v2  # noqa: B018


# -- custom MCP transports (v2) ----------------------------------------------------------


class McpAgentV2:
    """Advertises stdio MCP servers only; records what session/new received."""

    acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

    servers: ClassVar[list[Any]] = []

    def __init__(self, conn: acp_trio.AgentSideConnection[v2.Client]) -> None:
        pass

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        mcp = v2.McpCapabilities(stdio=v2.McpStdioCapabilities())
        return v2.InitializeResponse(
            protocol_version=2,
            capabilities=v2.AgentCapabilities(session=v2.SessionCapabilities(mcp=mcp)),
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        McpAgentV2.servers = list(params.mcp_servers)
        return v2.NewSessionResponse(session_id="s")


CUSTOM_MCP = {
    "type": "_acme_ws",
    "name": "remote",
    "url": "wss://tools.example/mcp",
    "auth": {"token": "t", "scopes": ["a", "b"]},
}


async def test_custom_underscore_mcp_transports_pass_through_untouched() -> None:
    McpAgentV2.servers = []
    async with connected({2: McpAgentV2}, {2: V2Client}) as (conn, _):
        await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
        custom = v2.McpServerOther(CUSTOM_MCP)
        await conn.agent.session_new(
            v2.NewSessionRequest(cwd="/", mcp_servers=[custom])
        )
        [received] = McpAgentV2.servers
        assert isinstance(received, v2.McpServerOther) and received == CUSTOM_MCP


async def test_unknown_non_underscore_mcp_transports_are_refused_locally() -> None:
    async with connected({2: McpAgentV2}, {2: V2Client}) as (conn, _):
        await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
        future = v2.McpServerOther({"type": "websocket", "name": "w", "url": "ws://x"})
        with pytest.raises(acp_trio.CapabilityError, match="websocket"):
            await conn.agent.session_new(
                v2.NewSessionRequest(cwd="/", mcp_servers=[future])
            )


# -- elicitation, per mode (v1) ----------------------------------------------------------

FORM = {
    "mode": "form",
    "message": "Your name?",
    "sessionId": "s1",
    "requestedSchema": {"type": "object", "properties": {}},
}
URL = {
    "mode": "url",
    "message": "Sign in",
    "sessionId": "s1",
    "elicitationId": "e1",
    "url": "https://auth.example/start",
}
CUSTOM_MODE = {"mode": "_acme_voice", "message": "Say it", "sessionId": "s1"}
FUTURE_MODE = {"mode": "voice", "message": "Say it", "sessionId": "s1"}
COMPLETE = {"elicitationId": "e1"}


@pytest.mark.parametrize(
    ("elicitation", "method", "params", "allowed"),
    [
        ({"form": {}}, "elicitation/create", FORM, True),
        ({"form": {}}, "elicitation/create", URL, False),
        ({"url": {}}, "elicitation/create", FORM, False),
        ({"url": {}}, "elicitation/create", URL, True),
        ({"form": {}, "url": {}}, "elicitation/create", URL, True),
        ({}, "elicitation/create", FORM, False),
        ({"form": None, "url": None}, "elicitation/create", URL, False),
        (None, "elicitation/create", FORM, False),
        ({}, "elicitation/create", CUSTOM_MODE, True),
        (None, "elicitation/create", CUSTOM_MODE, False),
        ({"form": {}, "url": {}}, "elicitation/create", FUTURE_MODE, False),
        ({"form": {}}, "elicitation/complete", COMPLETE, False),
        ({"url": {}}, "elicitation/complete", COMPLETE, True),
    ],
    ids=lambda x: str(x)[:24],
)
async def test_the_agent_refuses_elicitation_modes_the_client_did_not_advertise(
    elicitation: Any, method: str, params: dict[str, Any], allowed: bool
) -> None:
    caps: dict[str, Any] = {} if elicitation is None else {"elicitation": elicitation}
    async with trio.open_nursery() as nursery:
        a, b = acp_trio.memory_stream_pair()
        agent_conn = await nursery.start(acp_trio.serve_agent, a, EchoAgent)
        peer = RawPeer(b)
        init = {"protocolVersion": 1, "clientCapabilities": caps}
        assert "result" in await peer.call(0, "initialize", init)
        spec = agent_conn.schema.outgoing[method]
        typed = v1.decode(msgspec.json.encode(params), spec.params)
        call = getattr(agent_conn.client, spec.handler)
        if not allowed:
            with trio.fail_after(5), pytest.raises(acp_trio.CapabilityError):
                await call(typed)
            await agent_conn.ext_notify("_marker", {})
            assert (await peer.receive())["method"] == "_marker"  # nothing else sent
        else:
            async with trio.open_nursery() as calls:
                calls.start_soon(call, typed)
                sent = await peer.receive()
                assert sent["method"] == method and sent["params"] == params
                if "id" in sent:
                    await peer.send(
                        {
                            "jsonrpc": "2.0",
                            "id": sent["id"],
                            "result": {"action": "decline"},
                        }
                    )
        nursery.cancel_scope.cancel()


class ElicitedClient(RecordingClient):
    async def elicitation_create(
        self, params: v1.CreateElicitationRequest
    ) -> v1.CreateElicitationResponse:
        return v1.CreateElicitationResponseDecline()


async def test_the_client_answers_invalid_params_to_a_mode_it_did_not_advertise() -> (
    None
):
    form_only = v1.ClientCapabilities(
        elicitation=v1.ElicitationCapabilities(form=v1.ElicitationFormCapabilities())
    )
    async with raw_agent_of(ElicitedClient) as (conn, peer):

        async def answer() -> None:
            request = await peer.receive()
            assert request["params"]["clientCapabilities"] == {
                "elicitation": {"form": {}}
            }
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {"protocolVersion": 1},
                }
            )

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer)
            await conn.agent.initialize(
                v1.InitializeRequest(protocol_version=1, client_capabilities=form_only)
            )
        reply = await peer.call(1, "elicitation/create", URL)
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"]["path"] == "$.params.mode"
        assert "url" in reply["error"]["data"]["message"]
        reply = await peer.call(2, "elicitation/create", FORM)
        assert reply["result"] == {"action": "decline"}
