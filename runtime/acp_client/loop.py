"""The interactive loop: a prompt with line editing and history (``readline``),
each line a prompt turn or a command.

Commands (a table: ``COMMANDS``):

- ``/help``: the commands;
- ``/plan``, ``/tools``: the session's plan and tool calls so far;
- ``/options``: the session's config options (modes, models...), with their values;
- ``/mode ID``, ``/model ID``: set the option of that category (``session/set_config_option``;
  a v1 agent with modes but no such option: ``session/set_mode``);
- ``/set OPTION VALUE``: set any config option;
- ``/sessions``: the agent's sessions (``session/list``);
- ``/load ID``: load (replay) another session;
- ``/quit`` (or Ctrl-D): leave.

A turn is cancelled with Ctrl-C (``session/cancel``); at the prompt, Ctrl-C
quits.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import acp_trio
import msgspec
import trio

from acp_client.calls import Json
from acp_client.text import Failure, error_text

if TYPE_CHECKING:
    from acp_client.app import App
    from acp_client.calls import AgentCalls

with contextlib.suppress(ImportError):  # line editing and history for input()
    importlib.import_module("readline")

#: Sessions listed by ``/sessions`` at most.
MAX_LISTED = 50


@dataclass
class Loop:
    """The session the loop talks to (``/load`` switches it)."""

    app: App
    agent: AgentCalls
    session_id: str
    version: int
    done: bool = False
    #: the options the last ``session/set_config_option`` answered, with the
    #: transcript's list at that time (a later ``config_option_update`` wins)
    answered: tuple[list[Json], object] | None = None

    async def run(self) -> int:
        self.app.screen.line("type a prompt (/help for commands, Ctrl-D to quit)")
        while not self.done:
            self.app.screen.end_stream()
            line = await read_line("> ")
            if line is None:
                break
            line = line.strip()
            if not line:
                continue
            try:
                if line.startswith("/"):
                    await self.command(line)
                else:
                    self.app.screen.user_prompt(line, self.version)
                    # a cancelled turn is over: the loop goes on, and
                    # leaving it later is a normal exit (0)
                    await self.app.prompt_turn(self.agent, self.session_id, line)
            except Failure as failure:  # a command that cannot run: say so, go on
                self.app.screen.line(f"error: {failure}")
            except acp_trio.CapabilityError as exc:
                self.app.screen.line(f"error: {exc}")
            except acp_trio.RequestError as exc:
                self.app.screen.line(f"error: {self.app.step}: {error_text(exc)}")
        return 0

    async def command(self, line: str) -> None:
        name, _, rest = line[1:].partition(" ")
        entry = COMMANDS.get(name)
        if entry is None:
            raise Failure(f"/{name}: no such command (/help lists them)")
        await entry.run(self, rest.strip())

    async def call(self, method: str, params: Json) -> Json:
        async with self.app.request(method):
            return await self.agent.call(method, params)

    # -- the commands ------------------------------------------------------------------

    async def help(self, _: str) -> None:
        for name, entry in COMMANDS.items():
            self.app.screen.line(
                f"  /{name} {entry.usage}".rstrip() + f"  {entry.about}"
            )

    async def quit(self, _: str) -> None:
        self.done = True

    async def plan(self, _: str) -> None:
        entries = [(e.content, e.status) for e in self.app.screen.transcript.plan]
        if not entries:
            self.app.screen.line("plan: (none)")
        for content, status in entries:
            self.app.screen.line(f"plan: [{status}] {content}")

    async def tools(self, _: str) -> None:
        calls = self.app.screen.transcript.tool_calls.values()
        if not calls:
            self.app.screen.line("tools: (none)")
        for state in calls:
            self.app.screen.line(
                f"tool {state.tool_call_id}: {state.title or ''} [{state.status}]"
            )

    def config_options(self) -> list[Json]:
        """The session's options: the last ``config_option_update``, else the
        answer that opened the session."""
        shown = self.app.screen.transcript.config_options
        if self.answered is not None and self.answered[1] is shown:
            return self.answered[0]
        raw: object = [msgspec.to_builtins(o) for o in shown] or self.agent.opened.get(
            "configOptions"
        )
        items = cast("list[object]", raw) if isinstance(raw, list) else []
        return [cast("Json", o) for o in items if isinstance(o, dict)]

    async def options(self, _: str) -> None:
        found = self.config_options()
        if not found:
            self.app.screen.line("options: (none)")
        for option in found:
            choices = cast("list[object]", option.get("options") or [])
            values = [
                str(cast("Json", c).get("value"))
                for c in choices
                if isinstance(c, dict)
            ]
            category = option.get("category")
            about = f" ({category})" if isinstance(category, str) else ""
            self.app.screen.line(
                f"option {option.get('id')}{about}: {option.get('currentValue')}"
                + (f"  [{', '.join(values)}]" if values else "")
            )

    async def set_option(self, config_id: str, value: str) -> None:
        answer = await self.call(
            "session/set_config_option",
            {"sessionId": self.session_id, "configId": config_id, "value": value},
        )
        raw = answer.get("configOptions")
        if isinstance(raw, list):  # every option as it now is
            items = cast("list[object]", raw)
            options = [cast("Json", o) for o in items if isinstance(o, dict)]
            self.answered = (options, self.app.screen.transcript.config_options)
        self.app.screen.line(f"option {config_id}: {value}")

    async def set(self, rest: str) -> None:
        config_id, _, value = rest.partition(" ")
        if not config_id or not value.strip():
            raise Failure("usage: /set OPTION VALUE")
        await self.set_option(config_id, value.strip())

    async def by_category(self, category: str, value: str) -> None:
        if not value:
            raise Failure(f"usage: /{category} ID (/options lists them)")
        for option in self.config_options():
            if option.get("category") == category and isinstance(option.get("id"), str):
                return await self.set_option(str(option["id"]), value)
        modes = self.agent.opened.get("modes")
        if category == "mode" and isinstance(modes, dict):  # v1 modes, no option
            await self.call(
                "session/set_mode", {"sessionId": self.session_id, "modeId": value}
            )
            self.app.screen.line(f"mode: {value}")
            return None
        raise Failure(f"the agent offers no {category} option")

    async def mode(self, rest: str) -> None:
        await self.by_category("mode", rest)

    async def model(self, rest: str) -> None:
        await self.by_category("model", rest)

    async def sessions(self, _: str) -> None:
        answer = await self.call("session/list", {"cwd": self.app.cwd})
        listed = cast("list[object]", answer.get("sessions") or [])
        if not listed:
            self.app.screen.line("sessions: (none)")
        for item in listed[:MAX_LISTED]:
            info = cast("Json", item) if isinstance(item, dict) else {}
            title = info.get("title")
            self.app.screen.line(
                f"session {info.get('sessionId')}"
                + (f": {title}" if isinstance(title, str) else "")
            )

    async def load(self, rest: str) -> None:
        if not rest:
            raise Failure("usage: /load SESSION_ID")
        self.app.screen.line(f"session: {rest} (loading)")
        async with self.app.request("session/load"):
            await self.agent.load_session(rest, self.app.setup)
        self.session_id, self.answered = rest, None
        self.app.screen.line(f"session: {rest} (loaded)")


@dataclass(frozen=True)
class Command:
    run: Callable[[Loop, str], Awaitable[None]]
    usage: str
    about: str


COMMANDS: dict[str, Command] = {
    "help": Command(Loop.help, "", "these commands"),
    "plan": Command(Loop.plan, "", "the plan so far"),
    "tools": Command(Loop.tools, "", "the tool calls so far"),
    "options": Command(Loop.options, "", "the session's config options"),
    "mode": Command(Loop.mode, "ID", "switch the mode"),
    "model": Command(Loop.model, "ID", "switch the model"),
    "set": Command(Loop.set, "OPTION VALUE", "set a config option"),
    "sessions": Command(Loop.sessions, "", "list the agent's sessions"),
    "load": Command(Loop.load, "ID", "load (replay) a session"),
    "quit": Command(Loop.quit, "", "leave (or Ctrl-D)"),
}


async def read_line(prompt: str) -> str | None:
    """A line typed at ``prompt`` (readline editing and history), ``None`` at EOF."""

    def read() -> str | None:
        try:
            return input(prompt)
        except EOFError:
            return None

    return await trio.to_thread.run_sync(read, abandon_on_cancel=True)
