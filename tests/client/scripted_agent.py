"""A v1 agent that does what its prompt says, as real agents do it.

``python scripted_agent.py [--ignore-eof] [--pidfile FILE]``; prompts:

- ``shell CMD``: asks permission for a tool call naming CMD, then
  ``terminal/create`` with CMD as a shell string (no ``args``), as
  claude-code-acp does; replies with the exit code and output;
- ``write PATH TEXT``: asks permission for an edit of PATH, then
  ``fs/write_text_file``;
- ``read PATH LINE LIMIT``: ``fs/read_text_file``, replies with its length
  and first 40 characters;
- ``terminals N``: N terminals (``sleep 30`` with args) without asking;
- ``terminals_at_once N``: the same N ``terminal/create`` sent all at once;
- ``orphan PIDFILE``: a terminal that ignores SIGTERM, released at once;
- ``which``: the mode and model chosen (``session/set_config_option``);
- ``hang``: a turn that runs until cancelled;
- ``stubborn``: a turn that ignores ``session/cancel``.

``--slow-new`` never answers ``session/new``; ``--ignore-eof`` keeps the process running after its stdin closes (and
ignores SIGTERM); ``--pidfile`` writes its pid.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import time

import acp_trio
import msgspec
import trio
from acp_schema import v1

CHOICES = {"mode": ["ask", "code"], "model": ["small", "large"]}
OPTIONS = [
    v1.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    v1.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


class ScriptedAgent(v1.Agent):
    def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
        self.client = conn.client
        self.chosen = {"mode": "ask", "model": "small"}

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(
            protocol_version=1,
            agent_info=v1.Implementation(name="scripted-agent", version="1"),
            agent_capabilities=v1.convert(
                {"sessionCapabilities": {"list": {}}}, v1.AgentCapabilities
            ),
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        if "--slow-new" in sys.argv:
            await trio.sleep(300)
        return v1.NewSessionResponse(session_id="s1", config_options=self.options())

    def options(self) -> list[v1.SessionConfigOption]:
        return v1.convert(
            [
                {
                    "type": "select",
                    "id": key,
                    "name": key.title(),
                    "category": key,
                    "currentValue": value,
                    "options": [{"value": v, "name": v} for v in CHOICES[key]],
                }
                for key, value in self.chosen.items()
            ],
            list[v1.SessionConfigOption],
        )

    async def session_set_config_option(
        self, params: v1.SetSessionConfigOptionRequest
    ) -> v1.SetSessionConfigOptionResponse:
        raw = msgspec.to_builtins(params)
        self.chosen[raw["configId"]] = raw["value"]
        return v1.SetSessionConfigOptionResponse(config_options=self.options())

    async def session_list(
        self, params: v1.ListSessionsRequest
    ) -> v1.ListSessionsResponse:
        sessions = [v1.SessionInfo(session_id="s1", cwd=params.cwd or "/", title="one")]
        return v1.ListSessionsResponse(sessions=sessions)

    async def do_which(self, _: str) -> None:
        await self.say(f"mode={self.chosen['mode']} model={self.chosen['model']}")

    async def say(self, text: str) -> None:
        await self.client.session_update(
            acp_trio.notification("s1", acp_trio.agent_text(text + "\n"))
        )

    async def allowed(self, call: v1.ToolCallUpdate) -> bool:
        answer = await self.client.session_request_permission(
            v1.RequestPermissionRequest(
                session_id="s1", tool_call=call, options=OPTIONS
            )
        )
        outcome = answer.outcome
        return isinstance(outcome, v1.SelectedPermissionOutcome) and (
            outcome.option_id == "yes"
        )

    async def terminal(self, command: str, args: list[str] | None = None) -> str:
        made = await self.client.terminal_create(
            v1.CreateTerminalRequest(
                session_id="s1",
                command=command,
                args=msgspec.UNSET if args is None else args,
            )
        )
        return made.terminal_id

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        text = "".join(b.text for b in params.prompt if isinstance(b, v1.TextContent))
        verb, _, rest = text.partition(" ")
        try:
            await getattr(self, f"do_{verb}")(rest)
        except acp_trio.RequestError as exc:
            await self.say(f"error {exc.code}: {exc.message}")
        return v1.PromptResponse(stop_reason="end_turn")

    async def do_shell(self, command: str) -> None:
        call = v1.ToolCallUpdate(
            tool_call_id="t1",
            title=f"`{command}`",
            kind="execute",
            raw_input={"command": command},
        )
        if not await self.allowed(call):
            return await self.say("refused")
        tid = await self.terminal(command)
        done = await self.client.terminal_wait_for_exit(
            v1.WaitForTerminalExitRequest(session_id="s1", terminal_id=tid)
        )
        out = await self.client.terminal_output(
            v1.TerminalOutputRequest(session_id="s1", terminal_id=tid)
        )
        await self.say(f"exit {done.exit_code}: {out.output.strip()}")

    async def do_write(self, rest: str) -> None:
        path, _, content = rest.partition(" ")
        call = v1.ToolCallUpdate(
            tool_call_id="t2",
            title=f"Edit {path}",
            kind="edit",
            locations=[v1.ToolCallLocation(path=path)],
        )
        if not await self.allowed(call):
            return await self.say("refused")
        await self.client.fs_write_text_file(
            v1.WriteTextFileRequest(session_id="s1", path=path, content=content)
        )
        await self.say("written")

    async def do_read(self, rest: str) -> None:
        path, line, limit = rest.split()
        got = await self.client.fs_read_text_file(
            v1.ReadTextFileRequest(
                session_id="s1", path=path, line=int(line), limit=int(limit)
            )
        )
        await self.say(f"read {len(got.content)}: {got.content[:40]!r}")

    async def do_terminals(self, count: str) -> None:
        made = 0
        try:
            for _ in range(int(count)):
                await self.terminal("sleep", ["30"])
                made += 1
        finally:
            await self.say(f"made {made}")

    async def do_terminals_at_once(self, count: str) -> None:
        made = refused = 0

        async def one() -> None:
            nonlocal made, refused
            try:
                await self.terminal("sleep", ["30"])
                made += 1
            except acp_trio.RequestError:
                refused += 1

        async with trio.open_nursery() as nursery:
            for _ in range(int(count)):
                nursery.start_soon(one)
        await self.say(f"made {made}, refused {refused}")

    async def do_orphan(self, pidfile: str) -> None:
        script = f"trap '' TERM; echo $$ > {shlex.quote(pidfile)}; echo ready; exec sleep 300"
        tid = await self.terminal("/bin/sh", ["-c", script])
        asked = v1.TerminalOutputRequest(session_id="s1", terminal_id=tid)
        while "ready" not in (await self.client.terminal_output(asked)).output:  # noqa: ASYNC110
            await trio.sleep(0.05)
        await self.client.terminal_release(
            v1.ReleaseTerminalRequest(session_id="s1", terminal_id=tid)
        )
        await self.say("released")

    async def do_stubborn(self, _: str) -> None:
        await self.say("ignoring session/cancel")
        with trio.CancelScope(shield=True):
            await trio.sleep(300)

    async def do_hang(self, _: str) -> None:
        await self.say("hanging")
        await trio.sleep_forever()


def main() -> None:
    if "--pidfile" in sys.argv:
        with open(sys.argv[sys.argv.index("--pidfile") + 1], "w") as f:
            f.write(str(os.getpid()))
    trio.run(acp_trio.serve_agent_stdio, {1: ScriptedAgent})
    if "--ignore-eof" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(300)


if __name__ == "__main__":
    main()
