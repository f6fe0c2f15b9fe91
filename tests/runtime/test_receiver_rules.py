"""The client as receiver: agent calls it did not advertise, paths that are not absolute here.

And the agent's own path rules by the same machinery: the host's rule at the
receiver, "absolute somewhere" at the sender.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import acp_trio
import msgspec
import pytest
import trio
from _acp_helpers import (
    EchoAgent,
    RawPeer,
    RecordingClient,
    raw_agent_of,
    raw_client_of,
)
from acp_schema import v1

ALL = v1.ClientCapabilities(
    fs=v1.FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
)

CALLS: dict[str, dict[str, Any]] = {
    "fs/read_text_file": {"sessionId": "s", "path": "/etc/hostname"},
    "fs/write_text_file": {"sessionId": "s", "path": "/tmp/x", "content": "c"},
    "terminal/create": {"sessionId": "s", "command": "ls"},
    "terminal/output": {"sessionId": "s", "terminalId": "t"},
    "terminal/release": {"sessionId": "s", "terminalId": "t"},
    "terminal/wait_for_exit": {"sessionId": "s", "terminalId": "t"},
    "terminal/kill": {"sessionId": "s", "terminalId": "t"},
}


class ToolClient(RecordingClient):
    """Implements every fs/terminal method and records what reached it."""

    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        super().__init__(conn)
        self.served: list[Any] = []

    async def fs_read_text_file(
        self, params: v1.ReadTextFileRequest
    ) -> v1.ReadTextFileResponse:
        self.served.append(params)
        return v1.ReadTextFileResponse(content="text")

    async def fs_write_text_file(
        self, params: v1.WriteTextFileRequest
    ) -> v1.WriteTextFileResponse:
        self.served.append(params)
        return v1.WriteTextFileResponse()

    async def terminal_create(
        self, params: v1.CreateTerminalRequest
    ) -> v1.CreateTerminalResponse:
        self.served.append(params)
        return v1.CreateTerminalResponse(terminal_id="t")

    async def terminal_output(
        self, params: v1.TerminalOutputRequest
    ) -> v1.TerminalOutputResponse:
        self.served.append(params)
        return v1.TerminalOutputResponse(output="", truncated=False)

    async def terminal_release(
        self, params: v1.ReleaseTerminalRequest
    ) -> v1.ReleaseTerminalResponse:
        self.served.append(params)
        return v1.ReleaseTerminalResponse()

    async def terminal_wait_for_exit(
        self, params: v1.WaitForTerminalExitRequest
    ) -> v1.WaitForTerminalExitResponse:
        self.served.append(params)
        return v1.WaitForTerminalExitResponse(exit_code=0)

    async def terminal_kill(
        self, params: v1.KillTerminalRequest
    ) -> v1.KillTerminalResponse:
        self.served.append(params)
        return v1.KillTerminalResponse()

    async def elicitation_complete(
        self, params: v1.CompleteElicitationNotification
    ) -> None:
        self.served.append(params)


async def initialize_with(
    conn: acp_trio.ClientSideConnection[Any],
    peer: RawPeer,
    caps: v1.ClientCapabilities | None,
) -> None:
    """``conn`` sends ``initialize`` advertising ``caps``; ``peer`` answers v1."""

    async def answer() -> None:
        request = await peer.receive()
        await peer.send(
            {"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 1}}
        )

    init = v1.InitializeRequest(protocol_version=1)
    if caps is not None:
        init = v1.InitializeRequest(protocol_version=1, client_capabilities=caps)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(answer)
        await conn.agent.initialize(init)


# -- capabilities ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "caps",
    [
        None,  # clientCapabilities absent
        v1.ClientCapabilities(),  # present, advertising nothing
        v1.ClientCapabilities(fs=v1.FileSystemCapabilities(), terminal=False),
    ],
    ids=["absent", "empty", "false"],
)
async def test_the_client_refuses_fs_and_terminal_calls_it_did_not_advertise(
    caps: v1.ClientCapabilities | None,
) -> None:
    async with raw_agent_of(ToolClient) as (conn, peer):
        await initialize_with(conn, peer, caps)
        for i, (method, params) in enumerate(CALLS.items()):
            reply = await peer.call(i, method, params)
            assert reply["error"] == {
                "code": -32601,
                "message": f"Method not found: {method}",
                "data": {
                    "method": method,
                    "message": f"this client did not advertise support for {method}",
                },
            }, reply
        assert conn.client.served == []  # type: ignore[attr-defined]


async def test_the_client_serves_exactly_the_fs_and_terminal_calls_it_advertised() -> (
    None
):
    read_only = v1.ClientCapabilities(fs=v1.FileSystemCapabilities(read_text_file=True))
    async with raw_agent_of(ToolClient) as (conn, peer):
        await initialize_with(conn, peer, read_only)
        read = await peer.call(1, "fs/read_text_file", CALLS["fs/read_text_file"])
        write = await peer.call(2, "fs/write_text_file", CALLS["fs/write_text_file"])
        term = await peer.call(3, "terminal/create", CALLS["terminal/create"])
    assert read["result"] == {"content": "text"}
    assert write["error"]["code"] == -32601 and term["error"]["code"] == -32601
    async with raw_agent_of(ToolClient) as (conn, peer):
        await initialize_with(conn, peer, ALL)
        for i, (method, params) in enumerate(CALLS.items()):
            assert "result" in await peer.call(i, method, params), method
        assert len(conn.client.served) == len(CALLS)  # type: ignore[attr-defined]


async def test_elicitation_complete_the_client_did_not_advertise_is_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    form_only = v1.ClientCapabilities(
        elicitation=v1.ElicitationCapabilities(form=v1.ElicitationFormCapabilities())
    )
    async with raw_agent_of(ToolClient) as (conn, peer):
        await initialize_with(conn, peer, form_only)
        await peer.send(
            {
                "jsonrpc": "2.0",
                "method": "elicitation/complete",
                "params": {"elicitationId": "e1"},
            }
        )
        # a request behind it is answered after the notification was dealt with
        await peer.call(1, "fs/read_text_file", CALLS["fs/read_text_file"])
        assert conn.client.served == []  # type: ignore[attr-defined]
    assert any(
        "elicitation/complete" in r.getMessage() and r.levelno == logging.WARNING
        for r in caplog.records
    )


# -- paths ------------------------------------------------------------------------------

NOT_ABSOLUTE_HERE = [
    "../../etc/passwd",
    "etc/passwd",
    "",
    "/etc/pass\0wd",
    *(
        ["C:\\x", "c:/../../etc", "\\\\server\\share", "C:/Windows"]
        if os.name == "posix"
        else ["/etc/passwd", "\\etc", "C:x"]
    ),
]


@pytest.mark.parametrize("path", NOT_ABSOLUTE_HERE)
async def test_the_client_refuses_paths_not_absolute_on_its_host(path: str) -> None:
    async with raw_agent_of(ToolClient) as (conn, peer):
        await initialize_with(conn, peer, ALL)
        read = await peer.call(1, "fs/read_text_file", {"sessionId": "s", "path": path})
        write = await peer.call(
            2, "fs/write_text_file", {"sessionId": "s", "path": path, "content": ""}
        )
        term = await peer.call(
            3, "terminal/create", {"sessionId": "s", "command": "ls", "cwd": path}
        )
        assert conn.client.served == []  # type: ignore[attr-defined]
    for reply, field in ((read, "path"), (write, "path"), (term, "cwd")):
        assert reply["error"]["code"] == -32602, reply
        assert reply["error"]["data"]["path"] == f"$.params.{field}"
        why = "NUL" if "\0" in path else "absolute"
        assert why in reply["error"]["data"]["message"]


async def test_the_client_serves_absolute_paths_and_a_terminal_without_cwd() -> None:
    absolute = "/etc/hostname" if os.name == "posix" else "C:\\x"
    async with raw_agent_of(ToolClient) as (conn, peer):
        await initialize_with(conn, peer, ALL)
        read = await peer.call(
            1, "fs/read_text_file", {"sessionId": "s", "path": absolute}
        )
        term = await peer.call(
            2, "terminal/create", {"sessionId": "s", "command": "ls"}
        )
    assert read["result"] == {"content": "text"} and "result" in term


@pytest.mark.parametrize("path", NOT_ABSOLUTE_HERE)
async def test_the_agent_refuses_session_paths_not_absolute_on_its_host(
    path: str,
) -> None:
    async with raw_client_of(EchoAgent) as peer:
        await peer.initialize()
        new = await peer.call(1, "session/new", {"cwd": path, "mcpServers": []})
    assert new["error"]["code"] == -32602
    assert new["error"]["data"]["path"] == "$.params.cwd"


@pytest.mark.parametrize(
    ("path", "sent"),
    [
        ("../../etc/passwd", False),
        ("/etc/pass\0wd", False),
        ("/etc/passwd", True),
        ("C:\\Users\\me\\x.txt", True),  # absolute for a Windows client: its rule
    ],
)
async def test_the_agent_refuses_before_sending_fs_paths_absolute_nowhere(
    path: str, sent: bool
) -> None:
    async with trio.open_nursery() as nursery:
        a, b = acp_trio.memory_stream_pair()
        agent_conn = await nursery.start(acp_trio.serve_agent, a, EchoAgent)
        peer = RawPeer(b)
        caps = msgspec.to_builtins(ALL)
        init = {"protocolVersion": 1, "clientCapabilities": caps}
        assert "result" in await peer.call(0, "initialize", init)
        request = v1.ReadTextFileRequest(session_id="s", path=path)
        if not sent:
            with trio.fail_after(5), pytest.raises(acp_trio.RequestError) as err:
                await agent_conn.client.fs_read_text_file(request)
            assert err.value.code == -32602
            assert err.value.data["path"] == "$.params.path"
            await agent_conn.ext_notify("_marker", {})
            assert (await peer.receive())["method"] == "_marker"  # nothing else sent
        else:
            nursery.start_soon(agent_conn.client.fs_read_text_file, request)
            assert (await peer.receive())["params"]["path"] == path
        nursery.cancel_scope.cancel()
