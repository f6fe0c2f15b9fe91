"""A command-line ACP client: ``python examples/client.py [options] -- AGENT_CMD ...``.

Spawns the agent, initializes, opens a session in the current directory (or
loads one with ``--load SESSION_ID``), sends the prompt (``--prompt TEXT``, or
standard input) and prints the live transcript as it streams: messages, the
plan, tool calls with their status, usage.  Permission requests are asked on
the terminal (or granted with ``--yes``).  Ctrl-C sends ``session/cancel`` and
the agent's stop reason is printed; a second Ctrl-C quits at once::

    python examples/client.py --yes --prompt "hello" -- python examples/echo_agent.py
    python examples/client.py --protocol 1 --load sess_123 -- python examples/echo_agent.py

Exit status: 0 when the turn ended, 130 when it was cancelled with Ctrl-C, 1
on an error.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shlex
import shutil
import signal
import sys
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import acp_trio
import msgspec
import trio
from acp_schema import v1, v2

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

CLIENT_NAME = "acp-msgspec-example-client"
CLIENT_VERSION = "0.1.0"
UNSET: Any = msgspec.UNSET
STATUS_MARK = {"pending": " ", "in_progress": "~", "completed": "x"}
ROLES = {"user": "you", "agent": "agent", "thought": "thought"}


# Control characters but newline and tab (C0, DEL, C1: ESC starts clear-screen,
# OSC title/clipboard and hidden-text sequences, 0x9b/0x9d are their 8-bit
# forms) and the bidi overrides that reorder what a line shows.
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def visible(text: str) -> str:
    """``text`` safe for a terminal: control and escape sequences shown, not run.

    Each unsafe character is written as its escape (``\\x1b``, ``\\u202e``);
    newlines and tabs stay, a CR of a CRLF pair is dropped.
    """
    text = text.replace("\r\n", "\n")
    return UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def tag_of(value: Any) -> str:
    """The wire tag of a union variant (``sessionUpdate``, ``type``...)."""
    tag = getattr(value, "tag", None)  # an unknown variant kept as OtherVariant
    if isinstance(tag, str):
        return tag
    return str(type(value).__struct_config__.tag)


def text_of(block: Any) -> str:
    """A content block (or tool call content) as display text."""
    kind = tag_of(block)
    if kind == "text":
        return str(block.text)
    if kind == "content":
        return text_of(block.content)
    if kind == "resource_link":
        return f"[link {block.name}: {block.uri}]"
    if kind == "resource":
        return f"[resource {block.resource.uri}]"
    if kind == "diff":
        return f"[diff {block.path}]"
    if kind == "terminal":
        return f"[terminal {block.terminal_id}]"
    return f"[{kind}]"


def present(value: Any) -> bool:
    return value is not UNSET and value is not None


class Screen:
    """Prints a session as it streams, from its :class:`acp_trio.SessionTranscript`.

    Every ``session/update`` is applied to the transcript (which keeps the
    conversation: messages by ``messageId``, tool calls by ``toolCallId``,
    the plan, usage) and then shown; text chunks continue the current line.
    """

    def __init__(self, out: Any = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.transcript = acp_trio.SessionTranscript()
        self.open_line: Any = None  # the message being streamed on the current line
        self.shown_plan: list[tuple[str, str]] = []
        self.broken = False

    def write(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.out.write(visible(text))  # everything shown may come from the agent
            self.out.flush()
        except BrokenPipeError:  # e.g. piped into `head`: keep the session going
            self.broken = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), self.out.fileno())

    def line(self, text: str) -> None:
        self.end_stream()
        self.write(text + "\n")

    def end_stream(self) -> None:
        if self.open_line is not None:
            self.write("\n")
            self.open_line = None

    # -- session/update --------------------------------------------------------------

    def update(self, params: Any) -> None:
        update: Any = params.update
        kind = tag_of(update)
        touched = self.transcript.apply(params)
        if isinstance(touched, acp_trio.TranscriptMessage):
            role = ROLES[touched.role]
            indent = "\n" + " " * (len(role) + 2)
            if kind.endswith("_chunk"):  # continues the message being streamed
                if self.open_line is not touched:
                    self.end_stream()
                    self.write(f"{role}: ")
                    self.open_line = touched
                self.write(text_of(update.content).replace("\n", indent))
            elif present(update.content):  # a v2 upsert; without content: _meta only
                text = "".join(text_of(b) for b in touched.content)
                self.line(f"{role}: " + text.replace("\n", indent))
        elif isinstance(touched, acp_trio.ToolCallState):
            self.tool(touched)
            content = update.content
            for item in [content] if kind.endswith("_chunk") else content or ():
                self.line("    " + text_of(item).rstrip("\n").replace("\n", "\n    "))
        elif kind in ("plan", "plan_update"):
            self.plan([(e.content, e.status) for e in self.transcript.plan])
        elif kind == "usage_update":
            share = f" ({100 * update.used / update.size:.1f}%)" if update.size else ""
            cost = ""
            if present(update.cost):
                cost = f", cost {update.cost.amount:.6f} {update.cost.currency}"
            self.line(f"usage: {update.used}/{update.size} tokens{share}{cost}")
        elif kind == "available_commands_update":
            names = ", ".join("/" + c.name for c in self.transcript.available_commands)
            self.line(f"commands: {names}")
        elif kind == "current_mode_update":
            self.line(f"mode: {self.transcript.current_mode_id}")
        elif kind == "session_info_update":
            if self.transcript.session_info.title is not None:
                self.line(f"title: {self.transcript.session_info.title}")
        else:
            self.line(f"({kind} update)")

    def user_prompt(self, text: str, V: Any) -> None:
        """The user's own prompt joins the transcript (the agent does not echo it)."""
        if V is v2:  # v2 messages need an id: this one is local to the client
            self.transcript.apply(
                acp_trio.user_message(f"local_{uuid.uuid4().hex}", text)
            )
        else:
            self.transcript.apply(acp_trio.user_text(text))
        self.line(f"you: {text}")

    def tool(self, state: acp_trio.ToolCallState) -> None:
        title = state.title or ""
        self.line(f"tool {state.tool_call_id}: {title} [{state.status}]")

    def plan(self, entries: list[tuple[str, str]]) -> None:
        """The whole plan the first time, then only the entries that changed."""
        before = self.shown_plan
        self.shown_plan = entries
        changed = [
            i for i, e in enumerate(entries) if i >= len(before) or before[i] != e
        ]
        whole = len(entries) != len(before) or len(changed) == len(entries)
        if whole:
            self.line("plan:")
        for i in range(len(entries)) if whole else changed:
            content, status = entries[i]
            mark = STATUS_MARK.get(status, "?")
            self.line(f"{'  ' if whole else 'plan: '}[{mark}] {content}")

    def cancelled(self) -> None:
        """After sending session/cancel: unfinished tool calls become cancelled."""
        for tool_call_id in self.transcript.mark_cancelled():
            self.tool(self.transcript.tool_calls[tool_call_id])


