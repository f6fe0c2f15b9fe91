"""The fake client answers as scripted and records every call; the fake agent plays
its script on each prompt.  Each test runs on trio and on asyncio (the plugin's
parameter), the fake agent scripting the requests the fake client answers."""

from __future__ import annotations

from typing import Any

import acp_core
from acp_pytest import (
    CANCELLED,
    MAX_SHOWN,
    FakeAgent,
    FakeClient,
    FakeTerminal,
    InMemory,
    assert_calls,
    assert_transcript,
    prompt,
    start_session,
)
from acp_schema import v1, v2

SID = "session-1"  # FakeAgent's session id


def permission_request(call_id: str) -> v1.RequestPermissionRequest:
    return v1.RequestPermissionRequest(
        session_id=SID,
        tool_call=v1.ToolCallUpdate(tool_call_id=call_id),
        options=[
            v1.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
            v1.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
        ],
    )


async def play(
    acp_in_memory: InMemory, steps: list[Any], client: FakeClient, **caps: Any
) -> FakeAgent:
    """One turn of a fake agent playing ``steps`` against ``client``."""
    agent = FakeAgent(steps)
    conn = await acp_in_memory.connect(agent, client)
    session_id = await start_session(conn, **caps)
    assert await prompt(conn, session_id, "go") == "end_turn"
    return agent


def outcome(answer: Any) -> str:
    chosen = answer.outcome
    return getattr(chosen, "option_id", "cancelled")


async def test_the_fake_client_answers_permission_requests_in_script_order(
    acp_in_memory: InMemory,
) -> None:
    # by option id, by kind, cancelled; the last answer repeats
    client = FakeClient(permissions=["no", "allow_once", CANCELLED])
    steps = [permission_request(f"c{i}") for i in range(4)]
    agent = await play(acp_in_memory, steps, client)
    assert [outcome(sent.answer) for sent in agent.sent] == [
        "no",
        "yes",
        "cancelled",
        "cancelled",
    ]
    assert client.problems == []


