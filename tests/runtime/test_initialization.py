"""Initialization rules: nothing before ``initialize``, no second one.

The agent refuses the client's requests until it answered ``initialize``;
the client refuses the agent's until it received that answer.

Refusals are -32600 (Invalid Request): the request is well formed but not
valid in the connection's state.  Neither schema defines a "not initialized"
code, and the nearby ones mean something else to a client (-32000 is
"authentication required", -32002 "resource not found" in ACP, unlike LSP's
-32002 "server not initialized").
"""

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
    chunk,
    raw_agent_of,
    raw_client_of,
)
from acp_schema import v1

NEW = {"cwd": "/", "mcpServers": []}


async def test_requests_before_initialize_are_refused_invalid_request() -> None:
    async with raw_client_of(EchoAgent) as peer:
        for ident, method in enumerate(["session/new", "_acme/echo", "no/such"]):
            reply = await peer.call(ident, method, NEW)
            assert reply["id"] == ident
            assert reply["error"]["code"] == -32600, reply
            assert "not initialized" in reply["error"]["message"]
            assert reply["error"]["data"] == {"method": method}
        # the connection keeps working: initialize, then the same request succeeds
        assert (await peer.initialize())["result"]["protocolVersion"] == 1
        assert (await peer.call(9, "session/new", NEW))["result"] == {
            "sessionId": "sess_1"
        }


class CountingAgent(EchoAgent):
    instances = 0
    cancels: ClassVar[list[str]] = []

    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        super().__init__(conn)
        CountingAgent.instances += 1

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        self.cancels.append(params.session_id)


async def test_notifications_before_initialize_are_dropped() -> None:
    CountingAgent.cancels = []
    async with raw_client_of(CountingAgent) as peer:
        note = {"jsonrpc": "2.0", "method": "session/cancel"}
        await peer.send({**note, "params": {"sessionId": "early"}})
        await peer.initialize()
        await peer.send({**note, "params": {"sessionId": "late"}})
        await peer.call(1, "session/new", NEW)  # handled after the notification
        assert CountingAgent.cancels == ["late"]


async def test_a_second_initialize_is_refused_and_does_not_renegotiate() -> None:
    CountingAgent.instances = 0
    async with trio.open_nursery() as nursery:
        a, b = acp_trio.memory_stream_pair()
        conn = await nursery.start(
            acp_trio.serve_agent, a, {1: CountingAgent, 2: EchoAgentV2}
        )
        peer = RawPeer(b)
        assert (await peer.initialize(2))["result"]["protocolVersion"] == 2
        reply = await peer.initialize(1)
        assert reply["error"]["code"] == -32600
        assert "already initialized" in reply["error"]["message"]
        assert conn.protocol_version == 2 and CountingAgent.instances == 0
        # still speaking v2
        reply = await peer.call(1, "session/new", NEW)
        assert reply["result"] == {"sessionId": "sess_v2"}
        nursery.cancel_scope.cancel()


async def test_requests_pipelined_before_the_initialize_answer_wait_for_it() -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.send(
            [
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}},
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": 1},
                },
                {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": NEW},
            ]
        )
        by_id = {r["id"]: r for r in await peer.receive()}
        assert by_id[0]["error"]["code"] == -32602  # no protocolVersion: not started
        assert by_id[1]["result"]["protocolVersion"] == 1
        assert "result" in by_id[2]  # waited for the initialize answer


class FlakyAgent(EchoAgent):
    attempts = 0

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        FlakyAgent.attempts += 1
        if FlakyAgent.attempts == 1:
            raise acp_trio.RequestError(-32000, "Authentication required")
        return await super().initialize(params)


async def test_a_failed_initialize_can_be_retried_and_renegotiates() -> None:
    FlakyAgent.attempts = 0
    async with raw_client_of({1: FlakyAgent, 2: EchoAgentV2}) as peer:
        assert (await peer.initialize(1))["error"]["code"] == -32000
        assert (await peer.call(1, "session/new", NEW))["error"]["code"] == -32600
        assert (await peer.initialize(2))["result"]["protocolVersion"] == 2
        assert (await peer.call(2, "session/new", NEW))["result"] == {
            "sessionId": "sess_v2"
        }


# -- the client side: the agent may call the client only once initialize was answered


class ServingClient(RecordingClient):
    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id="ok")
        )

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"echo": params}


PERMISSION = {
    "sessionId": "s",
    "toolCall": {"toolCallId": "t"},
    "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
}


async def test_agent_requests_before_the_initialize_answer_are_refused() -> None:
    async with raw_agent_of(ServingClient) as (conn, peer):
        calls = [("session/request_permission", PERMISSION), ("_acme/echo", {})]
        calls.append(("no/such", {}))
        for ident, (method, params) in enumerate(calls):  # before initialize was sent
            reply = await peer.call(f"a{ident}", method, params)
            assert reply["error"]["code"] == -32600, reply
            assert "not initialized" in reply["error"]["message"]
            assert reply["error"]["data"] == {"method": method}
        async with trio.open_nursery() as nursery:
            nursery.start_soon(conn.agent.initialize, INIT_V1)
            init = await peer.receive()
            # sent while initialize is unanswered: refused too (the version is not known)
            reply = await peer.call("b", "session/request_permission", PERMISSION)
            assert reply["error"]["code"] == -32600
            assert "not initialized" in reply["error"]["message"]
            # the answer and a request pipelined right behind it, in one write
            answer = {
                "jsonrpc": "2.0",
                "id": init["id"],
                "result": {"protocolVersion": 1},
            }
            await peer.send(
                b"%b\n%b"
                % (
                    msgspec.json.encode(answer),
                    msgspec.json.encode(
                        {
                            "jsonrpc": "2.0",
                            "id": "c",
                            "method": "session/request_permission",
                            "params": PERMISSION,
                        }
                    ),
                )
            )
            reply = await peer.receive()
        assert reply == {
            "jsonrpc": "2.0",
            "id": "c",
            "result": {"outcome": {"outcome": "selected", "optionId": "ok"}},
        }
        assert conn.initialized


async def test_agent_notifications_before_the_initialize_answer_are_dropped() -> None:
    async with raw_agent_of(ServingClient) as (conn, peer):
        note = {"jsonrpc": "2.0", "method": "session/update"}
        await peer.send({**note, "params": msgspec.to_builtins(chunk("s", "early"))})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(conn.agent.initialize, INIT_V1)
            init = await peer.receive()
            await peer.send(
                {**note, "params": msgspec.to_builtins(chunk("s", "pending"))}
            )
            await peer.send(
                {"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": 1}}
            )
        await peer.send({**note, "params": msgspec.to_builtins(chunk("s", "late"))})
        assert (await peer.call(1, "_acme/echo", {}))["result"] == {"echo": {}}
        client = conn.client
        assert isinstance(client, ServingClient)
        assert client.texts() == ["late"]


async def test_a_failed_initialize_leaves_the_client_uninitialized() -> None:
    async with raw_agent_of(ServingClient) as (conn, peer):
        async with trio.open_nursery() as nursery:

            async def agent() -> None:
                init = await peer.receive()
                await peer.send(
                    {
                        "jsonrpc": "2.0",
                        "id": init["id"],
                        "error": {"code": -32000, "message": "Authentication required"},
                    }
                )

            nursery.start_soon(agent)
            with pytest.raises(acp_trio.RequestError):
                await conn.agent.initialize(INIT_V1)
        reply = await peer.call(1, "_acme/echo", {})
        assert reply["error"]["code"] == -32600
        assert not conn.initialized
