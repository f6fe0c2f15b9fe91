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
from acp_schema import v2 as v2_latest
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
    offer = merge_initialize([V1, V2], {1, 2}, {2: "v2_alpha0"})
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


def test_a_multi_version_initialize_must_be_valid_under_each_offered_version() -> None:
    # v2 spoken as acp_schema.v2 (the 2.4.0 draft), which requires `info`:
    # the 2.0.0-alpha.0 request alone leaves it out
    with pytest.raises(ValueError, match=r"not valid under v2 .*`info`"):
        merge_initialize([V1, V2], {1, 2})
    # with the v2 draft's request too, an agent of either draft reads it
    latest = v2_latest.InitializeRequest(
        protocol_version=2, info=v2_latest.Implementation(name="c", version="1")
    )
    offer = merge_initialize([V1, V2, latest], {1, 2})
    assert v2_latest.decode(offer.payload, v2_latest.InitializeRequest).info.name == "c"
    assert offer.requests[2] is latest  # the draft spoken: v2's
    offer = merge_initialize([V1, V2, latest], {1, 2}, {2: "v2_alpha0"})
    assert offer.requests[2] is V2


def test_initialize_requests_that_disagree_on_a_shared_field_are_refused() -> None:
    other = v2.InitializeRequest(
        protocol_version=2, client_info=v2.Implementation(name="other", version="1")
    )
    with pytest.raises(ValueError, match="disagree on 'clientInfo'"):
        merge_initialize([V1, other], {1, 2}, {2: "v2_alpha0"})


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
