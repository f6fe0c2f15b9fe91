"""``python -m acp_echo --state-dir`` pointed at a real directory (issue 8 item 12).

The agent runs as a process; the client is ``acp_trio`` in this process.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import acp_trio
import pytest
import trio
from _example_helpers import PYTHON, TIMEOUT, agent_command, child_env
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


class RecordingClient:
    """Grants permissions; keeps the user and agent text of every update."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.transcript = acp_trio.SessionTranscript(version=v1)

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.transcript.apply(params)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id="allow")
        )


@asynccontextmanager
async def echo_agent(
    state: Path, *, wrapper: list[str] | None = None
) -> AsyncIterator[acp_trio.ClientSideConnection[v1.Agent]]:
    command = [*(wrapper or []), *agent_command("--state-dir", str(state))]
    async with acp_trio.spawn_agent(
        command, client=RecordingClient, env=child_env(), capture_stderr=True
    ) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        yield conn


async def new_session(conn: acp_trio.ClientSideConnection[v1.Agent], cwd: Path) -> str:
    new = await conn.agent.session_new(
        v1.NewSessionRequest(cwd=str(cwd), mcp_servers=[])
    )
    return new.session_id


async def prompt(
    conn: acp_trio.ClientSideConnection[v1.Agent], session_id: str, text: str
) -> str:
    result = await conn.agent.session_prompt(
        v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])
    )
    return result.stop_reason


async def load(
    conn: acp_trio.ClientSideConnection[v1.Agent], session_id: str, cwd: Path
) -> list[str]:
    """session/load; the user messages the agent replayed."""
    client = conn.client
    assert isinstance(client, RecordingClient)
    client.transcript = acp_trio.SessionTranscript(version=v1)
    await conn.agent.session_load(
        v1.LoadSessionRequest(session_id=session_id, cwd=str(cwd), mcp_servers=[])
    )
    return [m.text for m in client.transcript.messages if m.role == "user"]


def limit_file_size(size: int) -> list[str]:
    """A command prefix running the rest with RLIMIT_FSIZE = ``size`` bytes:
    writes past it fail with EFBIG, as on a full disk (Python ignores SIGXFSZ)."""
    code = (
        "import os, resource, sys;"
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({size}, {size}));"
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return [PYTHON, "-c", code]


