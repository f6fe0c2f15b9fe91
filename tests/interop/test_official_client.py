"""The official Python SDK's client drives ``acp_echo`` (the reference agent) (v1, real stdio).

The SDK is asyncio: these tests are synchronous and run their own event loop.
Traffic passes through ``wiretap.py`` so the bytes on the wire can be checked.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _interop_helpers import (
    ECHO_AGENT,
    PYTHON,
    WIRETAP,
    child_env,
    read_wire,
)
from acp import RequestError, spawn_agent_process, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    HttpMcpServer,
    Implementation,
    McpServerStdio,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

TIMEOUT = 60  # a hang guard only: generous, as a loaded 2-core machine is slow


class SdkClient:
    """A duck-typed ``acp.Client`` that records updates and answers permissions.

    ``answer``: ``"allow"``, ``"reject"`` or ``"block"`` (wait until
    :meth:`release`, then answer ``cancelled`` as the spec requires after
    ``session/cancel``).
    """

    def __init__(self, answer: str = "allow") -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.permission_asked = asyncio.Event()
        self.released = asyncio.Event()
        self.init: Any = None
        self.updated = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.updated.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        self.permission_asked.set()
        if self.answer == "block":
            await self.released.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        kind = "allow_once" if self.answer == "allow" else "reject_once"
        option = next(o for o in options if o.kind == kind)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(option_id=option.option_id, outcome="selected")
        )

    def release(self) -> None:
        self.released.set()

    def of_type(self, cls: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, cls)]


Scenario = Callable[[Any, SdkClient], Awaitable[Any]]


def run_with_echo_agent(
    client: SdkClient, scenario: Scenario, wire: Path, *agent_args: str
) -> Any:
    """Spawn the echo agent behind a wiretap and run ``scenario(conn, client)``."""

    async def main() -> Any:
        async with spawn_agent_process(
            client,
            PYTHON,
            WIRETAP,
            str(wire),
            *ECHO_AGENT,
            "--chunk-delay",
            "0",
            *agent_args,
            env=child_env(),
            transport_kwargs={"stderr": None},
        ) as (conn, _process):
            init = await conn.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(
                    name="official-sdk-client", version="0.12.1"
                ),
            )
            assert init.protocol_version == 1
            client.init = init
            return await scenario(conn, client)

    return asyncio.run(asyncio.wait_for(main(), TIMEOUT))


async def new_session(conn: Any, **kwargs: Any) -> str:
    session = await conn.new_session(cwd="/tmp", mcp_servers=[], **kwargs)
    return str(session.session_id)


def test_initialize_advertises_what_the_echo_agent_implements(tmp_path: Path) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        return client.init

    init = run_with_echo_agent(SdkClient(), scenario, tmp_path / "wire.log")
    caps = init.agent_capabilities
    assert caps.load_session is True
    assert caps.prompt_capabilities.embedded_context is True
    assert caps.mcp_capabilities.http is True
    session = caps.session_capabilities
    assert session.resume is not None and session.close is not None
    assert session.additional_directories is not None
    assert init.agent_info.name == "acp-msgspec-echo-agent"


def test_session_setup_records_and_echoes_mcp_servers_and_directories(
    tmp_path: Path,
) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        return await conn.new_session(
            cwd="/tmp",
            additional_directories=["/var/tmp"],
            mcp_servers=[
                McpServerStdio(name="tools", command="/bin/true", args=["-v"], env=[]),
                HttpMcpServer(
                    type="http", name="api", url="https://x.test/mcp", headers=[]
                ),
            ],
        )

    wire = tmp_path / "wire.log"
    session = run_with_echo_agent(SdkClient(), scenario, wire)
    echoed = session.field_meta["echoAgent"]
    assert echoed["cwd"] == "/tmp"
    assert echoed["additionalDirectories"] == ["/var/tmp"]
    assert [(s["name"], s["type"]) for s in echoed["mcpServers"]] == [
        ("tools", "stdio"),
        ("api", "http"),
    ]
    assert echoed["mcpServers"][0]["args"] == ["-v"]
    # The SDK sends the v1 stdio server without "type" (allowed: v1's
    # McpServerStdio has no discriminator); our agent decodes it by shape.
    sent = next(m for d, m in read_wire(wire) if m.get("method") == "session/new")
    assert "type" not in sent["params"]["mcpServers"][0]


def test_a_full_turn_with_a_permission_request(tmp_path: Path) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        return await conn.prompt(session_id=sid, prompt=[text_block("hello world")])

    client = SdkClient("allow")
    wire = tmp_path / "wire.log"
    result = run_with_echo_agent(client, scenario, wire)
    assert result.stop_reason == "end_turn"

    kinds = [type(u).__name__ for u in client.updates]
    assert kinds[0] == "AgentPlanUpdate"
    assert kinds[-1] == "UsageUpdate"
    starts = client.of_type(ToolCallStart)
    assert len(starts) == 1 and starts[0].status == "pending"
    assert starts[0].locations[0].path == "/tmp"
    assert starts[0].raw_input == {"text": "hello world"}
    progress = client.of_type(ToolCallProgress)
    assert [p.status for p in progress] == ["in_progress", "completed"]
    assert progress[-1].content[0].content.text == "hello world"
    # the permission was asked for that tool call, between its start and progress
    assert len(client.permissions) == 1
    tool_call, options = client.permissions[0]
    assert tool_call.tool_call_id == starts[0].tool_call_id
    assert {o.kind for o in options} == {"allow_once", "reject_once"}
    # chunks carry a messageId; one id per message
    chunks = client.of_type(AgentMessageChunk)
    assert all(c.message_id for c in chunks)
    assert len({c.message_id for c in chunks}) == 2
    text = "".join(c.content.text for c in chunks)
    assert text.startswith("You said: hello world") and "Echoed 11" in text
    plans = client.of_type(AgentPlanUpdate)
    assert all(e.status == "completed" for e in plans[-1].entries)
    usage = client.of_type(UsageUpdate)[0]
    assert usage.size == 200_000 and usage.cost.currency == "USD"

    frames = read_wire(wire)
    permission = next(
        i
        for i, (d, m) in enumerate(frames)
        if m.get("method") == "session/request_permission"
    )
    first_tool = next(
        i
        for i, (d, m) in enumerate(frames)
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "tool_call"
    )
    assert first_tool < permission


def test_a_rejected_permission_fails_the_tool_call(tmp_path: Path) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        return await conn.prompt(session_id=sid, prompt=[text_block("hello")])

    client = SdkClient("reject")
    result = run_with_echo_agent(client, scenario, tmp_path / "wire.log")
    assert result.stop_reason == "end_turn"
    assert client.of_type(ToolCallProgress)[-1].status == "failed"


def test_wait_then_cancel_ends_the_turn_cancelled(tmp_path: Path) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        turn = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[text_block("please wait")])
        )
        while not client.of_type(ToolCallStart):  # the agent is now waiting
            client.updated.clear()
            await client.updated.wait()
        assert not turn.done()
        await conn.cancel(session_id=sid)
        return await turn

    client = SdkClient()
    result = run_with_echo_agent(client, scenario, tmp_path / "wire.log")
    assert result.stop_reason == "cancelled"
    assert client.of_type(ToolCallStart)[0].status == "in_progress"


def test_cancel_while_a_permission_request_is_pending(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        turn = asyncio.ensure_future(
            conn.prompt(session_id=sid, prompt=[text_block("hello")])
        )
        await client.permission_asked.wait()
        await conn.cancel(session_id=sid)
        result = await turn
        client.release()  # the SDK client answers "cancelled", late: dropped
        await asyncio.sleep(0.1)
        return result

    client = SdkClient("block")
    wire = tmp_path / "wire.log"
    with caplog.at_level(logging.ERROR):
        result = run_with_echo_agent(client, scenario, wire)
    assert result.stop_reason == "cancelled"
    frames = read_wire(wire)
    # Our agent abandons its permission request: v1 `$/cancel_request`
    # (cancellation.mdx). The SDK 0.12.1 does not implement it (optional per
    # the spec) and logs the unknown notification as an error; harmless.
    permission_id = next(
        m["id"] for d, m in frames if m.get("method") == "session/request_permission"
    )
    assert (
        "<-",
        {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": permission_id},
        },
    ) in frames


def test_load_replays_resume_does_not_close_releases(tmp_path: Path) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        await conn.prompt(session_id=sid, prompt=[text_block("remember me")])
        live = list(client.updates)
        client.updates.clear()
        await conn.load_session(cwd="/tmp", session_id=sid, mcp_servers=[])
        replayed = list(client.updates)
        client.updates.clear()
        await conn.resume_session(cwd="/tmp", session_id=sid)
        resumed = list(client.updates)
        closed = await conn.close_session(session_id=sid)
        with pytest.raises(RequestError) as refused:
            await conn.prompt(session_id=sid, prompt=[text_block("again")])
        return live, replayed, resumed, closed, refused.value

    live, replayed, resumed, closed, refused = run_with_echo_agent(
        SdkClient(), scenario, tmp_path / "wire.log"
    )
    user = [u for u in replayed if isinstance(u, UserMessageChunk)]
    assert [u.content.text for u in user] == ["remember me"] and user[0].message_id
    # v1 replays agent messages as chunks with their original messageIds
    live_chunks = [
        (c.message_id, c.content.text) for c in live if isinstance(c, AgentMessageChunk)
    ]
    again = [
        (c.message_id, c.content.text)
        for c in replayed
        if isinstance(c, AgentMessageChunk)
    ]
    assert again == live_chunks
    (tool,) = [u for u in replayed if isinstance(u, ToolCallStart)]
    assert tool.status == "completed" and tool.content[0].content.text == "remember me"
    assert resumed == []
    assert closed is not None
    assert refused.code == -32002  # Resource not found: the session was closed


def test_sessions_survive_an_agent_restart_with_a_state_dir(tmp_path: Path) -> None:
    state = str(tmp_path / "state")

    async def first(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        await conn.prompt(session_id=sid, prompt=[text_block("persist me")])
        return sid

    sid = run_with_echo_agent(
        SdkClient(), first, tmp_path / "w1.log", "--state-dir", state
    )

    async def second(conn: Any, client: SdkClient) -> Any:
        await conn.load_session(cwd="/tmp", session_id=sid, mcp_servers=[])
        return await conn.prompt(session_id=sid, prompt=[text_block("and me")])

    client = SdkClient()
    result = run_with_echo_agent(
        client, second, tmp_path / "w2.log", "--state-dir", state
    )
    assert result.stop_reason == "end_turn"
    user = [u.content.text for u in client.updates if isinstance(u, UserMessageChunk)]
    assert user == ["persist me"]


def test_session_fork_on_the_echo_agents_unstable_surface(tmp_path: Path) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        await conn.prompt(session_id=sid, prompt=[text_block("remember me")])
        forked = await conn.fork_session(session_id=sid, cwd="/tmp", mcp_servers=[])
        client.updates.clear()
        await conn.load_session(
            cwd="/tmp", session_id=forked.session_id, mcp_servers=[]
        )
        return sid, forked, list(client.updates)

    client = SdkClient()
    sid, forked, replayed = run_with_echo_agent(
        client, scenario, tmp_path / "wire.log", "--unstable"
    )
    fork_caps = client.init.agent_capabilities.session_capabilities.fork
    assert fork_caps is not None  # advertised on the unstable surface only
    assert forked.session_id != sid
    user = [u for u in replayed if isinstance(u, UserMessageChunk)]
    assert [u.content.text for u in user] == ["remember me"]  # the history came along
    wire = read_wire(tmp_path / "wire.log")
    assert any(m.get("method") == "session/fork" for _, m in wire)