async def test_a_permission_answer_naming_no_option_offered_is_a_problem(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(permissions=["allow_always"])
    agent = await play(acp_in_memory, [permission_request("c1")], client)
    assert outcome(agent.sent[0].answer) == "cancelled"
    [problem] = client.problems
    assert (
        "'allow_always'" in problem and "yes (allow_once), no (reject_once)" in problem
    )
    client.problems.clear()  # else the plugin fails this test with it


async def test_the_fake_client_serves_scripted_files_and_keeps_what_is_written(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(files={"/w/a.txt": "one\ntwo\nthree\n"})
    steps = [
        v1.ReadTextFileRequest(session_id=SID, path="/w/a.txt"),
        v1.ReadTextFileRequest(session_id=SID, path="/w/a.txt", line=2, limit=1),
        v1.ReadTextFileRequest(session_id=SID, path="/w/missing.txt"),
        v1.WriteTextFileRequest(session_id=SID, path="/w/b.txt", content="new"),
    ]
    agent = await play(acp_in_memory, steps, client)
    whole, line, missing, written = (sent.answer for sent in agent.sent)
    assert whole.content == "one\ntwo\nthree\n"
    assert line.content == "two\n"
    assert isinstance(missing, acp_core.RequestError) and missing.code == -32002
    assert isinstance(written, v1.WriteTextFileResponse)
    assert client.files["/w/b.txt"] == "new"


async def test_the_fake_client_runs_scripted_terminals_and_refuses_a_released_one(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(terminals={"pytest": FakeTerminal("3 passed\n", exit_code=0)})
    steps = [
        v1.CreateTerminalRequest(session_id=SID, command="pytest", args=["-q"]),
        v1.TerminalOutputRequest(session_id=SID, terminal_id="term-1"),
        v1.WaitForTerminalExitRequest(session_id=SID, terminal_id="term-1"),
        v1.ReleaseTerminalRequest(session_id=SID, terminal_id="term-1"),
        v1.TerminalOutputRequest(session_id=SID, terminal_id="term-1"),
    ]
    agent = await play(acp_in_memory, steps, client)
    created, output, exited, released, after = (sent.answer for sent in agent.sent)
    assert created.terminal_id == "term-1"
    assert output.output == "3 passed\n" and output.exit_status.exit_code == 0
    assert exited.exit_code == 0
    assert isinstance(released, v1.ReleaseTerminalResponse)
    assert isinstance(after, acp_core.RequestError) and after.code == -32602
    opened = client.opened["term-1"]
    assert (opened.command, opened.args, opened.released) == ("pytest", ["-q"], True)


async def test_the_fake_client_answers_elicitations_in_script_order(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(elicitations=[{"action": "accept", "content": {"name": "Ada"}}])
    ask = v1.CreateElicitationRequestForm(
        session_id=SID,
        message="Your name?",
        requested_schema=v1.convert(
            {"type": "object", "properties": {"name": {"type": "string"}}},
            v1.ElicitationSchema,
        ),
    )
    caps = v1.ClientCapabilities(
        elicitation=v1.ElicitationCapabilities(form=v1.ElicitationFormCapabilities())
    )
    agent = await play(acp_in_memory, [ask, ask], client, capabilities=caps)
    first, second = (sent.answer for sent in agent.sent)
    assert isinstance(first, v1.CreateElicitationResponseAccept)
    assert first.content == {"name": "Ada"}
    assert isinstance(second, v1.CreateElicitationResponseAccept)


async def test_the_fake_client_records_every_call_with_its_answer(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient()
    steps = [
        acp_core.agent_text("Reading.", message_id="m1"),
        v1.ReadTextFileRequest(session_id=SID, path="/nowhere"),
        permission_request("c1"),
    ]
    await play(acp_in_memory, steps, client)
    assert_calls(
        client.calls,
        ["session/update", "fs/read_text_file", "session/request_permission"],
    )
    assert isinstance(client.calls[1].answer, acp_core.RequestError)
    assert outcome(client.calls[2].answer) == "yes"


async def test_the_fake_agent_sends_its_updates_and_requests_then_its_stop_reason(
    acp_in_memory: InMemory,
) -> None:
    agent = FakeAgent(
        [
            acp_core.agent_text("Hel", message_id="m1"),
            acp_core.tool_call("c1", "Ask", kind="other"),
            permission_request("c1"),
            acp_core.tool_call_update("c1", status="completed"),
            acp_core.agent_text("lo", message_id="m1"),
        ],
        stop_reason="max_tokens",
    )
    client = FakeClient()
    conn = await acp_in_memory.connect(agent, client)
    session_id = await start_session(conn)
    assert session_id == SID
    assert await prompt(conn, session_id, "go") == "max_tokens"
    assert_transcript(
        client.transcript(),
        """
        agent: Hello
        tool c1 completed: Ask
        """,
    )
    [asked] = agent.sent
    assert (
        asked.method == "session/request_permission" and outcome(asked.answer) == "yes"
    )


async def test_the_fake_agent_records_a_request_the_client_did_not_advertise(
    acp_in_memory: InMemory,
) -> None:
    none = v1.ClientCapabilities()
    client = FakeClient(files={"/w/a.txt": "secret"})
    steps = [v1.ReadTextFileRequest(session_id=SID, path="/w/a.txt")]
    agent = await play(acp_in_memory, steps, client, capabilities=none)
    assert isinstance(agent.sent[0].answer, acp_core.CapabilityError)
    assert client.calls == []  # refused on the agent's side, never sent


async def test_the_fake_agent_records_every_call_of_the_client(
    acp_in_memory: InMemory,
) -> None:
    agent = await play(acp_in_memory, [], FakeClient())
    assert agent.methods() == ["initialize", "session/new", "session/prompt"]
    assert agent.calls[2].answer.stop_reason == "end_turn"


async def test_the_fakes_speak_protocol_v2_when_offered_it(
    acp_in_memory: InMemory,
) -> None:
    agent = FakeAgent([acp_core.agent_text("hi", message_id="m1", version=v2)])
    client = FakeClient()
    conn = await acp_in_memory.connect({2: agent}, {2: client})
    await conn.agent.initialize(
        v2.InitializeRequest(
            protocol_version=2,
            info=v2.Implementation(name="test", version="1"),
            capabilities=v2.ClientCapabilities(),
        )
    )
    assert conn.protocol_version == 2
    session = await conn.agent.session_new(
        v2.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    text: list[v2.ContentBlock] = [v2.TextContent(text="go")]
    await conn.agent.session_prompt(
        v2.PromptRequest(session_id=session.session_id, prompt=text)
    )
    assert_transcript(client.transcript(), "agent: hi")
    assert agent.methods() == ["initialize", "session/new", "session/prompt"]


async def test_a_fake_keeps_max_calls_and_counts_the_others(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(max_calls=2)
    steps = [acp_core.agent_text(f"{n} ", message_id="m1") for n in range(5)]
    agent = FakeAgent(steps, max_calls=1)
    conn = await acp_in_memory.connect(agent, client)
    assert await prompt(conn, await start_session(conn), "go") == "end_turn"
    assert (len(client.calls), client.dropped) == (2, 3)
    assert (agent.methods(), agent.dropped) == (["initialize"], 2)
    # the transcript is the session's, whole
    assert client.transcript().messages[0].text == "0 1 2 3 4 "


async def test_a_problem_quotes_at_most_max_shown_characters_of_the_peer(
    acp_in_memory: InMemory,
) -> None:
    many = v1.RequestPermissionRequest(
        session_id=SID,
        tool_call=v1.ToolCallUpdate(tool_call_id="c1"),
        options=[
            v1.PermissionOption(option_id="x" * 1000, name="X", kind="reject_once")
        ],
    )
    client = FakeClient(permissions=["allow_once"])
    await play(acp_in_memory, [many], client)
    [problem] = client.problems
    assert problem.endswith("x" * (MAX_SHOWN - 1) + "...")
    assert len(problem) < MAX_SHOWN + 200
    client.problems.clear()


async def test_the_fake_terminal_keeps_the_end_of_its_output_within_the_byte_limit(
    acp_in_memory: InMemory,
) -> None:
    client = FakeClient(terminals={"build": FakeTerminal("né ... fin")})
    steps = [
        v1.CreateTerminalRequest(session_id=SID, command="build", output_byte_limit=9),
        v1.TerminalOutputRequest(session_id=SID, terminal_id="term-1"),
    ]
    agent = await play(acp_in_memory, steps, client)
    output = agent.sent[1].answer
    # 9 bytes from the end would start inside "é": cut at the character after it
    assert (output.output, output.truncated) == (" ... fin", True)