def describe(option: Any) -> str:
    """A permission option with its kind: ``Allow once [allow_once]``."""
    return f"{option.name} [{option.kind}]"


class Asker:
    """Answers permission requests: always the first "allow" option, or asks."""

    def __init__(self, screen: Screen, yes: bool) -> None:
        self.screen = screen
        self.yes = yes

    async def choose(self, title: str, options: list[Any]) -> str | None:
        """The chosen option id (``None``: no choice could be made)."""
        if self.yes:  # allow once, never "always": --yes grants this one call
            allow = [o for o in options if o.kind == "allow_once"]
            reject = [o for o in options if o.kind == "reject_once"]
            option = (allow or reject or [None])[0]
            if option is None:
                self.screen.line(
                    f"permission: {title}: no allow-once option, cancelled"
                )
                return None
            self.screen.line(f"permission: {title}: {describe(option)} (--yes)")
            return str(option.option_id)
        try:
            # opening a terminal may block (a stopped job): off the event loop
            tty = await trio.to_thread.run_sync(open, "/dev/tty", "r+")
        except OSError:
            reject = [o for o in options if str(o.kind).startswith("reject")]
            self.screen.line(f"permission: {title}: no terminal to ask, rejected")
            return str(reject[0].option_id) if reject else None
        self.screen.end_stream()
        choices = "  ".join(f"[{i}] {describe(o)}" for i, o in enumerate(options, 1))
        question = f"permission: {title}? {choices} > "

        def ask() -> int | None:
            with tty:
                while True:
                    tty.write(visible(question))
                    tty.flush()
                    answer = tty.readline()
                    if not answer:
                        return None
                    if answer.strip().isdigit() and 1 <= int(answer) <= len(options):
                        return int(answer) - 1

        index = await trio.to_thread.run_sync(ask, abandon_on_cancel=True)
        if index is None:
            return None
        self.screen.line(f"permission: {title}: {describe(options[index])}")
        return str(options[index].option_id)


