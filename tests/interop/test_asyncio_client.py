"""Our asyncio client (``acp_asyncio.spawn_agent``) drives real agents over pipes.

- an agent written with the official SDK (``official_agent.py``, asyncio);
- ``examples/asyncio_echo_agent.py`` (acp_asyncio on both ends);
and ``acp-client`` (``python -m acp_client``) (acp_trio) drives the asyncio echo agent.
pytest runs async tests on trio here, so these are synchronous and run
their own asyncio loop.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import acp  # noqa: F401 - the agent runs agent-client-protocol==0.12.1 (test extra)
import acp_asyncio
from _interop_helpers import (
    ASYNCIO_ECHO_AGENT,
    CLIENT,
    OFFICIAL_AGENT,
    PYTHON,
    WIRETAP,
    child_env,
    read_wire,
)
from acp_schema import v1
from acp_schema import v2_alpha0 as v2

TIMEOUT = 60  # a hang guard only: generous, as a loaded 2-core machine is slow
T = TypeVar("T")


def run(main: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main(), TIMEOUT)

    return asyncio.run(bounded())


class Client(v1.Client):
    """A v1 client: a transcript of the session, permissions answered by policy."""

    answer = "allow"

    def __init__(self, conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> None:
        self.transcript = acp_asyncio.SessionTranscript(version=v1)
        self.permissions: list[v1.RequestPermissionRequest] = []
        self.permission_asked = asyncio.Event()
        self.updated = asyncio.Event()
        self.reads: list[str] = []

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.transcript.apply(params)
        self.updated.set()

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.permissions.append(params)
        self.permission_asked.set()
        if self.answer == "block":
            await asyncio.Event().wait()  # until session/cancel answers it "cancelled"
        kind = "allow_once" if self.answer == "allow" else "reject_once"
        option = next(o for o in params.options if o.kind == kind)
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=option.option_id)
        )

    async def fs_read_text_file(
        self, params: v1.ReadTextFileRequest
    ) -> v1.ReadTextFileResponse:
        self.reads.append(params.path)
        text = Path(params.path).read_text()  # noqa: ASYNC240 - a small test file
        return v1.ReadTextFileResponse(content=text)


class BlockingClient(Client):
    answer = "block"


INIT = v1.InitializeRequest(
    protocol_version=1,
    client_capabilities=v1.ClientCapabilities(
        fs=v1.FileSystemCapabilities(read_text_file=True)
    ),
    client_info=v1.Implementation(name="acp-msgspec-asyncio-tests", version="0"),
)


def prompt(session_id: str, text: str) -> v1.PromptRequest:
    return v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])


def new_session() -> v1.NewSessionRequest:
    return v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])


def test_asyncio_client_runs_a_turn_with_a_permission_request_on_the_official_agent(
    tmp_path: Path,
) -> None:
    wire = tmp_path / "wire.log"

    async def main() -> tuple[v1.PromptResponse, Client]:
        async with acp_asyncio.spawn_agent(
            [PYTHON, WIRETAP, str(wire), PYTHON, OFFICIAL_AGENT], client=Client
        ) as conn:
            init = await conn.agent.initialize(INIT)
            assert init.protocol_version == 1
            assert init.agent_info is not None
            assert init.agent_info.name == "official-sdk-agent"
            session = await conn.agent.session_new(new_session())
            result = await conn.agent.session_prompt(prompt(session.session_id, "hi"))
            client = conn.client
            assert isinstance(client, Client)
            return result, client

    result, client = run(main)
    assert result.stop_reason == "end_turn"
    t = client.transcript
    assert [(m.role, m.message_id, m.text) for m in t.messages] == [
        ("agent", "m_1", "You said: hi")
    ]
    call = t.tool_calls["call_1"]
    assert (call.title, call.status) == ("Echo tool", "completed")
    assert call.raw_output == {"echoed": "hi"}
    assert t.usage is not None and (t.usage.used, t.usage.size) == (42, 1000)
    (asked,) = client.permissions
    assert asked.tool_call.tool_call_id == "call_1"
    assert t.other_updates == []
    kinds = [
        m["params"]["update"]["sessionUpdate"]
        if m.get("method") == "session/update"
        else m.get("method") or "response"
        for _, m in read_wire(wire)
    ]
    assert kinds.index("tool_call") < kinds.index("session/request_permission")


def test_asyncio_client_answers_the_pending_permission_cancelled_on_session_cancel() -> (
    None
):
    async def main() -> tuple[v1.PromptResponse, Client]:
        async with acp_asyncio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client=BlockingClient
        ) as conn:
            await conn.agent.initialize(INIT)
            s = await conn.agent.session_new(new_session())
            client = conn.client
            assert isinstance(client, Client)

            async def cancel_when_asked() -> None:
                await client.permission_asked.wait()
                await conn.agent.session_cancel(
                    v1.CancelNotification(session_id=s.session_id)
                )

            canceller = asyncio.ensure_future(cancel_when_asked())
            result = await conn.agent.session_prompt(prompt(s.session_id, "hi"))
            await canceller
            return result, client

    result, _ = run(main)
    # the runtime answered the permission request {"outcome": "cancelled"};
    # the SDK agent then ended the turn "cancelled"
    assert result.stop_reason == "cancelled"


def test_asyncio_client_offering_v1_and_v2_falls_back_to_v1_with_the_official_agent() -> (
    None
):
    class V2Client:
        acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

        def __init__(self, conn: Any) -> None:
            pass

    async def main() -> None:
        async with acp_asyncio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client={1: Client, 2: V2Client}
        ) as conn:
            init = await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
            assert conn.protocol_version == 1
            assert isinstance(init, v1.InitializeResponse)
            s = await conn.agent_v1.session_new(new_session())
            result = await conn.agent_v1.session_prompt(prompt(s.session_id, "hi"))
            assert result.stop_reason == "end_turn"
            assert isinstance(conn.client, Client)

    run(main)


def test_the_official_agent_reads_a_file_through_the_asyncio_client(
    tmp_path: Path,
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("contents ünïcode")

    async def main() -> tuple[v1.PromptResponse, Client]:
        async with acp_asyncio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client=Client
        ) as conn:
            await conn.agent.initialize(INIT)
            s = await conn.agent.session_new(new_session())
            result = await conn.agent.session_prompt(
                prompt(s.session_id, f"read {note}")
            )
            client = conn.client
            assert isinstance(client, Client)
            return result, client

    result, client = run(main)
    assert result.stop_reason == "end_turn"
    assert client.reads == [str(note)]
    assert client.transcript.messages[0].text.endswith("(contents ünïcode)")


def test_asyncio_client_drives_the_asyncio_echo_agent_a_turn_then_a_cancelled_wait() -> (
    None
):
    async def main() -> tuple[v1.PromptResponse, v1.PromptResponse, Client]:
        async with acp_asyncio.spawn_agent(
            [PYTHON, ASYNCIO_ECHO_AGENT], client=Client
        ) as conn:
            init = await conn.agent.initialize(INIT)
            assert init.agent_info is not None
            assert init.agent_info.name == "acp-msgspec-asyncio-echo-agent"
            s = await conn.agent.session_new(new_session())
            turn = await conn.agent.session_prompt(prompt(s.session_id, "hello there"))
            client = conn.client
            assert isinstance(client, Client)
            client.updated.clear()
            waiting = asyncio.ensure_future(
                conn.agent.session_prompt(prompt(s.session_id, "please wait"))
            )
            while "call_2" not in client.transcript.tool_calls:
                client.updated.clear()
                await client.updated.wait()
            await conn.agent.session_cancel(
                v1.CancelNotification(session_id=s.session_id)
            )
            return turn, await waiting, client

    turn, waited, client = run(main)
    assert turn.stop_reason == "end_turn"
    assert waited.stop_reason == "cancelled"
    t = client.transcript
    assert t.messages[0].text == "You said: hello there "
    assert t.tool_calls["call_1"].status == "completed"
    assert t.tool_calls["call_2"].status == "in_progress"
    assert [e.status for e in t.plan] == ["completed"] * 3
    assert len(client.permissions) == 1


def test_the_trio_example_client_drives_the_asyncio_echo_agent(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *CLIENT,
            "--protocol",
            "1",
            "--yes",
            "--prompt",
            "hello there",
            "--",
            PYTHON,
            ASYNCIO_ECHO_AGENT,
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**child_env(), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        start_new_session=True,  # no controlling terminal: nothing is asked
    )
    assert done.returncode == 0, done.stderr
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    assert lines[0] == "agent: acp-msgspec-asyncio-echo-agent 0.1.0, protocol v1"
    assert "agent: You said: hello there" in lines
    turn = lines[lines.index("agent: You said: hello there") :]
    assert turn[3:8] == [
        "tool call_1: Echo 11 characters [pending]",
        "permission: Echo 11 characters: Allow [allow_once] (--yes)",
        "tool call_1: Echo 11 characters [in_progress]",
        "tool call_1: Echo 11 characters [completed]",
        "    hello there",
    ]
    assert lines[-1] == "stop reason: end_turn"


def test_asyncio_client_offering_v1_and_v2_advertises_fs_to_a_v1_only_agent(
    tmp_path: Path,
) -> None:
    # conn.initialize(v1_request, v2_request): one message with each version's
    # fields; the SDK's v1 agent reads v1's clientCapabilities and uses fs
    note = tmp_path / "note.txt"
    note.write_text("read through fs")
    wire = tmp_path / "wire.log"

    class V2Client:
        acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

        def __init__(self, conn: Any) -> None:
            pass

    async def main() -> tuple[v1.PromptResponse, Client, Any]:
        async with acp_asyncio.spawn_agent(
            [PYTHON, WIRETAP, str(wire), PYTHON, OFFICIAL_AGENT],
            client={1: Client, 2: V2Client},
        ) as conn:
            init = await conn.initialize(
                INIT,
                v2.InitializeRequest(
                    protocol_version=2,
                    capabilities=v2.ClientCapabilities(meta={"v2": True}),
                ),
            )
            assert isinstance(init, v1.InitializeResponse)
            assert conn.protocol_version == 1
            s = await conn.agent_v1.session_new(new_session())
            result = await conn.agent_v1.session_prompt(
                prompt(s.session_id, f"read {note}")
            )
            client = conn.client
            assert isinstance(client, Client)
            return result, client, conn.client_capabilities

    result, client, advertised = run(main)
    assert advertised == INIT.client_capabilities
    assert result.stop_reason == "end_turn"
    assert client.reads == [str(note)]
    assert client.transcript.messages[0].text.endswith("(read through fs)")
    sent = read_wire(wire)[0][1]["params"]
    assert sent == {
        "protocolVersion": 2,
        "capabilities": {"_meta": {"v2": True}},
        "clientCapabilities": {"fs": {"readTextFile": True}},
        "clientInfo": {"name": "acp-msgspec-asyncio-tests", "version": "0"},
    }