async def test_a_failed_save_leaves_no_file_behind_and_the_turn_still_ends(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    with trio.fail_after(TIMEOUT):
        # room for the session's first record, not for a turn (cut mid-write)
        async with echo_agent(state, wrapper=limit_file_size(600)) as conn:
            session_id = await new_session(conn, tmp_path)
            saved = (state / f"{session_id}.jsonl").read_bytes()
            assert await prompt(conn, session_id, "hello") == "end_turn"
            assert await prompt(conn, session_id, "again") == "end_turn"
        assert b"not saved" in conn.stderr_output
        # no temporary file, no partial line: the file is as before the turns
        assert sorted(os.listdir(state)) == [f"{session_id}.jsonl"]
        assert (state / f"{session_id}.jsonl").read_bytes() == saved

        async with echo_agent(state) as conn:  # room again: the session goes on
            assert await load(conn, session_id, tmp_path) == []
            assert await prompt(conn, session_id, "now saved") == "end_turn"
        async with echo_agent(state) as conn:
            assert await load(conn, session_id, tmp_path) == ["now saved"]


def plant(state: Path, name: str, session_id: str) -> None:
    """A state file ``name`` claiming ``session_id`` (old ``.json`` layout too)."""
    (state / f"{name}.jsonl").write_text(
        json.dumps({"type": "setup", "session_id": session_id, "cwd": "/"}) + "\n"
    )
    (state / f"{name}.json").write_text(
        json.dumps({"session_id": session_id, "cwd": "/"})
    )


async def test_a_state_file_naming_another_session_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "a" / "b" / "state"
    state.mkdir(parents=True)
    plant(state, "sess_evil", "../../escaped")
    with trio.fail_after(TIMEOUT):
        async with echo_agent(state) as conn:
            with pytest.raises(acp_trio.RequestError) as refused:
                await load(conn, "sess_evil", tmp_path)
            assert refused.value.code == v1.ERROR_CODE_RESOURCE_NOT_FOUND
            with pytest.raises(acp_trio.RequestError):
                await prompt(conn, "sess_evil", "hello")
    assert b"refused" in conn.stderr_output
    assert not [p for p in os.listdir(tmp_path / "a") if p.startswith("escaped")]
    assert os.listdir(tmp_path) == ["a"]


async def test_a_fifo_a_directory_or_a_symlink_is_skipped(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plant(elsewhere, "sess_link", "sess_link")
    for suffix in (".json", ".jsonl"):
        os.mkfifo(state / f"sess_fifo{suffix}")
        (state / f"sess_dir{suffix}").mkdir()
        (state / f"sess_link{suffix}").symlink_to(elsewhere / f"sess_link{suffix}")
    before = (elsewhere / "sess_link.jsonl").read_bytes()
    with trio.fail_after(TIMEOUT):  # a FIFO opened for reading would block
        async with echo_agent(state) as conn:
            for name in ("sess_fifo", "sess_dir", "sess_link"):
                with pytest.raises(acp_trio.RequestError) as refused:
                    await load(conn, name, tmp_path)
                assert refused.value.code == v1.ERROR_CODE_RESOURCE_NOT_FOUND
            # and a session never writes through a symlink
            session_id = await new_session(conn, tmp_path)
            link = state / f"{session_id}.jsonl"
            link.unlink()
            link.symlink_to(elsewhere / "sess_link.jsonl")
            assert await prompt(conn, session_id, "hello") == "end_turn"
    assert (elsewhere / "sess_link.jsonl").read_bytes() == before


async def test_two_agents_sharing_the_state_dir_lose_no_turn(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with trio.fail_after(TIMEOUT):
        async with echo_agent(state) as a, echo_agent(state) as b:
            session_id = await new_session(a, tmp_path)
            assert await prompt(a, session_id, "turn 1") == "end_turn"
            assert await load(b, session_id, tmp_path) == ["turn 1"]
            for n, agent in enumerate([a, b, a, b], 2):
                assert await prompt(agent, session_id, f"turn {n}") == "end_turn"
        async with echo_agent(state) as c:
            replayed = await load(c, session_id, tmp_path)
    assert replayed == [f"turn {n}" for n in range(1, 6)]


async def test_a_bad_mcp_entry_does_not_break_the_session(tmp_path: Path) -> None:
    state = tmp_path / "state"
    custom = {"type": "_custom", "name": "local", "socket": "/run/mcp.sock"}

    class V2Client:
        acp_schema = v2  # the 2.0.0-alpha.0 draft (see docs/guide.md)

        def __init__(self, conn: acp_trio.ClientSideConnection[v2.Agent]) -> None:
            self.text: list[str] = []

        async def session_update(self, params: v2.SessionNotification) -> None:
            update = params.update
            if isinstance(update, v2.AgentMessageChunk) and isinstance(
                update.content, v2.TextContent
            ):
                self.text.append(update.content.text)

        async def session_request_permission(
            self, params: v2.RequestPermissionRequest
        ) -> v2.RequestPermissionResponse:
            return v2.RequestPermissionResponse(
                outcome=v2.SelectedPermissionOutcome(option_id="allow")
            )

    command = agent_command("--state-dir", str(state))
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            command, client={2: V2Client}, env=child_env()
        ) as conn:
            await conn.agent.initialize(v2.InitializeRequest(protocol_version=2))
            new = await conn.agent.session_new(
                v2.convert(
                    {"cwd": str(tmp_path), "mcpServers": [custom]},
                    v2.NewSessionRequest,
                )
            )
            result = await conn.agent.session_prompt(
                v2.PromptRequest(
                    session_id=new.session_id, prompt=[v2.TextContent(text="hi")]
                )
            )
            assert result.stop_reason == "end_turn"
            client = conn.client
            assert isinstance(client, V2Client)
            assert "MCP server local (_custom): (no address)" in "".join(client.text)

    # an entry edited on disk into something else entirely
    path = state / f"{new.session_id}.jsonl"
    setup = json.loads(path.read_text().splitlines()[0])
    setup["mcp_servers"] = [42, {"name": "half"}]
    path.write_text(json.dumps(setup) + "\n")
    with trio.fail_after(TIMEOUT):
        async with echo_agent(state) as conn:
            assert await load(conn, new.session_id, tmp_path) == []
            assert await prompt(conn, new.session_id, "still works") == "end_turn"


def written_bytes(pid: int) -> int:
    """Bytes the process passed to write(2) so far (pipes and files alike)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/PID/io")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/io")
async def test_saving_a_turn_costs_the_turn_not_the_whole_history(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    costs = []
    with trio.fail_after(TIMEOUT):
        async with echo_agent(state) as conn:
            assert conn.process is not None
            session_id = await new_session(conn, tmp_path)
            for n in range(40):
                before = written_bytes(conn.process.pid)
                assert await prompt(conn, session_id, f"turn {n}") == "end_turn"
                costs.append(written_bytes(conn.process.pid) - before)
    # a whole-history save grows the cost of each turn by a turn's worth
    # (about 10x more by turn 40); an append stays flat
    assert costs[-1] < 1.2 * costs[2], costs
    lines = (state / f"{session_id}.jsonl").read_text().splitlines()
    assert len(lines) == 41  # the setup, then one line per turn