class ExampleClient:
    """The client object the runtime serves (one per protocol version)."""

    def __init__(
        self, conn: acp_trio.ClientSideConnection[Any], V: Any, app: App
    ) -> None:
        self.V = V
        self.app = app

    async def session_update(self, params: Any) -> None:
        self.app.screen.update(params)

    async def session_request_permission(self, params: Any) -> Any:
        call = getattr(params, "tool_call", None)
        if call is None:  # 2.0.0-alpha.3: a title, and the tool call as subject
            call = params.subject.tool_call
        known = self.app.screen.transcript.tool_calls.get(call.tool_call_id)
        title = call.title if present(call.title) else known and known.title
        option = await self.app.asker.choose(
            title or call.tool_call_id, list(params.options)
        )
        if option is None:
            outcome = self.V.RequestPermissionOutcomeCancelled()
        else:
            outcome = self.V.SelectedPermissionOutcome(option_id=option)
        return self.V.RequestPermissionResponse(outcome=outcome)


class App:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.screen = Screen()
        self.asker = Asker(self.screen, args.yes)

    def offer(self) -> dict[int, Callable[[Any], object]]:
        versions = [self.args.protocol] if self.args.protocol else [1, 2]
        modules = {1: v1, 2: v2}
        return {
            n: functools.partial(ExampleClient, V=modules[n], app=self)
            for n in versions
        }

    def setup_params(self, V: Any) -> dict[str, Any]:
        servers: list[Any] = []
        for spec in self.args.mcp:
            name, _, where = spec.partition("=")
            if where.startswith(("http://", "https://")):
                servers.append(V.McpServerHttp(name=name, url=where, headers=[]))
            else:
                command, *args = shlex.split(where)
                command = shutil.which(command) or os.path.abspath(command)
                servers.append(
                    V.McpServerStdio(name=name, command=command, args=args, env=[])
                )
        params: dict[str, Any] = {"cwd": os.getcwd(), "mcp_servers": servers}
        if self.args.add_dir:
            params["additional_directories"] = [
                os.path.abspath(d) for d in self.args.add_dir
            ]
        return params

    async def run(self, command: list[str], prompt: str) -> int:
        screen = self.screen
        # Its own session: Ctrl-C here must not kill the agent before it can
        # answer session/cancel.
        async with acp_trio.spawn_agent(
            command, client=self.offer(), start_new_session=True
        ) as conn:
            highest = max(self.offer())
            V = v2 if highest == 2 else v1
            info = {"name": CLIENT_NAME, "version": CLIENT_VERSION}
            init = {
                "protocolVersion": V.PROTOCOL_VERSION,
                "clientCapabilities" if V is v1 else "capabilities": {},
                "clientInfo": info,
                "info": info,  # 2.0.0-alpha.3's name for clientInfo
            }
            # As JSON: the v2 drafts move fields; convert keeps the keys the
            # version's type declares and drops the other spelling.
            response = await conn.agent.initialize(
                V.convert(init, V.AGENT_METHODS["initialize"].params)
            )
            V = v2 if conn.protocol_version == 2 else v1
            agent: Any = getattr(response, "agent_info", None) or getattr(
                response, "info", None
            )
            name = f"{agent.name} {agent.version}" if present(agent) else "(unnamed)"
            screen.line(f"agent: {name}, protocol v{conn.protocol_version}")

            setup = self.setup_params(V)
            if self.args.load:
                session_id = self.args.load
                screen.line(f"session: {session_id} (loading)")
                await conn.agent.session_load(
                    V.LoadSessionRequest(session_id=session_id, **setup)
                )
                screen.line(f"session: {session_id} (loaded)")
            else:
                new = await conn.agent.session_new(V.NewSessionRequest(**setup))
                session_id = new.session_id
                screen.line(f"session: {session_id}")
            if not prompt:
                return 0
            screen.user_prompt(prompt, V)
            return await self.prompt_turn(conn, V, session_id, prompt)

    async def prompt_turn(
        self,
        conn: acp_trio.ClientSideConnection[Any],
        V: Any,
        session_id: str,
        text: str,
    ) -> int:
        interrupted = False
        async with trio.open_nursery() as nursery:

            async def on_ctrl_c(task_status: trio.TaskStatus[None]) -> None:
                nonlocal interrupted
                with trio.open_signal_receiver(signal.SIGINT) as signals:
                    task_status.started()
                    async for _ in signals:
                        if interrupted:  # the second Ctrl-C: give up waiting
                            raise KeyboardInterrupt
                        interrupted = True
                        self.screen.line("^C: cancelling (Ctrl-C again to quit)")
                        cancel = V.AGENT_METHODS["session/cancel"].params
                        await conn.agent.session_cancel(cancel(session_id=session_id))
                        self.screen.cancelled()

            await nursery.start(on_ctrl_c)  # Ctrl-C now cancels the turn
            result = await conn.agent.session_prompt(
                V.PromptRequest(
                    session_id=session_id, prompt=[V.TextContent(text=text)]
                )
            )
            nursery.cancel_scope.cancel()
        # 2.0.0-alpha.3 reports it in a state_update: not shown here
        stop_reason = getattr(result, "stop_reason", "(not in the answer)")
        if stop_reason == "cancelled":
            self.screen.cancelled()
        self.screen.line(f"stop reason: {stop_reason}")
        return 130 if interrupted else 0


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    else:
        command = []
    parser = argparse.ArgumentParser(
        prog="client.py",
        usage="%(prog)s [options] -- AGENT_CMD ...",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument(
        "--protocol", type=int, choices=(1, 2), help="speak only v1 or v2"
    )
    parser.add_argument("--yes", action="store_true", help="grant permission requests")
    parser.add_argument("--load", metavar="SESSION_ID", help="load (replay) a session")
    parser.add_argument("--prompt", metavar="TEXT", help="the prompt (default: stdin)")
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="an additional workspace directory (repeatable)",
    )
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="NAME=COMMAND|URL",
        help="an MCP server for the session: a command (stdio) or an http(s) URL",
    )
    args = parser.parse_args(argv)
    if not command:
        parser.error("the agent command is missing: ... -- AGENT_CMD ...")
    return args, command


def main(argv: list[str] | None = None) -> int:
    args, command = parse(sys.argv[1:] if argv is None else argv)
    if isinstance(sys.stdout, __import__("io").TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    prompt = args.prompt
    if prompt is None:
        if sys.stdin.isatty() and not args.load:
            print("type the prompt, then Ctrl-D:", file=sys.stderr)
        prompt = "" if sys.stdin.isatty() and args.load else sys.stdin.read()
    prompt = prompt.strip()
    if not prompt and not args.load:
        print("client.py: empty prompt", file=sys.stderr)
        return 2
    app = App(args)
    try:
        return trio.run(app.run, command, prompt)
    except BaseException as group:  # trio's nurseries raise exception groups
        errors = list(leaves(group))
        if any(isinstance(e, KeyboardInterrupt) for e in errors):
            app.screen.line("interrupted")
            return 130
        if not all(isinstance(e, EXPECTED) for e in errors):
            raise
        app.screen.end_stream()
        for exc in errors:
            print(visible(f"client.py: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1


EXPECTED = (acp_trio.RequestError, acp_trio.CapabilityError, acp_trio.ConnectionClosed)


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


if __name__ == "__main__":
    sys.exit(main())
