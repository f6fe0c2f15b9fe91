"""An agent written with the official Python SDK (``agent-client-protocol``, v1) that
needs authentication and uses the client's files and terminals.

``python sdk_tool_agent.py [--login]``:

* ``initialize`` lists three methods: ``key`` (the agent reads ``SDK_AGENT_KEY``
  from its environment when ``authenticate`` names it),
  ``token`` (the default ``agent`` type, never succeeds) and, when the client
  advertised ``auth.terminal``, ``login`` (type ``terminal``, ``args: ["--login"]``):
  ``sdk_tool_agent.py --login`` writes ``$SDK_AGENT_LOGIN`` (with
  ``$SDK_AGENT_LOGIN_ASKS`` set, after reading a code typed on its stdin) and exits 0; an agent
  started while that file exists is authenticated.
* ``session/new`` is refused -32000 until authenticated.
* A prompt is a command: ``read PATH``, ``write PATH TEXT``, ``run CMD ARG...``
  (``terminal/create`` with a 64-byte output limit, ``wait_for_exit``,
  ``output``, ``release``), ``start CMD ARG...`` (left running), ``kill CMD
  ARG...`` (``terminal/kill``, then ``wait_for_exit``), ``tool`` (a tool call whose permission options are
  "allow always" and "reject once"). Each reply says what happened, or the
  client's error message.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from typing import Any

from acp import (
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
    text_block,
)
from acp.helpers import start_tool_call
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AuthEnvVar,
    AuthMethodAgent,
    EnvVarAuthMethod,
    Implementation,
    PermissionOption,
    TerminalAuthMethod,
    ToolCallUpdate,
)


class ToolAgent:
    def __init__(self) -> None:
        self.conn: Client | None = None
        login = os.environ.get("SDK_AGENT_LOGIN")
        self.authenticated = bool(login and os.path.exists(login))

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        methods: list[Any] = [
            # as real agents do: an ``agent`` method whose agent reads a variable
            AuthMethodAgent(
                id="key", name="API key", description="Reads SDK_AGENT_KEY"
            ),
            AuthMethodAgent(id="token", name="Token", description="Never works"),
            # as codex-acp does: v2's env_var type, sent to a v1 client
            EnvVarAuthMethod(
                type="env_var",
                id="env",
                name="Environment",
                vars=[AuthEnvVar(name="SDK_AGENT_KEY")],
            ),
        ]
        auth = getattr(client_capabilities, "auth", None)
        if auth is not None and auth.terminal:
            methods.append(
                TerminalAuthMethod(
                    type="terminal", id="login", name="Log in", args=["--login"]
                )
            )
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            auth_methods=methods,
            agent_info=Implementation(name="sdk-tool-agent", version="0.12.1"),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        if method_id in ("key", "env") and os.environ.get("SDK_AGENT_KEY"):
            self.authenticated = True
            return
        raise RequestError.auth_required({"reason": f"{method_id} failed"})

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        if not self.authenticated:
            raise RequestError.auth_required()
        return NewSessionResponse(session_id="sess_tool")

    async def say(self, session_id: str, text: str) -> None:
        assert self.conn is not None
        await self.conn.session_update(
            session_id=session_id,
            update=AgentMessageChunk(
                session_update="agent_message_chunk", content=text_block(text)
            ),
        )

    async def prompt(
        self, session_id: str, prompt: list[Any], **kwargs: Any
    ) -> PromptResponse:
        assert self.conn is not None
        words = shlex.split(" ".join(getattr(b, "text", "") for b in prompt))
        try:
            reply = await self.command(session_id, words)
        except RequestError as exc:
            reply = f"error: {exc}"
        await self.say(session_id, reply)
        return PromptResponse(stop_reason="end_turn")

    async def command(self, session_id: str, words: list[str]) -> str:
        conn = self.conn
        assert conn is not None
        if words[0] == "read":
            read = await conn.read_text_file(session_id=session_id, path=words[1])
            return f"read: {read.content}"
        if words[0] == "write":
            await conn.write_text_file(
                session_id=session_id, path=words[1], content=" ".join(words[2:])
            )
            return "wrote"
        if words[0] == "run":
            terminal = await conn.create_terminal(
                session_id=session_id,
                command=words[1],
                args=words[2:],
                output_byte_limit=64,
            )
            tid = terminal.terminal_id
            done = await conn.wait_for_terminal_exit(
                session_id=session_id, terminal_id=tid
            )
            out = await conn.terminal_output(session_id=session_id, terminal_id=tid)
            await conn.release_terminal(session_id=session_id, terminal_id=tid)
            return (
                f"exit {done.exit_code} signal {done.signal}"
                f" truncated {out.truncated}: {out.output}"
            )
        if words[0] == "start":  # left running: the client ends it on exit
            terminal = await conn.create_terminal(
                session_id=session_id, command=words[1], args=words[2:]
            )
            tid = terminal.terminal_id
            for _ in range(500):  # until it printed something
                out = await conn.terminal_output(session_id=session_id, terminal_id=tid)
                if out.output:
                    break
                await asyncio.sleep(0.02)
            return f"started {tid}: {out.output.strip()}"
        if words[0] == "kill":
            terminal = await conn.create_terminal(
                session_id=session_id, command=words[1], args=words[2:]
            )
            tid = terminal.terminal_id
            await conn.kill_terminal(session_id=session_id, terminal_id=tid)
            done = await conn.wait_for_terminal_exit(
                session_id=session_id, terminal_id=tid
            )
            return f"killed: exit {done.exit_code} signal {done.signal}"
        if words[0] == "tool":
            await conn.session_update(
                session_id=session_id,
                update=start_tool_call("t1", "Risky tool", kind="execute"),
            )
            answer = await conn.request_permission(
                session_id=session_id,
                tool_call=ToolCallUpdate(tool_call_id="t1"),
                options=[
                    PermissionOption(
                        option_id="always", name="Always", kind="allow_always"
                    ),
                    PermissionOption(option_id="no", name="No", kind="reject_once"),
                ],
            )
            return f"permission: {answer.outcome.model_dump(by_alias=True)}"
        return f"unknown command {words[0]!r}"


def login() -> None:
    code = ""
    if os.environ.get("SDK_AGENT_LOGIN_ASKS"):  # an interactive login, as pi's
        code = input("login code: ")  # EOFError (exit 1) on an empty stdin
    with open(os.environ["SDK_AGENT_LOGIN"], "w") as f:
        f.write(f"logged in{' with ' + code if code else ''}\n")
    print("login: done")


if __name__ == "__main__":
    if "--login" in sys.argv[1:]:
        login()
    else:
        asyncio.run(run_agent(ToolAgent()))
