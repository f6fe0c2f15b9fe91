"""The reference agent serves session list, delete, modes and config options
(issue 30 item 8): ``python -m acp_echo`` as a process, ``acp_trio`` the
client in this process, v1 (and v2 where the draft has the method)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp_trio
import msgspec
import pytest
import trio
from _example_helpers import TIMEOUT, agent_command, child_env
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


class Client:
    """Allows every tool; keeps every update as wire JSON."""

    schema: Any = v1

    def __init__(self, conn: acp_trio.ClientSideConnection[Any]) -> None:
        self.updates: list[dict[str, Any]] = []

    async def session_update(self, params: Any) -> None:
        self.updates.append(msgspec.to_builtins(params)["update"])

    async def session_request_permission(self, params: Any) -> Any:
        answer = {"outcome": {"outcome": "selected", "optionId": "allow"}}
        spec = self.schema.CLIENT_METHODS["session/request_permission"]
        return self.schema.convert(answer, spec.result)


class ClientV1(Client, v1.Client):  # the Protocol names the connection's schema
    pass


class ClientV2(Client, v2.Client):
    schema = v2


@asynccontextmanager
async def echo(
    protocol: int, *args: str
) -> AsyncIterator[acp_trio.ClientSideConnection[Any]]:
    module = v1 if protocol == 1 else v2
    with trio.fail_after(TIMEOUT):
        async with acp_trio.spawn_agent(
            agent_command(*args),
            client={protocol: ClientV1 if protocol == 1 else ClientV2},
            env=child_env(),
        ) as conn:
            info = {"name": "test", "version": "1"}
            init = {"protocolVersion": protocol, "clientInfo": info, "info": info}
            await conn.initialize(module.convert(init, module.InitializeRequest))
            yield conn


async def call(
    conn: acp_trio.ClientSideConnection[Any], method: str, params: dict[str, Any]
) -> dict[str, Any]:
    module = v1 if conn.protocol_version == 1 else v2
    spec = module.AGENT_METHODS[method]
    handler = getattr(conn.agent, spec.handler)
    answer = await handler(module.convert(params, spec.params))
    result: dict[str, Any] = msgspec.to_builtins(answer)
    return result


async def new(conn: acp_trio.ClientSideConnection[Any], cwd: Path) -> dict[str, Any]:
    return await call(conn, "session/new", {"cwd": str(cwd), "mcpServers": []})


def current(answer: dict[str, Any], option: str) -> object:
    return next(o for o in answer["configOptions"] if o["id"] == option)["currentValue"]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_list_answers_the_sessions_of_a_cwd_titled_by_their_first_prompt(
    protocol: int, tmp_path: Path
) -> None:
    async with echo(protocol) as conn:
        first = (await new(conn, tmp_path))["sessionId"]
        elsewhere = tmp_path / "other"
        elsewhere.mkdir()
        await new(conn, elsewhere)
        prompt = [{"type": "text", "text": "fix the tests"}]
        await call(conn, "session/prompt", {"sessionId": first, "prompt": prompt})
        listed = await call(conn, "session/list", {"cwd": str(tmp_path)})
    assert listed["sessions"] == [
        {"sessionId": first, "cwd": str(tmp_path), "title": "fix the tests"}
    ]
    assert "nextCursor" not in listed


async def test_list_pages_with_an_opaque_cursor_and_refuses_a_foreign_one(
    tmp_path: Path,
) -> None:
    async with echo(1) as conn:
        made = [(await new(conn, tmp_path))["sessionId"] for _ in range(51)]
        page = await call(conn, "session/list", {})
        rest = await call(conn, "session/list", {"cursor": page["nextCursor"]})
        with pytest.raises(acp_trio.RequestError) as refused:
            await call(conn, "session/list", {"cursor": "not-ours"})
    listed = [s["sessionId"] for s in page["sessions"] + rest["sessions"]]
    assert len(page["sessions"]) == 50 and listed == made
    assert "nextCursor" not in rest
    assert refused.value.code == acp_trio.INVALID_PARAMS


@pytest.mark.parametrize("protocol", [1, 2])
async def test_delete_forgets_the_session_and_an_unknown_one_succeeds(
    protocol: int, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    async with echo(protocol, "--state-dir", str(state)) as conn:
        sid = (await new(conn, tmp_path))["sessionId"]
        assert (state / f"{sid}.jsonl").exists()
        await call(conn, "session/delete", {"sessionId": sid})
        await call(conn, "session/delete", {"sessionId": "sess_never"})  # silently
        listed = await call(conn, "session/list", {})
        with pytest.raises(acp_trio.RequestError) as gone:
            await call(conn, "session/resume", {"sessionId": sid, "cwd": str(tmp_path)})
    assert listed["sessions"] == []
    assert not (state / f"{sid}.jsonl").exists()
    assert gone.value.code == v1.ERROR_CODE_RESOURCE_NOT_FOUND


async def test_set_mode_switches_the_mode_and_its_config_option_follows(
    tmp_path: Path,
) -> None:
    async with echo(1) as conn:
        opened = await new(conn, tmp_path)
        sid = opened["sessionId"]
        await call(conn, "session/set_mode", {"sessionId": sid, "modeId": "code"})
        client = conn.client
        assert isinstance(client, Client)
        told = [
            u for u in client.updates if u["sessionUpdate"] == "config_option_update"
        ]
        with pytest.raises(acp_trio.RequestError) as refused:
            await call(conn, "session/set_mode", {"sessionId": sid, "modeId": "fly"})
    assert opened["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in opened["modes"]["availableModes"]] == ["ask", "code"]
    assert current(opened, "mode") == "ask"
    assert told and current(told[-1], "mode") == "code"
    assert refused.value.code == acp_trio.INVALID_PARAMS


@pytest.mark.parametrize("protocol", [1, 2])
async def test_set_config_option_answers_every_option_and_the_turn_follows_it(
    protocol: int, tmp_path: Path
) -> None:
    async with echo(protocol) as conn:
        sid = (await new(conn, tmp_path))["sessionId"]
        answer = await call(
            conn,
            "session/set_config_option",
            {"sessionId": sid, "configId": "model", "value": "shout"},
        )
        prompt = [{"type": "text", "text": "quiet please"}]
        await call(conn, "session/prompt", {"sessionId": sid, "prompt": prompt})
        client = conn.client
        assert isinstance(client, Client)
        said = "".join(
            u["content"]["text"]
            for u in client.updates
            if u["sessionUpdate"] == "agent_message_chunk"
        )
        with pytest.raises(acp_trio.RequestError) as refused:
            await call(
                conn,
                "session/set_config_option",
                {"sessionId": sid, "configId": "colour", "value": "red"},
            )
    assert current(answer, "model") == "shout" and current(answer, "mode") == "ask"
    assert "You said: QUIET PLEASE" in said
    assert refused.value.code == acp_trio.INVALID_PARAMS


async def test_modes_and_options_survive_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "state"
    async with echo(1, "--state-dir", str(state)) as conn:
        sid = (await new(conn, tmp_path))["sessionId"]
        await call(conn, "session/set_mode", {"sessionId": sid, "modeId": "code"})
        await call(
            conn,
            "session/set_config_option",
            {"sessionId": sid, "configId": "model", "value": "shout"},
        )
    async with echo(1, "--state-dir", str(state)) as conn:
        resumed = await call(
            conn, "session/resume", {"sessionId": sid, "cwd": str(tmp_path)}
        )
    assert resumed["modes"]["currentModeId"] == "code"
    assert current(resumed, "model") == "shout"
