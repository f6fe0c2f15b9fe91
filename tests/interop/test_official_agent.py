"""Our client (``acp_trio.spawn_agent``) drives an agent written with the official SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import acp  # noqa: F401 - the agent runs agent-client-protocol==0.12.1 (test extra)
import acp_trio
import pytest
import trio
from _interop_helpers import OFFICIAL_AGENT, PYTHON, WIRETAP, read_wire
from acp_schema import v1, v1_unstable
from acp_schema import v2_alpha0 as v2

TIMEOUT = 60  # a hang guard only: generous, as a loaded 2-core machine is slow


class Client:
    """A v1 client: a transcript of the session, permissions answered by policy."""

    answer = "allow"

    def __init__(self, conn: acp_trio.ClientSideConnection[Any]) -> None:
        self.transcript = acp_trio.SessionTranscript(version=v1)
        self.permissions: list[v1.RequestPermissionRequest] = []
        self.permission_asked = trio.Event()
        self.reads: list[str] = []
        self.updated = trio.Event()

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.transcript.apply(params)
        self.updated.set()

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.permissions.append(params)
        self.permission_asked.set()
        if self.answer == "block":
            await trio.sleep_forever()  # until session/cancel answers it "cancelled"
        kind = "allow_once" if self.answer == "allow" else "reject_once"
        option = next(o for o in params.options if o.kind == kind)
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=option.option_id)
        )

    async def fs_read_text_file(
        self, params: v1.ReadTextFileRequest
    ) -> v1.ReadTextFileResponse:
        self.reads.append(params.path)
        return v1.ReadTextFileResponse(content=await trio.Path(params.path).read_text())


class BlockingClient(Client):
    answer = "block"


INIT = v1.InitializeRequest(
    protocol_version=1,
    client_capabilities=v1.ClientCapabilities(
        fs=v1.FileSystemCapabilities(read_text_file=True)
    ),
    client_info=v1.Implementation(name="acp-msgspec-tests", version="0"),
)


def prompt(session_id: str, text: str) -> v1.PromptRequest:
    return v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])


async def test_initialize_session_new_and_a_turn_with_a_permission_request(
    tmp_path: Path,
) -> None:
    wire = tmp_path / "wire.log"
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, WIRETAP, str(wire), PYTHON, OFFICIAL_AGENT], client=Client
        ) as conn:
            init = await conn.agent.initialize(INIT)
            assert init.protocol_version == 1
            assert init.agent_info.name == "official-sdk-agent"
            assert init.agent_capabilities.prompt_capabilities.embedded_context
            session = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            result = await conn.agent.session_prompt(prompt(session.session_id, "hi"))
            assert result.stop_reason == "end_turn"
            client: Client = conn.client  # type: ignore[assignment]

    t = client.transcript
    assert [(m.role, m.message_id, m.text) for m in t.messages] == [
        ("agent", "m_1", "You said: hi")
    ]
    assert [(e.content, e.status) for e in t.plan] == [
        ("Echo", "completed"),
        ("Finish", "completed"),
    ]
    call = t.tool_calls["call_1"]
    assert (call.title, call.kind, call.status) == ("Echo tool", "other", "completed")
    assert call.content[0].content.text == "hi"  # type: ignore[union-attr]
    assert call.raw_output == {"echoed": "hi"}
    assert t.usage is not None and (t.usage.used, t.usage.size) == (42, 1000)
    assert t.usage.cost and (t.usage.cost.amount, t.usage.cost.currency) == (0.5, "EUR")
    (asked,) = client.permissions
    assert asked.tool_call.tool_call_id == "call_1"
    assert t.other_updates == []  # every update the SDK sent decoded as v1

    # The permission request arrived after the tool_call that it is about.
    frames = read_wire(wire)
    kinds = [
        m.get("method") or "response"
        if m.get("method") != "session/update"
        else m["params"]["update"]["sessionUpdate"]
        for _, m in frames
    ]
    assert kinds.index("tool_call") < kinds.index("session/request_permission")
    # What the official SDK puts on the wire for our v1 initialize.
    sent_init = frames[0][1]["params"]
    assert sent_init["clientCapabilities"]["fs"] == {"readTextFile": True}


async def test_a_rejected_permission_fails_the_tool_call() -> None:
    class Rejecting(Client):
        answer = "reject"

    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client=Rejecting
        ) as conn:
            await conn.agent.initialize(INIT)
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            result = await conn.agent.session_prompt(prompt(s.session_id, "no"))
    assert result.stop_reason == "end_turn"
    assert conn.client.transcript.tool_calls["call_1"].status == "failed"  # type: ignore[attr-defined]


async def test_a_client_offering_v1_and_v2_falls_back_to_v1() -> None:
    class V2Client:
        acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

        def __init__(self, conn: Any) -> None:
            pass

    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client={1: Client, 2: V2Client}
        ) as conn:
            init = await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
            assert conn.protocol_version == 1
            assert isinstance(init, v1.InitializeResponse)
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            result = await conn.agent.session_prompt(prompt(s.session_id, "hi"))
            assert result.stop_reason == "end_turn"
            assert isinstance(conn.client, Client)


async def test_session_cancel_ends_a_waiting_turn_cancelled() -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client=Client
        ) as conn:
            await conn.agent.initialize(INIT)
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            client: Client = conn.client  # type: ignore[assignment]
            async with trio.open_nursery() as nursery:

                async def cancel_when_waiting() -> None:
                    while not client.transcript.messages:
                        client.updated = trio.Event()
                        await client.updated.wait()
                    await conn.agent.session_cancel(
                        v1.CancelNotification(session_id=s.session_id)
                    )

                nursery.start_soon(cancel_when_waiting)
                result = await conn.agent.session_prompt(prompt(s.session_id, "wait"))
    assert result.stop_reason == "cancelled"
    assert client.transcript.messages[0].text == "waiting"


async def test_cancel_answers_the_pending_permission_request_cancelled() -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client=BlockingClient
        ) as conn:
            await conn.agent.initialize(INIT)
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            client: Client = conn.client  # type: ignore[assignment]
            async with trio.open_nursery() as nursery:

                async def cancel_when_asked() -> None:
                    await client.permission_asked.wait()
                    await conn.agent.session_cancel(
                        v1.CancelNotification(session_id=s.session_id)
                    )
                    client.transcript.mark_cancelled()

                nursery.start_soon(cancel_when_asked)
                result = await conn.agent.session_prompt(prompt(s.session_id, "hi"))
    # The runtime answered the permission request {"outcome": "cancelled"};
    # the SDK agent then ended the turn with stopReason "cancelled".
    assert result.stop_reason == "cancelled"
    assert client.transcript.tool_calls["call_1"].status == "cancelled"


async def test_the_official_agent_reads_a_file_through_our_client(
    tmp_path: Path,
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("contents ünïcode")
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client=Client
        ) as conn:
            await conn.agent.initialize(INIT)
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            result = await conn.agent.session_prompt(
                prompt(s.session_id, f"read {note}")
            )
    client: Client = conn.client  # type: ignore[assignment]
    assert result.stop_reason == "end_turn"
    assert client.reads == [str(note)]
    assert client.transcript.messages[0].text.endswith("(contents ünïcode)")


async def test_a_client_offering_v1_and_v2_advertises_fs_to_a_v1_only_agent(
    tmp_path: Path,
) -> None:
    # One initialize for both versions: v1's clientCapabilities beside v2's
    # capabilities; the SDK's v1 agent reads the former and uses fs.
    note = tmp_path / "note.txt"
    note.write_text("read through fs")
    wire = tmp_path / "wire.log"

    class V2Client:
        acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

        def __init__(self, conn: Any) -> None:
            pass

    info = INIT.client_info
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, WIRETAP, str(wire), PYTHON, OFFICIAL_AGENT],
            client={1: Client, 2: V2Client},
        ) as conn:
            init = await conn.initialize(
                INIT,
                v2.InitializeRequest(
                    protocol_version=2,
                    capabilities=v2.ClientCapabilities(meta={"v2": True}),
                    client_info=v2.Implementation(name=info.name, version=info.version),
                ),
            )
            assert isinstance(init, v1.InitializeResponse)
            assert conn.protocol_version == 1
            assert conn.client_capabilities == INIT.client_capabilities
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            result = await conn.agent.session_prompt(
                prompt(s.session_id, f"read {note}")
            )
    client: Client = conn.client  # type: ignore[assignment]
    assert result.stop_reason == "end_turn"
    assert client.reads == [str(note)]
    assert client.transcript.messages[0].text.endswith("(read through fs)")
    sent = read_wire(wire)[0][1]["params"]
    assert sent == {
        "protocolVersion": 2,
        "capabilities": {"_meta": {"v2": True}},
        "clientCapabilities": {"fs": {"readTextFile": True}},
        "clientInfo": {"name": "acp-msgspec-tests", "version": "0"},
    }


async def test_a_v2_shaped_initialize_alone_advertises_nothing_to_a_v1_agent(
    tmp_path: Path,
) -> None:
    # Why the above is needed: the v1 agent reads no fs support from it.
    note = tmp_path / "note.txt"
    note.write_text("never read")

    class V2Client:
        acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

        def __init__(self, conn: Any) -> None:
            pass

    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client={1: Client, 2: V2Client}
        ) as conn:
            await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
            s = await conn.agent.session_new(
                v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            await conn.agent.session_prompt(prompt(s.session_id, f"read {note}"))
    client: Client = conn.client  # type: ignore[assignment]
    assert client.reads == []
    assert "did not advertise fs.readTextFile" in client.transcript.messages[0].text


class UnstableClient:
    def __init__(self, conn: acp_trio.ClientSideConnection[Any]) -> None:
        pass


async def test_session_fork_on_the_unstable_surface_of_both_implementations() -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT, "--unstable"], client=UnstableClient, unstable=True
        ) as conn:
            init = await conn.agent.initialize(
                v1_unstable.InitializeRequest(protocol_version=1)
            )
            assert init.agent_capabilities.session_capabilities.fork is not None
            s = await conn.agent.session_new(
                v1_unstable.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            forked = await conn.agent.session_fork(
                v1_unstable.ForkSessionRequest(
                    session_id=s.session_id, cwd="/tmp/fork", mcp_servers=[]
                )
            )
    assert isinstance(forked, v1_unstable.ForkSessionResponse)
    assert forked.session_id == f"{s.session_id}_fork"


async def test_our_client_refuses_session_fork_an_official_agent_did_not_advertise() -> (
    None
):
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            [PYTHON, OFFICIAL_AGENT], client=UnstableClient, unstable=True
        ) as conn:
            await conn.agent.initialize(
                v1_unstable.InitializeRequest(protocol_version=1)
            )
            s = await conn.agent.session_new(
                v1_unstable.NewSessionRequest(cwd="/tmp", mcp_servers=[])
            )
            fork = v1_unstable.ForkSessionRequest(
                session_id=s.session_id, cwd="/tmp", mcp_servers=[]
            )
            with pytest.raises(acp_trio.CapabilityError, match="session/fork"):
                await conn.agent.session_fork(fork)
