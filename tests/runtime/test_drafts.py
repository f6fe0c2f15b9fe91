"""Two drafts of protocol v2 (``acp_schema.v2``: the 2.4.0 package's draft;
``acp_schema.v2_alpha0``: the seed's 2.0.0-alpha.0): a connection speaks the
draft of its handler class, and a peer speaking the other one is refused at
``initialize`` with a clear error, never misread."""

from __future__ import annotations

import functools
import re
from typing import Any

import acp_trio
import pytest
import trio
from _acp_helpers import RawPeer, raw_agent_of, raw_client_of
from acp_core._schema import draft_of, drafts, other_draft
from acp_core._sides import normalize_offer
from acp_schema import v2, v2_alpha0

INIT_ALPHA0 = {"protocolVersion": 2, "clientInfo": {"name": "old", "version": "1"}}
INIT_NEW = {"protocolVersion": 2, "info": {"name": "new", "version": "1"}}
RESULT_ALPHA0 = {"protocolVersion": 2, "agentInfo": {"name": "a", "version": "1"}}
RESULT_NEW = {"protocolVersion": 2, "info": {"name": "a", "version": "1"}}


class Alpha0Agent(v2_alpha0.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v2_alpha0.Client]) -> None:
        pass

    async def initialize(
        self, params: v2_alpha0.InitializeRequest
    ) -> v2_alpha0.InitializeResponse:
        return v2_alpha0.InitializeResponse(protocol_version=2)

    async def session_load(
        self, params: v2_alpha0.LoadSessionRequest
    ) -> v2_alpha0.LoadSessionResponse:
        return v2_alpha0.LoadSessionResponse()


class NewDraftAgent(v2.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v2.Client]) -> None:
        pass

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        info = v2.Implementation(name="new-agent", version="1")
        return v2.InitializeResponse(protocol_version=2, info=info)


class Alpha0Client(v2_alpha0.Client):
    def __init__(self, conn: acp_trio.ClientSideConnection[v2_alpha0.Agent]) -> None:
        pass


class NewDraftClient(v2.Client):
    def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent]) -> None:
        pass


def test_the_draft_is_the_handler_protocols_module_or_the_factorys_attribute() -> None:
    assert drafts(2) == ("v2", "v2_alpha0")
    assert draft_of(Alpha0Agent) == "v2_alpha0"
    assert draft_of(NewDraftClient) == "v2"

    def factory(conn: Any) -> object:
        return object()

    assert draft_of(factory) is None  # the version's default module
    assert draft_of(functools.partial(Alpha0Agent)) == "v2_alpha0"
    factory.acp_schema = v2_alpha0  # type: ignore[attr-defined]
    assert draft_of(factory) == "v2_alpha0"
    with pytest.raises(ValueError, match="no draft 'v2_alpha0' of protocol v1"):
        normalize_offer({1: Alpha0Agent})  # every entry point checks it early


def test_another_drafts_initialize_is_named_only_when_it_fits_that_draft() -> None:
    raw = __import__("json").dumps
    assert other_draft(v2, "params", raw(INIT_NEW).encode()) is None
    assert other_draft(v2_alpha0, "params", raw(INIT_ALPHA0).encode()) is None
    found = other_draft(v2_alpha0, "params", raw(INIT_NEW).encode())
    assert found is not None and "(acp_schema.v2)" in found
    found = other_draft(v2, "result", raw(RESULT_ALPHA0).encode())
    assert found is not None and "2.0.0-alpha.0 (acp_schema.v2_alpha0)" in found
    # fits no draft: left to the ordinary params check
    assert other_draft(v2, "params", b'{"protocolVersion": 2, "info": 5}') is None


async def test_an_agent_of_the_alpha0_draft_serves_session_load() -> None:
    async with raw_client_of({2: Alpha0Agent}) as peer:
        reply = await peer.call(0, "initialize", INIT_ALPHA0)
        assert reply["result"]["protocolVersion"] == 2
        load = {"sessionId": "s", "cwd": "/", "mcpServers": []}
        assert (await peer.call(1, "session/load", load))["result"] == {}


async def test_an_agent_of_the_new_draft_has_no_session_load() -> None:
    async with raw_client_of({2: NewDraftAgent}) as peer:
        reply = await peer.call(0, "initialize", INIT_NEW)
        assert reply["result"]["info"]["name"] == "new-agent"
        load = {"sessionId": "s", "cwd": "/", "mcpServers": []}
        assert (await peer.call(1, "session/load", load))["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("agent", "init", "speaks"),
    [
        (Alpha0Agent, INIT_NEW, "acp_schema.v2)"),
        (NewDraftAgent, INIT_ALPHA0, "acp_schema.v2_alpha0)"),
    ],
    ids=["alpha0-agent", "new-agent"],
)
async def test_an_agent_refuses_an_initialize_of_the_other_draft(
    agent: Any, init: dict[str, Any], speaks: str
) -> None:
    async with raw_client_of({2: agent}) as peer:
        reply = await peer.call(0, "initialize", init)
        error = reply["error"]
        assert error["code"] == -32602
        assert error["message"].startswith(
            "Invalid params: the peer speaks protocol v2"
        )
        assert speaks in error["message"]


@pytest.mark.parametrize(
    ("client", "request_type", "result", "theirs"),
    [
        (NewDraftClient, v2.InitializeRequest, RESULT_ALPHA0, "acp_schema.v2_alpha0"),
        (Alpha0Client, v2_alpha0.InitializeRequest, RESULT_NEW, "acp_schema.v2)"),
    ],
    ids=["new-client", "alpha0-client"],
)
async def test_a_client_refuses_an_initialize_answer_of_the_other_draft(
    client: Any, request_type: Any, result: dict[str, Any], theirs: str
) -> None:
    async with raw_agent_of({2: client}) as (conn, peer):

        async def answer(peer: RawPeer) -> None:
            sent = await peer.receive()
            await peer.send({"jsonrpc": "2.0", "id": sent["id"], "result": result})

        async with trio.open_nursery() as nursery:
            nursery.start_soon(answer, peer)
            params = (
                request_type(
                    protocol_version=2, info=v2.Implementation(name="c", version="1")
                )
                if request_type is v2.InitializeRequest
                else request_type(protocol_version=2)
            )
            with pytest.raises(acp_trio.ProtocolVersionError, match=re.escape(theirs)):
                await conn.agent.initialize(params)
