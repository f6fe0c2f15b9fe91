"""acp_asyncio's own part: transports, processes, the end of a connection.

The protocol rules are the engine's and are tested on both adapters in
tests/adapters; these are the asyncio adapter's duties (real processes,
real pipes and sockets).  pytest runs async tests on trio in this project,
so these are synchronous and run their own asyncio loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import acp_asyncio
import pytest
from acp_schema import v1

HERE = Path(__file__).resolve().parent
AGENT = str(HERE / "asyncio_agent.py")
PYTHON = sys.executable
TIMEOUT = 60  # a hang guard only: generous, as a loaded 2-core machine is slow
T = TypeVar("T")


def run(main: Callable[[], Awaitable[T]]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(main(), TIMEOUT)

    return asyncio.run(bounded())


class Client(v1.Client):
    def __init__(self, conn: acp_asyncio.ClientSideConnection[v1.Agent]) -> None:
        self.texts: list[str] = []
        self.asked = asyncio.Event()

    async def session_update(self, params: v1.SessionNotification) -> None:
        update = params.update
        if isinstance(update, v1.AgentMessageChunk) and isinstance(
            update.content, v1.TextContent
        ):
            self.texts.append(update.content.text)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.asked.set()
        await asyncio.Event().wait()  # until session/cancel answers it
        raise AssertionError("not reached")


def prompt(text: str) -> v1.PromptRequest:
    return v1.PromptRequest(session_id="s1", prompt=[v1.TextContent(text=text)])


INIT = v1.InitializeRequest(protocol_version=1)
NEW = v1.NewSessionRequest(cwd="/tmp", mcp_servers=[])


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


# -- stdio --------------------------------------------------------------------------------


def test_a_stray_print_in_an_agent_goes_to_stderr_not_the_protocol() -> None:
    async def main() -> tuple[str, bytearray]:
        async with acp_asyncio.spawn_agent(
            [PYTHON, AGENT, "noisy"], client=Client, capture_stderr=True
        ) as conn:
            init = await conn.agent.initialize(INIT)
            assert init.agent_info is not None
            return init.agent_info.name, conn.stderr_output

    name, stderr = run(main)
    assert name == "asyncio-test-agent"
    assert b"noise from initialize" in stderr


def test_serve_agent_stdio_restores_the_blocking_mode_of_stdin_and_stdout() -> None:
    agent = subprocess.Popen(
        [PYTHON, AGENT, "report-blocking"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = agent.communicate(
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n',
        timeout=TIMEOUT,
    )
    assert agent.returncode == 0, err
    assert json.loads(out)["result"]["protocolVersion"] == 1
    # asyncio's pipe transports set O_NONBLOCK on the shared file descriptions
    assert b"blocking=True True" in err


def test_an_agent_reads_requests_from_a_file_and_writes_answers_to_a_file(
    tmp_path: Path,
) -> None:
    requests = tmp_path / "requests.jsonl"
    replies = tmp_path / "replies.jsonl"
    requests.write_text(
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
    )
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        done = subprocess.run(
            [PYTHON, AGENT], stdin=stdin, stdout=stdout, timeout=TIMEOUT, check=False
        )
    assert done.returncode == 0
    (reply,) = replies.read_text().splitlines()
    assert json.loads(reply)["result"]["agentInfo"]["name"] == "asyncio-test-agent"


def test_an_agent_with_stdin_from_dev_null_exits_at_once() -> None:
    done = subprocess.run(
        [PYTHON, AGENT],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b""), done.stderr


# -- the agent's process and its group ----------------------------------------------------


def test_the_agent_s_process_group_ends_with_the_connection() -> None:
    async def main() -> bytearray:
        async with acp_asyncio.spawn_agent(
            [PYTHON, AGENT, "family"], client=Client, capture_stderr=True
        ) as conn:
            await conn.agent.initialize(INIT)
            assert conn.process is not None and conn.process.returncode is None
            return conn.stderr_output

    stderr = run(main)
    child = int(bytes(stderr).split(b"child=")[1].split()[0])
    # the agent exited on EOF and left its child: the group got SIGTERM
    assert not pid_alive(child)


def test_an_agent_that_ignores_eof_and_sigterm_is_killed_after_the_grace() -> None:
    script = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "time.sleep(1000)"
    )

    async def main() -> int | None:
        async with acp_asyncio.spawn_agent(
            [PYTHON, "-c", script], client=Client, grace_period=0.3
        ) as conn:
            process = conn.process
        assert process is not None
        return process.returncode

    assert run(main) == -signal.SIGKILL


def test_an_agent_killed_mid_prompt_fails_the_prompt_with_connection_closed() -> None:
    async def main() -> None:
        async with acp_asyncio.spawn_agent([PYTHON, AGENT], client=Client) as conn:
            await conn.agent.initialize(INIT)
            await conn.agent.session_new(NEW)
            turn = asyncio.ensure_future(conn.agent.session_prompt(prompt("wait")))
            await asyncio.sleep(0.2)
            assert conn.process is not None
            os.kill(conn.process.pid, signal.SIGKILL)
            with pytest.raises(acp_asyncio.ConnectionClosed):
                await turn

    run(main)


# -- the end of input -----------------------------------------------------------------------


def half_closed_turn(text: str) -> tuple[list[dict[str, Any]], int]:
    """Initialize, open a session, send a prompt and close the agent's stdin at
    once (still reading its stdout): what it wrote, and its exit status."""
    agent = subprocess.Popen(
        [PYTHON, AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert agent.stdin is not None and agent.stdout is not None
    agent.stdin.write(
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
    )
    agent.stdin.flush()
    assert json.loads(agent.stdout.readline())["id"] == 0  # nothing pipelined before
    out, _ = agent.communicate(
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":'
        b'{"sessionId":"s1","prompt":[{"type":"text","text":"%b"}]}}\n' % text.encode(),
        timeout=TIMEOUT,
    )
    return [json.loads(line) for line in out.splitlines()], agent.returncode


def test_a_prompt_running_when_the_client_half_closes_is_still_answered() -> None:
    replies, status = half_closed_turn("sleep 0.3")
    assert replies[-1] == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"stopReason": "end_turn"},
    }
    assert replies[-2]["params"]["update"]["content"]["text"] == "sleep 0.3"
    assert status == 0


def test_a_handler_still_running_after_the_grace_is_answered_cancelled() -> None:
    replies, status = half_closed_turn("wait")
    assert replies[-1]["id"] == 2 and replies[-1]["error"]["code"] == -32800
    assert status == 0


# -- over a stream pair --------------------------------------------------------------------


class StreamAgent(v1.Agent):
    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        for word in ("one", "two"):
            update = acp_asyncio.agent_text(word, message_id="m1")
            await self.client.session_update(acp_asyncio.notification("s1", update))
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id="s1",
                tool_call=v1.ToolCallUpdate(tool_call_id="c1"),
                options=[
                    v1.PermissionOption(option_id="y", name="Y", kind="allow_once")
                ],
            )
        )
        assert isinstance(answer.outcome, v1.RequestPermissionOutcomeCancelled)
        return v1.PromptResponse(stop_reason="end_turn")  # rewritten: "cancelled"


def test_connect_to_agent_and_connect_to_client_over_a_socket_pair() -> None:
    async def main() -> tuple[v1.PromptResponse, list[str], Any]:
        ours, theirs = socket.socketpair()
        agent_r, agent_w = await asyncio.open_connection(sock=theirs)
        client_r, client_w = await asyncio.open_connection(sock=ours)
        async with (
            acp_asyncio.connect_to_client(agent_r, agent_w, StreamAgent) as agent_conn,
            acp_asyncio.connect_to_agent(client_r, client_w, Client) as conn,
        ):
            await conn.agent.initialize(INIT)
            await conn.agent.session_new(NEW)
            client = conn.client
            assert isinstance(client, Client)
            turn = asyncio.ensure_future(conn.agent.session_prompt(prompt("hi")))
            await client.asked.wait()
            await conn.agent.session_cancel(v1.CancelNotification(session_id="s1"))
            result = await turn
            return result, client.texts, agent_conn.client_capabilities

    result, texts, caps = run(main)
    # the client answered its pending permission request "cancelled", and
    # the agent's normal return after the cancel was answered "cancelled"
    assert result.stop_reason == "cancelled"
    assert texts == ["one", "two"]
    assert caps is not None


def test_serve_agent_returns_when_the_client_closes_the_socket() -> None:
    async def main() -> str:
        ours, theirs = socket.socketpair()
        agent_r, agent_w = await asyncio.open_connection(sock=theirs)
        serving = asyncio.ensure_future(
            acp_asyncio.serve_agent(agent_r, agent_w, StreamAgent)
        )
        client_r, client_w = await asyncio.open_connection(sock=ours)
        client_w.write(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
        )
        reply = await client_r.readline()
        client_w.close()
        await asyncio.wait_for(serving, 5)
        return reply.decode()

    assert json.loads(run(main))["result"]["protocolVersion"] == 1


class ExtAgent(StreamAgent):
    def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
        super().__init__(conn)
        self.notes: list[tuple[str, Any]] = []
        self.noted = asyncio.Event()

    async def ext_method(self, method: str, params: Any) -> Any:
        return {"method": method, "echo": params}

    async def ext_notification(self, method: str, params: Any) -> None:
        self.notes.append((method, params))
        self.noted.set()


def test_extension_requests_and_notifications_reach_ext_method_and_ext_notification() -> (
    None
):
    async def main() -> tuple[Any, list[tuple[str, Any]]]:
        ours, theirs = socket.socketpair()
        agent_r, agent_w = await asyncio.open_connection(sock=theirs)
        client_r, client_w = await asyncio.open_connection(sock=ours)
        async with (
            acp_asyncio.connect_to_client(agent_r, agent_w, ExtAgent) as agent_conn,
            acp_asyncio.connect_to_agent(client_r, client_w, Client) as conn,
        ):
            await conn.agent.initialize(INIT)
            answer = await conn.ext_request("_acme/echo", {"n": 1})
            await conn.ext_notify("_acme/note", {"seen": True})
            agent = agent_conn.agent
            assert isinstance(agent, ExtAgent)
            await agent.noted.wait()
            with pytest.raises(ValueError):
                await conn.ext_request("no_underscore", {})
            return answer, agent.notes

    answer, notes = run(main)
    assert answer == {"method": "_acme/echo", "echo": {"n": 1}}
    assert notes == [("_acme/note", {"seen": True})]
