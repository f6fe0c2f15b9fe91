"""The official Python SDK's client drives ``examples/asyncio_echo_agent.py``.

Both sides asyncio, real stdio pipes, traffic through ``wiretap.py``: the
agent runs on ``acp_asyncio`` (the engine ``acp_core``), the client is
``agent-client-protocol==0.12.1``'s ``spawn_agent_process``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from _interop_helpers import ASYNCIO_ECHO_AGENT, PYTHON, WIRETAP, child_env, read_wire
from acp import RequestError, spawn_agent_process, text_block
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
)

TIMEOUT = 60  # a hang guard only: generous, as a loaded 2-core machine is slow


class SdkClient:
    """A duck-typed ``acp.Client``: records updates, answers permissions by policy.

    ``answer``: ``"allow"``, ``"reject"``, or ``"block"`` (wait until
    :meth:`release`, then answer ``cancelled``).
    """

    def __init__(self, answer: str = "allow") -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.permissions: list[Any] = []
        self.permission_asked = asyncio.Event()
        self.released = asyncio.Event()
        self.updated = asyncio.Event()
        self.init: Any = None

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

    def of_type(self, cls: type) -> list[Any]:
        return [u for u in self.updates if isinstance(u, cls)]


Scenario = Callable[[Any, SdkClient], Awaitable[Any]]


def run_with_asyncio_agent(client: SdkClient, scenario: Scenario, wire: Path) -> Any:
    """Spawn the asyncio echo agent behind a wiretap; run ``scenario(conn, client)``."""

    async def main() -> Any:
        async with spawn_agent_process(
            client,
            PYTHON,
            WIRETAP,
            str(wire),
            PYTHON,
            ASYNCIO_ECHO_AGENT,
            env=child_env(),
            transport_kwargs={"stderr": None},
        ) as (conn, _process):
            client.init = await conn.initialize(
                protocol_version=1,
                client_capabilities=ClientCapabilities(),
                client_info=Implementation(
                    name="official-sdk-client", version="0.12.1"
                ),
            )
            return await scenario(conn, client)

    return asyncio.run(asyncio.wait_for(main(), TIMEOUT))


async def new_session(conn: Any) -> str:
    session = await conn.new_session(cwd="/tmp", mcp_servers=[])
    return str(session.session_id)


def test_official_client_runs_a_turn_with_a_permission_request_on_the_asyncio_agent(
    tmp_path: Path,
) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        return await conn.prompt(session_id=sid, prompt=[text_block("hello world")])

    client = SdkClient("allow")
    wire = tmp_path / "wire.log"
    result = run_with_asyncio_agent(client, scenario, wire)
    assert result.stop_reason == "end_turn"
    assert client.init.protocol_version == 1
    assert client.init.agent_info.name == "acp-msgspec-asyncio-echo-agent"

    kinds = [type(u).__name__ for u in client.updates]
    assert kinds[0] == "AgentPlanUpdate"
    chunks = client.of_type(AgentMessageChunk)
    assert "".join(c.content.text for c in chunks) == "You said: hello world "
    assert {c.message_id for c in chunks} == {"msg_1"}
    (start,) = client.of_type(ToolCallStart)
    assert (start.tool_call_id, start.status) == ("call_1", "pending")
    assert start.raw_input == "hello world"
    progress = client.of_type(ToolCallProgress)
    assert [p.status for p in progress] == ["in_progress", "completed"]
    assert progress[-1].content[0].content.text == "hello world"
    assert progress[-1].raw_output == {"echoed": "hello world"}
    plans = client.of_type(AgentPlanUpdate)
    assert all(e.status == "completed" for e in plans[-1].entries)
    (asked,) = client.permissions
    assert asked[0].tool_call_id == "call_1"

    # on the wire: the permission request after the tool_call it is about
    frames = read_wire(wire)
    order = [
        m.get("method")
        if m.get("method") != "session/update"
        else m["params"]["update"]["sessionUpdate"]
        for _, m in frames
    ]
    assert order.index("tool_call") < order.index("session/request_permission")


def test_official_client_rejecting_the_permission_fails_the_tool_call(
    tmp_path: Path,
) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        sid = await new_session(conn)
        return await conn.prompt(session_id=sid, prompt=[text_block("hi")])

    client = SdkClient("reject")
    result = run_with_asyncio_agent(client, scenario, tmp_path / "wire.log")
    assert result.stop_reason == "end_turn"
    assert [p.status for p in client.of_type(ToolCallProgress)] == ["failed"]


def test_official_client_cancel_of_a_waiting_turn_is_answered_cancelled(
    tmp_path: Path,
) -> None:
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
    result = run_with_asyncio_agent(client, scenario, tmp_path / "wire.log")
    assert result.stop_reason == "cancelled"
    assert client.of_type(ToolCallStart)[0].status == "in_progress"


def test_official_client_cancel_during_a_permission_request_withdraws_it(
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
        client.released.set()  # the SDK client answers "cancelled", late: dropped
        await asyncio.sleep(0.1)
        return result

    wire = tmp_path / "wire.log"
    with caplog.at_level(logging.ERROR):
        result = run_with_asyncio_agent(SdkClient("block"), scenario, wire)
    assert result.stop_reason == "cancelled"
    frames = read_wire(wire)
    permission_id = next(
        m["id"] for _, m in frames if m.get("method") == "session/request_permission"
    )
    # the agent abandons its permission request with v1 `$/cancel_request`
    assert (
        "<-",
        {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": permission_id},
        },
    ) in frames


def test_official_client_prompt_for_an_unknown_session_is_refused(
    tmp_path: Path,
) -> None:
    async def scenario(conn: Any, client: SdkClient) -> Any:
        with pytest.raises(RequestError) as refused:
            await conn.prompt(session_id="nope", prompt=[text_block("hi")])
        return refused.value

    error = run_with_asyncio_agent(SdkClient(), scenario, tmp_path / "wire.log")
    assert error.code == -32002  # resource not found, from the agent's handler
