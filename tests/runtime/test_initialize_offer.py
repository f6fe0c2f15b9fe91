"""A client offering several versions: one initialize carrying each version's fields."""

from __future__ import annotations

from typing import Any

import acp_trio
import msgspec
import pytest
import trio
from _acp_helpers import EchoAgent, EchoAgentV2, RecordingClient, connected
from acp_core._initialize import merge_initialize
from acp_schema import v1
from acp_schema import v2_alpha0 as v2

FS = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True))
V1 = v1.InitializeRequest(
    protocol_version=1,
    client_capabilities=FS,
    client_info=v1.Implementation(name="c", version="1"),
)
V2 = v2.InitializeRequest(
    protocol_version=2,
    capabilities=v2.ClientCapabilities(meta={"x": 1}),
    client_info=v2.Implementation(name="c", version="1"),
)


class V2Client:
    acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

    def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent]) -> None:
        pass


class ReadingClient(RecordingClient):
    async def fs_read_text_file(
        self, params: v1.ReadTextFileRequest
    ) -> v1.ReadTextFileResponse:
        return v1.ReadTextFileResponse(content=f"read {params.path}")


# -- the rule, without I/O ---------------------------------------------------------------


def test_a_multi_version_initialize_carries_each_versions_fields() -> None:
    offer = merge_initialize([V1, V2], {1, 2})
    assert msgspec.json.decode(offer.payload) == {
        "protocolVersion": 2,
        "capabilities": {"_meta": {"x": 1}},
        "clientInfo": {"name": "c", "version": "1"},
        "clientCapabilities": {"fs": {"readTextFile": True}},
    }
    assert offer.requests == {1: V1, 2: V2}
    # each version's agent decodes its own request from it
    assert v1.decode(offer.payload, v1.InitializeRequest).client_capabilities == FS
    assert (
        v2.decode(offer.payload, v2.InitializeRequest).capabilities == V2.capabilities
    )


def test_initialize_requests_that_disagree_on_a_shared_field_are_refused() -> None:
    other = v2.InitializeRequest(
        protocol_version=2, client_info=v2.Implementation(name="other", version="1")
    )
    with pytest.raises(ValueError, match="disagree on 'clientInfo'"):
        merge_initialize([V1, other], {1, 2})


@pytest.mark.parametrize(
    ("requests", "error"),
    [
        ([V1, V1], "two v1"),
        ([V2], r"offers \[1\]"),
        ([], "at least one"),
    ],
)
def test_initialize_requests_must_be_one_per_offered_version(
    requests: list[Any], error: str
) -> None:
    offered = {1} if requests == [V2] else {1, 2}
    with pytest.raises(ValueError, match=error):
        merge_initialize(requests, offered)
    with pytest.raises(TypeError, match="InitializeRequest"):
        merge_initialize([v1.NewSessionRequest(cwd="/", mcp_servers=[])], {1})


# -- over a connection -------------------------------------------------------------------


async def test_a_v1_agent_reads_the_v1_capabilities_of_a_multi_version_initialize() -> (
    None
):
    with trio.fail_after(10):
        async with connected({1: EchoAgent}, {1: ReadingClient, 2: V2Client}) as (
            conn,
            agent_conn,
        ):
            init = await conn.initialize(V1, V2)
            assert isinstance(init, v1.InitializeResponse)
            assert agent_conn.client_capabilities == FS
            # what the client enforces is what it advertised in v1: fs reads pass
            assert conn.client_capabilities == FS
            read = await agent_conn.client_v1.fs_read_text_file(
                v1.ReadTextFileRequest(session_id="s", path="/etc/hostname")
            )
            assert read.content == "read /etc/hostname"
            with pytest.raises(acp_trio.CapabilityError):
                await agent_conn.client_v1.fs_write_text_file(
                    v1.WriteTextFileRequest(session_id="s", path="/x", content="")
                )


async def test_a_v2_agent_reads_the_v2_fields_of_a_multi_version_initialize() -> None:
    with trio.fail_after(10):
        async with connected(
            {1: EchoAgent, 2: EchoAgentV2}, {1: ReadingClient, 2: V2Client}
        ) as (conn, agent_conn):
            init = await conn.initialize(V1, V2)
            assert isinstance(init, v2.InitializeResponse)
            assert agent_conn.client_capabilities == V2.capabilities
            assert conn.client_capabilities == V2.capabilities


async def test_a_multi_version_initialize_without_the_answered_versions_request_advertises_nothing() -> (
    None
):
    with trio.fail_after(10):
        async with connected({1: EchoAgent}, {1: ReadingClient, 2: V2Client}) as (
            conn,
            agent_conn,
        ):
            await conn.initialize(V2)  # nothing said to a v1 agent
            assert conn.protocol_version == 1
            with pytest.raises(acp_trio.CapabilityError):
                await agent_conn.client_v1.fs_read_text_file(
                    v1.ReadTextFileRequest(session_id="s", path="/etc/hostname")
                )
