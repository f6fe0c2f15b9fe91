"""One class per concept per protocol version, whatever surface a connection speaks.

``acp_schema.vN`` holds the unstable schema's types (a superset of the
stable one) with both surfaces' method tables; ``unstable=True`` switches
tables, never classes. So user code matches the same classes everywhere,
and a stable connection keeps what real agents already send from the
preview (``sessionCapabilities.fork``, ``mcpCapabilities.acp``,
``PromptResponse.usage``).
"""

from __future__ import annotations

from typing import Any

import acp_trio
import msgspec
import pytest
import trio
import trio.testing
from _acp_helpers import INIT_V1, RawPeer
from acp_schema import v1, v1_unstable
from acp_schema import v2_alpha0 as v2


class MatchingClient:
    """Records the updates it receives, matched against the stable classes."""

    def __init__(self, conn: acp_trio.ClientSideConnection[Any]) -> None:
        self.matched: list[str] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        match params.update:
            case v1.AgentMessageChunk(content=v1.TextContent(text=text)):
                self.matched.append(text)
            case _:
                self.matched.append(f"unmatched {type(params.update).__name__}")


@pytest.mark.parametrize("unstable", [False, True], ids=["stable", "unstable"])
async def test_an_unstable_connection_delivers_the_same_classes(
    unstable: bool,
) -> None:
    ours, theirs = trio.testing.memory_stream_pair()
    async with acp_trio.connect_to_agent(
        ours, MatchingClient, unstable=unstable
    ) as conn:
        peer = RawPeer(theirs)
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
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
        }
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": update},
            }
        )
        # a request after the notification: answered once the update was handled
        reply = await peer.call(9, "session/request_permission", {})
        assert "error" in reply
        assert isinstance(conn.client, MatchingClient)
        assert conn.client.matched == ["hi"]


async def test_a_stable_connection_keeps_the_fields_in_preview() -> None:
    """What claude-agent-acp, opencode and codex-acp send on a stable connection."""
    ours, theirs = trio.testing.memory_stream_pair()
    async with acp_trio.connect_to_agent(ours, MatchingClient) as conn:
        peer = RawPeer(theirs)
        capabilities = {
            "sessionCapabilities": {"fork": {}},
            "mcpCapabilities": {"http": True, "acp": True},
        }
        async with trio.open_nursery() as nursery:

            async def answer() -> None:
                request = await peer.receive()
                result = {"protocolVersion": 1, "agentCapabilities": capabilities}
                await peer.send(
                    {"jsonrpc": "2.0", "id": request["id"], "result": result}
                )
                request = await peer.receive()
                result = {
                    "stopReason": "end_turn",
                    "usage": {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
                }
                await peer.send(
                    {"jsonrpc": "2.0", "id": request["id"], "result": result}
                )

            nursery.start_soon(answer)
            init = await conn.agent.initialize(INIT_V1)
            response = await conn.agent.session_prompt(
                v1.PromptRequest(session_id="s", prompt=[])
            )
        caps = init.agent_capabilities
        assert isinstance(caps.session_capabilities.fork, v1.SessionForkCapabilities)
        assert caps.mcp_capabilities.acp is True
        assert isinstance(response.usage, v1.Usage)
        assert response.usage.total_tokens == 12
        # re-encoded as received
        assert msgspec.json.decode(v1.encode(caps)) == capabilities


def test_the_unstable_module_names_the_same_objects() -> None:
    assert v1_unstable.AgentMessageChunk is v1.AgentMessageChunk
    assert v1_unstable.SessionNotification is v1.SessionNotification
    assert v1_unstable.AGENT_METHODS["session/fork"].params is v1.ForkSessionRequest
    assert "session/fork" not in v1.AGENT_METHODS


def test_a_reshaped_type_takes_the_unstable_shape() -> None:
    """v2 `SetSessionConfigOptionRequest`: stable draft an object with a string
    `value`, unstable a union on `type` (`boolean` with a bool value, else a
    value id). The unstable shape is generated: every stable message decodes
    (as the value-id variant, re-encoded unchanged) and the boolean form too."""
    stable = b'{"sessionId":"s","configId":"mode","value":"fast"}'
    method = v2.AGENT_METHODS["session/set_config_option"]
    decoded = v2.decode(stable, method.params)
    assert isinstance(decoded, v2.SetSessionConfigOptionRequestValueId)
    assert decoded.value == "fast"
    assert v2.encode(decoded) == stable
    boolean = b'{"sessionId":"s","configId":"x","type":"boolean","value":true}'
    decoded = v2.decode(boolean, method.params)
    assert isinstance(decoded, v2.SetSessionConfigOptionRequestBoolean)
    assert msgspec.json.decode(v2.encode(decoded)) == msgspec.json.decode(boolean)
    assert "SetSessionConfigOptionRequest" in (v2.__doc__ or "")
