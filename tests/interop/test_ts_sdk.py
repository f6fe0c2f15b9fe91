"""Interop with the TypeScript SDK 2.4.0 (``@agentclientprotocol/sdk``, node) over
stdio, both directions, for v1 (its default entry point) and the v2 draft (its
``experimental/v2`` entry point, against ``acp_schema.v2``): initialize, a
session, a prompt turn with updates and a permission request, a cancel.

``ts_stdio.mjs`` is the SDK's side (an agent, or a client driving a command);
our agents are ``acp_echo`` (v1) and ``ts_v2_agent.py`` (v2); our clients are
below. The SDK is installed by npm into a cache shared by every worker
(``_ts_sdk``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import acp_trio
import pytest
import trio
from _interop_helpers import ECHO_AGENT, HERE, PYTHON, child_env
from _ts_sdk import TsSdk, ts_sdk
from acp_schema import v1, v2

TIMEOUT = 60


@pytest.fixture(scope="module")
def sdk() -> TsSdk:
    installed = ts_sdk()
    shutil.copy(HERE / "ts_stdio.mjs", installed.root / "acp_msgspec_ts_stdio.mjs")
    return installed


def run_ts_client(sdk: TsSdk, version: str, command: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [
            sdk.node,
            str(sdk.root / "acp_msgspec_ts_stdio.mjs"),
            "client",
            version,
            *command,
        ],
        cwd=sdk.root,
        env={"PATH": "/usr/bin:/bin", **child_env()},
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_the_ts_v1_client_drives_our_agent(sdk: TsSdk) -> None:
    seen = run_ts_client(sdk, "v1", ECHO_AGENT)
    assert seen["protocolVersion"] == 1
    assert seen["agent"] == "acp-msgspec-echo-agent"
    assert seen["first"] == {"stopReason": "end_turn"}
    assert seen["second"] == {"stopReason": "cancelled"}  # the cancel
    assert {"agent_message_chunk", "tool_call", "tool_call_update"} <= set(
        seen["updates"]
    )
    assert seen["permissions"] == ["call_1"]


def test_the_ts_v2_client_drives_our_v2_agent(sdk: TsSdk) -> None:
    seen = run_ts_client(sdk, "v2", [PYTHON, str(HERE / "ts_v2_agent.py")])
    assert seen["protocolVersion"] == 2
    assert seen["agent"] == "acp-msgspec-v2-agent"
    assert seen["first"] == {"messageId": "string", "stopReason": "end_turn"}
    assert seen["second"] == {"messageId": "string", "stopReason": "cancelled"}
    assert seen["updates"].count("agent_message_chunk") == 3  # two words, "allowed"
    assert seen["permissions"] == ["Count the words"]


class V1Client(v1.Client):
    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.updates: list[str] = []
        self.text = ""
        self.permissions: list[str] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        update = params.update
        self.updates.append(str(update.__struct_config__.tag))
        if isinstance(update, v1.AgentMessageChunk) and isinstance(
            update.content, v1.TextContent
        ):
            self.text += update.content.text

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.permissions.append(params.tool_call.tool_call_id)
        option = next(o for o in params.options if o.kind == "allow_once")
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=option.option_id)
        )


async def test_our_v1_client_drives_the_ts_agent(sdk: TsSdk) -> None:
    command = [sdk.node, str(sdk.root / "acp_msgspec_ts_stdio.mjs"), "agent", "v1"]
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(command, V1Client, cwd=sdk.root) as conn:
            init = await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            assert init.protocol_version == 1
            assert init.agent_info and init.agent_info.name == "ts-stdio-agent"
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd=str(sdk.root), mcp_servers=[])
            )
            sid = session.session_id

            def prompt(text: str) -> v1.PromptRequest:
                return v1.PromptRequest(
                    session_id=sid, prompt=[v1.TextContent(text=text)]
                )

            first = await conn.agent.session_prompt(prompt("hello world"))
            assert first.stop_reason == "end_turn"
            client: V1Client = conn.client  # type: ignore[assignment]
            assert client.text == "hello world allowed"
            assert client.permissions == ["t1"] and "tool_call" in client.updates
            async with trio.open_nursery() as nursery:

                async def cancel_soon() -> None:
                    await trio.sleep(0.3)
                    await conn.agent.session_cancel(
                        v1.CancelNotification(session_id=sid)
                    )

                nursery.start_soon(cancel_soon)
                second = await conn.agent.session_prompt(prompt("please wait"))
            assert second.stop_reason == "cancelled"


class V2Client(v2.Client):
    def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent]) -> None:
        self.updates: list[str] = []
        self.text = ""
        self.permissions: list[str] = []
        self.stops: list[Any] = []
        self.idle = trio.Event()

    async def session_update(self, params: v2.UpdateSessionNotification) -> None:
        update = params.update
        if isinstance(update, v2.SessionUpdateStateUpdate):  # kept raw: a union
            self.updates.append(f"state_update:{update['state']}")
            if update["state"] == "idle":
                self.stops.append(update.get("stopReason"))
                self.idle.set()
            return
        self.updates.append(str(update.__struct_config__.tag))
        if isinstance(update, v2.AgentMessageChunk) and isinstance(
            update.content, v2.TextContent
        ):
            self.text += update.content.text

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        self.permissions.append(params.title)
        option = next(o for o in params.options if o.kind == "allow_once")
        return v2.RequestPermissionResponse(
            outcome=v2.SelectedPermissionOutcome(option_id=option.option_id)
        )


async def test_our_v2_client_drives_the_ts_v2_agent(sdk: TsSdk) -> None:
    command = [sdk.node, str(sdk.root / "acp_msgspec_ts_stdio.mjs"), "agent", "v2"]
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(command, {2: V2Client}, cwd=sdk.root) as conn:
            info = v2.Implementation(name="acp-msgspec-tests", version="0")
            init = await conn.agent_v2.initialize(
                v2.InitializeRequest(protocol_version=2, info=info)
            )
            assert init.protocol_version == 2 and init.info.name == "ts-stdio-agent"
            session = await conn.agent_v2.session_new(
                v2.NewSessionRequest(cwd=str(sdk.root))
            )
            sid = session.session_id
            client: V2Client = conn.client  # type: ignore[assignment]

            def prompt(text: str) -> v2.PromptRequest:
                return v2.PromptRequest(
                    session_id=sid, prompt=[v2.TextContent(text=text)]
                )

            first = await conn.agent_v2.session_prompt(prompt("hello world"))
            assert first.message_id == "ts-message-1"
            await client.idle.wait()
            assert client.stops == ["end_turn"]
            assert client.text == "hello world allowed"
            assert client.permissions == ["Count the words"]
            client.idle = trio.Event()
            second = await conn.agent_v2.session_prompt(prompt("please wait"))
            assert second.message_id == "ts-message-2"
            await conn.agent_v2.session_cancel(
                v2.CancelSessionNotification(session_id=sid)
            )
            await client.idle.wait()
            assert client.stops == ["end_turn", "cancelled"]
            assert client.updates[0] == "state_update:running"
