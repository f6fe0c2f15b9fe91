"""The stdio transport between two real processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import acp_trio
import acp_trio._subprocess
import pytest
import trio
from _acp_helpers import ECHO_AGENT, INIT_V1, PYTHON, RecordingClient, text_prompt
from acp_schema import v1

NEW = v1.NewSessionRequest(cwd="/", mcp_servers=[])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    here = os.path.dirname(ECHO_AGENT)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (here, env.get("PYTHONPATH", "")) if p
    )
    return env


async def test_two_processes_initialize_open_a_session_and_prompt() -> None:
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT], client=RecordingClient, env=_env()
        ) as conn:
            init = await conn.agent.initialize(INIT_V1)
            assert init.protocol_version == 1
            s = await conn.agent.session_new(NEW)
            result = await conn.agent.session_prompt(
                text_prompt(s.session_id, "hi", "there")
            )
            assert result.stop_reason == "end_turn"
            assert conn.client.texts() == ["hi", "there"]  # type: ignore[attr-defined]
            process = conn.process
        assert process is not None and process.returncode == 0  # exited on stdin EOF


async def test_agent_stdout_carries_only_protocol_bytes_logs_go_to_stderr() -> None:
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT, "print"],
            client=RecordingClient,
            env=_env(),
            capture_stderr=True,
        ) as conn:
            await conn.agent.initialize(INIT_V1)
            s = await conn.agent.session_new(NEW)
            result = await conn.agent.session_prompt(text_prompt(s.session_id, "x"))
            assert result.stop_reason == "end_turn"
        assert b"stray print on stdout" in conn.stderr_output
        assert b"a log line" in conn.stderr_output


async def test_a_peer_killed_mid_request_fails_the_request_promptly() -> None:
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT, "hang"], client=RecordingClient, env=_env()
        ) as conn:
            await conn.agent.initialize(INIT_V1)
            s = await conn.agent.session_new(NEW)
            assert conn.process is not None
            async with trio.open_nursery() as nursery:

                async def kill() -> None:
                    await trio.sleep(0.2)
                    conn.process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]

                nursery.start_soon(kill)
                with pytest.raises(acp_trio.ConnectionClosed):
                    await conn.agent.session_prompt(text_prompt(s.session_id, "x"))
        assert conn.process.returncode == -signal.SIGKILL


async def test_an_agent_that_ignores_stdin_eof_is_terminated_after_the_grace_period() -> (
    None
):
    script = "import signal, time; time.sleep(60)"
    with trio.fail_after(10):
        async with acp_trio.spawn_agent(
            [PYTHON, "-c", script], client=RecordingClient, grace_period=0.3
        ) as conn:
            pass
    assert conn.process is not None and conn.process.returncode == -signal.SIGTERM


async def test_v2_is_negotiated_with_an_agent_process_offering_both() -> None:
    from acp_schema import v2_alpha0 as v2

    class V2Client:
        acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

        def __init__(self, conn: acp_trio.ClientSideConnection) -> None:
            pass

    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT], client={1: RecordingClient, 2: V2Client}, env=_env()
        ) as conn:
            init = await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
            assert (
                isinstance(init, v2.InitializeResponse) and conn.protocol_version == 2
            )


async def test_serve_agent_stdio_restores_blocking_mode_over_pipes() -> None:
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT, "blocking"],
            client=RecordingClient,
            env=_env(),
            capture_stderr=True,
        ) as conn:
            await conn.agent.initialize(INIT_V1)
    assert b"blocking: stdin=True stdout=True" in conn.stderr_output


async def test_serve_agent_stdio_restores_blocking_mode_over_one_socket() -> None:
    # stdin and stdout are one file description (like a terminal): trio's
    # per-stream restore alone would leave it non-blocking.
    ours, theirs = socket.socketpair()
    with ours, theirs, trio.fail_after(20):
        process = await trio.lowlevel.open_process(
            [PYTHON, ECHO_AGENT, "blocking"],
            stdin=theirs.fileno(),
            stdout=theirs.fileno(),
            stderr=subprocess.PIPE,
            env=_env(),
        )
        theirs.close()
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(ours))
        async with acp_trio.connect_to_agent(stream, RecordingClient) as conn:
            assert (await conn.agent.initialize(INIT_V1)).protocol_version == 1
        assert process.stderr is not None
        stderr = b""
        async with process.stderr:
            while data := await process.stderr.receive_some():
                stderr += data
        assert await process.wait() == 0
    assert b"blocking: stdin=True stdout=True" in stderr, stderr


async def test_start_new_session_keeps_terminal_sigint_from_the_agent() -> None:
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT],
            client=RecordingClient,
            env=_env(),
            start_new_session=True,
        ) as conn:
            assert conn.process is not None
            assert os.getsid(conn.process.pid) != os.getsid(0)
            await conn.agent.initialize(INIT_V1)
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT], client=RecordingClient, env=_env()
        ) as conn:
            assert conn.process is not None
            assert os.getsid(conn.process.pid) == os.getsid(0)


# -- the agent's process group ---------------------------------------------------------

FAMILY_AGENT = os.path.join(os.path.dirname(ECHO_AGENT), "family_agent.py")


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (zombies have)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def _pids(path: str) -> dict[str, int]:
    """The pids the agent wrote before serving (so: once it answered)."""
    with open(path) as f:
        pids: dict[str, int] = json.load(f)
    return pids


async def _until_gone(pid: int) -> None:
    # SIGKILL is delivered when the target next runs: give it a moment (polled:
    # no event tells the exit of a process that is not our child)
    while _running(pid):  # noqa: ASYNC110
        await trio.sleep(0.01)


@pytest.mark.parametrize("start_new_session", [False, True])
async def test_spawn_agent_ends_the_agents_whole_process_group(
    tmp_path: Path, start_new_session: bool
) -> None:
    pidfile = str(tmp_path / "pids")
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, FAMILY_AGENT, "leave", pidfile],
            client=RecordingClient,
            env=_env(),
            grace_period=10,  # exits on EOF well within it; its child costs no wait
            capture_stderr=True,  # a pipe the grandchild holds too
            start_new_session=start_new_session,
        ) as conn:
            await conn.agent.initialize(INIT_V1)
            pids = _pids(pidfile)
            assert conn.process is not None
            assert os.getpgid(pids["grandchild"]) == conn.process.pid
            assert (os.getsid(conn.process.pid) != os.getsid(0)) is start_new_session
        assert conn.process.returncode == 0  # the agent itself exited on EOF
        await _until_gone(pids["grandchild"])


async def test_a_process_group_ignoring_sigterm_is_killed_after_the_grace_period(
    tmp_path: Path,
) -> None:
    pidfile = str(tmp_path / "pids")
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, FAMILY_AGENT, "stubborn", pidfile],
            client=RecordingClient,
            env=_env(),
            grace_period=0.3,
        ) as conn:
            await conn.agent.initialize(INIT_V1)
            pids = _pids(pidfile)
        assert conn.process is not None
        assert conn.process.returncode == -signal.SIGKILL
        await _until_gone(pids["grandchild"])
        assert not acp_trio._subprocess.group_alive(pids["agent"])


CLIENT_PROGRAM = """
import sys, trio, acp_trio
sys.path.insert(0, {here!r})
from _acp_helpers import INIT_V1, RecordingClient

async def main():
    async with acp_trio.spawn_agent(
        [sys.executable, {agent!r}, "leave", {pidfile!r}],
        client=RecordingClient, grace_period=10,
    ) as conn:
        await conn.agent.initialize(INIT_V1)
    print("client done")

trio.run(main)
"""


async def test_a_pipe_held_by_a_grandchild_does_not_keep_the_client_from_finishing(
    tmp_path: Path,
) -> None:
    # `client.py 2>&1 | cat`: the agent inherits the client's stderr, its child
    # too; the reader of the client's output ends only when every holder is gone.
    pidfile = str(tmp_path / "pids")
    program = CLIENT_PROGRAM.format(
        here=os.path.dirname(ECHO_AGENT), agent=FAMILY_AGENT, pidfile=pidfile
    )
    with trio.fail_after(20):
        result = await trio.run_process(
            [PYTHON, "-c", program],
            capture_stdout=True,
            capture_stderr=True,
            env=_env(),
        )
        assert result.stdout == b"client done\n", result.stderr
        await _until_gone(_pids(pidfile)["grandchild"])
