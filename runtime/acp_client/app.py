"""The session loop: spawn the agent, initialize, authenticate, open the
session, run the turn; errors explained as one line."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import sys
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import acp_trio
import trio
from acp_schema import v1
from acp_schema import v2 as v2_latest
from acp_schema import v2_alpha0 as v2
from msgspec import UnsetType

from acp_client.auth import AuthChoice, NeedsLogin, auth_choices
from acp_client.calls import AgentCalls, AgentV1, AgentV2, McpSpec, Setup
from acp_client.display import Screen
from acp_client.elicit import Elicitor
from acp_client.grants import Grants, grant_for
from acp_client.handlers import ClientV1, ClientV2
from acp_client.loop import Loop
from acp_client.questions import Asker
from acp_client.terminals import Terminals
from acp_client.text import Failure, error_text, present
from acp_client.workspace import Workspace

if TYPE_CHECKING:
    from acp_client.text import Init, Option

CLIENT_NAME = "acp-msgspec-client"
CLIENT_VERSION = "0.2.0"
#: Lines of the agent's stderr shown when it fails.
STDERR_LINES = 8


@dataclass
class Options:
    command: list[str]
    prompt: str
    protocol: int | None = None
    yes: bool = False
    load: str | None = None
    add_dir: list[str] = field(default_factory=list[str])
    mcp: list[McpSpec] = field(default_factory=list[McpSpec])
    auth: str | None = None
    timeout: float = 60.0
    interactive: bool = False  # a prompt loop on this terminal (acp_client.loop)


class Ended(Exception):
    """SIGTERM or SIGHUP: the turn is cancelled, the agent ended, the client exits
    with ``128 + signum``, as a program killed by the signal reports."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


#: The signals that end the client like a second Ctrl-C, but cleanly.
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
#: Seconds the agent has to answer a cancelled turn when the client is ending.
CANCEL_GRACE = 1.0


class App:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.screen = Screen()
        self.asker = Asker(self.screen, options.yes)
        self.elicitor = Elicitor(self.screen, self.asker, options.yes)
        self.cwd = os.getcwd()
        self.setup = Setup(self.cwd, options.add_dir, options.mcp)
        self.grants = Grants()
        self.workspace = Workspace(
            [self.cwd, *options.add_dir], self.asker, self.grants
        )
        self.terminals = Terminals(self.workspace, self.cwd, self.grants)
        self.conn: acp_trio.ClientSideConnection[object] | None = None
        self.step = "starting the agent"
        self.logged_in = False
        self.turn: tuple[AgentCalls, str] | None = None  # (agent, session) of a turn
        #: set once the running turn is over (its answer shown, or it failed)
        self.turn_over = trio.Event()
        self.ended: int | None = None  # the ending signal received
        self.quit = False  # a second Ctrl-C: leave at once

    def tool_title(self, tool_call_id: str, title: str | UnsetType | None) -> str:
        if isinstance(title, str):
            return title
        known = self.screen.transcript.tool_calls.get(tool_call_id)
        return (known.title if known is not None else None) or tool_call_id

    def remember(self, session_id: str, call: object, option: Option | None) -> None:
        """A tool call the user allowed: the fs or terminal request carrying
        it out is not asked again (:mod:`acp_client.grants`)."""
        if option is None or not option.kind.startswith("allow"):
            return
        tool_call_id: object = getattr(call, "tool_call_id", None)
        if not isinstance(tool_call_id, str):
            return
        known = self.screen.transcript.tool_calls.get(tool_call_id)
        title: object = getattr(call, "title", None)
        raw_input: object = getattr(call, "raw_input", None)
        given: object = getattr(call, "locations", None)
        wheres: list[object] = [
            *(cast("list[object]", given) if isinstance(given, list) else []),
            *(known.locations if known is not None else []),
        ]
        locations = [
            path for w in wheres if isinstance(path := getattr(w, "path", None), str)
        ]
        grant = grant_for(
            session_id,
            tool_call_id,
            title if isinstance(title, str) else (known.title if known else None),
            locations,
            [
                raw_input if present(raw_input) else None,
                known.raw_input if known is not None else None,
            ],
        )
        self.grants.allow(grant)

    def offer(
        self,
    ) -> dict[int, Callable[[acp_trio.ClientSideConnection[object]], object]]:
        versions = [self.options.protocol] if self.options.protocol else [1, 2]
        classes = {1: ClientV1, 2: ClientV2}
        return {n: functools.partial(classes[n], app=self) for n in versions}

    @contextlib.asynccontextmanager
    async def request(self, what: str) -> AsyncGenerator[None]:
        """A request that must be answered within ``--timeout`` seconds.

        On time out the connection is closed first (:meth:`leave`): the
        request fails without a ``$/cancel_request`` the agent may not know.
        """
        self.step = what
        watchdog = trio.CancelScope()
        timed_out = False

        async def watch() -> None:
            nonlocal timed_out
            with watchdog:
                await trio.sleep(self.options.timeout)
                timed_out = True
                await self.leave()

        assert self.terminals.nursery is not None
        self.terminals.nursery.start_soon(watch)
        try:
            yield
        except acp_trio.ConnectionClosed:
            if not timed_out:
                raise
            raise Failure(
                f"{what}: no answer within {self.options.timeout:g} s (--timeout)"
            ) from None
        finally:
            watchdog.cancel()

    async def run(self) -> int:
        """Connect, set up the session and run the turn; one more time after
        a terminal login."""
        command = self.options.command
        if shutil.which(command[0]) is None:
            raise Failure(f"{command[0]}: command not found")
        while True:
            outcome = await self.connected(command)
            if isinstance(outcome, int):
                return outcome
            if self.logged_in:
                raise Failure("still not authenticated after the login")
            await self.terminal_login(outcome)
            self.logged_in = True

    async def connected(self, command: list[str]) -> int | AuthChoice:
        """The exit status, or the terminal login to run before starting over."""
        self.conn = None
        try:
            async with acp_trio.spawn_agent(
                command, client=self.offer(), capture_stderr=True
            ) as conn:
                self.conn = conn
                async with trio.open_nursery() as nursery:  # the terminals' tasks
                    self.terminals.nursery = nursery
                    await nursery.start(self.on_ending_signals)
                    try:
                        return await self.session(conn)
                    except NeedsLogin as login:
                        return login.choice
                    finally:
                        self.terminals.kill_all()
                        nursery.cancel_scope.cancel()
        except OSError as exc:
            if self.conn is not None:
                raise
            # the agent could not be started (what the session raises comes
            # wrapped in the runtime's exception groups)
            raise Failure(f"{command[0]}: {exc.strerror or exc}") from None
        raise AssertionError("unreachable")

    async def on_ending_signals(self, task_status: trio.TaskStatus[None]) -> None:
        """SIGTERM, SIGHUP: cancel the turn, leave (the agent's group is ended
        by ``spawn_agent`` on the way out), raise :class:`Ended`."""
        with trio.open_signal_receiver(*ENDING_SIGNALS) as signals:
            task_status.started()
            async for signum in signals:
                self.ended = signum
                self.screen.line(f"{signal.Signals(signum).name}: ending")
                if self.turn is not None:
                    agent, session_id = self.turn
                    over = self.turn_over
                    with trio.move_on_after(CANCEL_GRACE):
                        await agent.cancel(session_id)
                        await over.wait()  # the cancelled turn's answer, shown
                await self.leave()
                raise Ended(signum)

    async def leave(self) -> None:
        """Close the connection before abandoning its requests: a request the
        client stops waiting for gets no ``$/cancel_request`` (an agent that
        does not implement it logs "Method not found")."""
        if self.conn is not None:
            self.conn.close()
            with trio.move_on_after(CANCEL_GRACE):
                await self.conn.closed.wait()

    async def initialize(self, conn: acp_trio.ClientSideConnection[object]) -> Init:
        """One ``initialize`` carrying each offered version's fields, so a v1
        agent reads the fs and terminal support a {1, 2} offer advertises,
        and valid under each offered version's schema: v2's in both drafts
        (``acp_schema.v2`` requires ``info``), so an agent of either reads it
        (one of the draft this client does not speak then answers, and the
        client says which draft it speaks)."""
        tty = sys.stdin.isatty()  # a terminal login needs one
        requests: list[
            v1.InitializeRequest | v2.InitializeRequest | v2_latest.InitializeRequest
        ] = []
        if 1 in self.offer():
            requests.append(
                v1.InitializeRequest(
                    protocol_version=1,
                    client_capabilities=v1.ClientCapabilities(
                        fs=v1.FileSystemCapabilities(
                            read_text_file=True, write_text_file=True
                        ),
                        terminal=True,
                        auth=v1.AuthCapabilities(terminal=tty),
                        elicitation=v1.ElicitationCapabilities(
                            form=v1.ElicitationFormCapabilities(),
                            url=v1.ElicitationUrlCapabilities(),
                        ),
                    ),
                    client_info=v1.Implementation(
                        name=CLIENT_NAME, version=CLIENT_VERSION
                    ),
                )
            )
        if 2 in self.offer():
            # As JSON, converted: a later draft renames clientInfo to info
            # (convert keeps the spelling the version declares).
            info = {"name": CLIENT_NAME, "version": CLIENT_VERSION}
            auth: dict[str, object] = {"terminal": {}} if tty else {}
            fields = {
                "protocolVersion": 2,
                "capabilities": {"auth": auth},
                "clientInfo": info,
                "info": info,
            }
            requests.append(v2.convert(fields, v2.InitializeRequest))
            requests.append(v2_latest.convert(fields, v2_latest.InitializeRequest))
        async with self.request("initialize"):
            # the requests are v1's and the 2.0.0-alpha.0 draft's: so is the answer
            response = cast("Init", await conn.initialize(*requests))
        return response

    async def session(self, conn: acp_trio.ClientSideConnection[object]) -> int:
        init = await self.initialize(conn)
        agent: AgentCalls = (
            AgentV2(cast("v2.Agent", conn.agent))  # the 2.0.0-alpha.0 draft's
            if conn.protocol_version == 2
            else AgentV1(conn.agent_v1)
        )
        info: object = getattr(init, "agent_info", None) or getattr(init, "info", None)
        name = "(unnamed)"
        if isinstance(info, v1.Implementation | v2.Implementation):
            name = f"{info.name} {info.version}"
        self.screen.line(f"agent: {name}, protocol v{conn.protocol_version}")
        if self.options.auth is not None and not self.logged_in:
            await self.authenticate(agent, init)
        try:
            session_id = await self.open_session(agent)
        except acp_trio.RequestError as exc:
            if exc.code != v1.ERROR_CODE_AUTHENTICATION_REQUIRED or self.logged_in:
                raise
            await self.authenticate(agent, init)  # lists the methods without --auth
            session_id = await self.open_session(agent)
        version = conn.protocol_version or 1
        if self.options.interactive:
            return await Loop(self, agent, session_id, version).run()
        if not self.options.prompt:
            return 0
        self.screen.user_prompt(self.options.prompt, version)
        return await self.prompt_turn(agent, session_id, self.options.prompt)

    async def open_session(self, agent: AgentCalls) -> str:
        try:
            return await self.open_session_with(agent, self.setup)
        except acp_trio.CapabilityError as exc:
            if (
                not self.setup.additional_directories
                or "additionalDirectories" not in str(exc)
            ):
                raise
        # The agent cannot be told of them; its files there are served all the same.
        self.screen.line("note: the agent takes no additional directories (--add-dir)")
        self.setup = Setup(self.setup.cwd, [], self.setup.mcp)
        return await self.open_session_with(agent, self.setup)

    async def open_session_with(self, agent: AgentCalls, setup: Setup) -> str:
        if self.options.load:
            session_id = self.options.load
            self.screen.line(f"session: {session_id} (loading)")
            async with self.request("session/load"):
                await agent.load_session(session_id, setup)
            self.screen.line(f"session: {session_id} (loaded)")
            return session_id
        async with self.request("session/new"):
            session_id = await agent.new_session(setup)
        self.screen.line(f"session: {session_id}")
        return session_id

    async def authenticate(self, agent: AgentCalls, init: Init) -> None:
        """Run the ``--auth`` method; without one, list the agent's methods."""
        choices = auth_choices(init)
        wanted = self.options.auth
        if wanted is None:
            raise Failure(
                "the agent requires authentication: run again with --auth ID",
                ["the agent's methods:", *(c.line() for c in choices)]
                if choices
                else ["the agent lists no authentication method"],
            )
        choice = next((c for c in choices if c.id == wanted), None)
        if choice is None:
            offered = ", ".join(c.id for c in choices) or "none"
            raise Failure(
                f"--auth {wanted}: not a method of the agent (it offers: {offered})"
            )
        if choice.kind == "terminal":
            raise NeedsLogin(choice)
        if choice.kind not in ("agent", "env_var"):
            raise Failure(
                f"--auth {wanted}: a {choice.kind!r} method, which this client cannot run"
            )
        missing = [
            n for n, opt in choice.variables if not opt and not os.environ.get(n)
        ]
        if missing:
            raise Failure(
                f"--auth {wanted} needs {', '.join(missing)} set in the environment"
            )
        self.screen.line(f"auth: {choice.name}")
        async with self.request("authenticate"):
            await agent.authenticate(choice.id)

    async def terminal_login(self, choice: AuthChoice) -> None:
        """The agent command with the method's arguments, on this terminal:
        it inherits the client's stdin, stdout and stderr (an interactive
        login reads what the user types)."""
        self.screen.line(f"auth: {choice.name}: running the agent's login")
        done = await trio.run_process(
            [*self.options.command, *choice.args],
            stdin=None,  # the user's terminal (trio's default is an empty stdin)
            env={**os.environ, **choice.env},
            check=False,
        )
        if done.returncode != 0:
            raise Failure(
                f"--auth {choice.id}: the login exited with status {done.returncode}"
            )

    async def prompt_turn(self, agent: AgentCalls, session_id: str, text: str) -> int:
        self.turn, self.turn_over = (agent, session_id), trio.Event()
        try:
            return await self.run_turn(agent, session_id, text)
        finally:
            self.turn = None
            self.turn_over.set()

    async def run_turn(self, agent: AgentCalls, session_id: str, text: str) -> int:
        interrupted = False
        self.step = "session/prompt"
        async with trio.open_nursery() as nursery:

            async def on_ctrl_c(task_status: trio.TaskStatus[None]) -> None:
                nonlocal interrupted
                with trio.open_signal_receiver(signal.SIGINT) as signals:
                    task_status.started()
                    async for _ in signals:
                        if interrupted:  # the second Ctrl-C: give up waiting
                            self.quit = True
                            await self.leave()
                            raise KeyboardInterrupt
                        interrupted = True
                        self.screen.line("^C: cancelling (Ctrl-C again to quit)")
                        await agent.cancel(session_id)
                        self.screen.cancelled()

            await nursery.start(on_ctrl_c)  # Ctrl-C now cancels the turn
            stop_reason = await agent.prompt(session_id, text)
            nursery.cancel_scope.cancel()
        self.screen.end_turn()
        if stop_reason == "cancelled":
            self.screen.cancelled()
        self.screen.line(f"stop reason: {stop_reason}")
        return 130 if interrupted else 0

    def explain(self, exc: BaseException) -> Failure | None:
        """A known error as a one-line :class:`Failure` (None: a bug, re-raised)."""
        if isinstance(exc, Failure):
            return exc
        if isinstance(exc, acp_trio.ConnectionClosed):
            return self.agent_gone()
        if isinstance(exc, acp_trio.ProtocolVersionError):
            asked = self.options.protocol
            return Failure(
                f"the agent refused protocol v{asked}" if asked else str(exc),
                [str(exc)] if asked else (),
            )
        if isinstance(exc, acp_trio.RequestError):
            return Failure(f"{self.step} failed: {error_text(exc)}", self.stderr_tail())
        if isinstance(exc, acp_trio.CapabilityError):
            return Failure(f"{self.step}: {exc}")
        return None

    def agent_gone(self) -> Failure:
        process = self.conn.process if self.conn is not None else None
        code = process.returncode if process is not None else None
        if code is None:
            what = "the agent closed the connection"
        elif code < 0:
            what = f"the agent was killed by {signal.Signals(-code).name}"
        else:
            what = f"the agent exited with status {code}"
        return Failure(f"{what} ({self.step})", self.stderr_tail())

    def stderr_tail(self) -> list[str]:
        if self.conn is None or not self.conn.stderr_output:
            return []
        text = self.conn.stderr_output.decode("utf-8", errors="replace")
        lines = text.rstrip("\n").splitlines()[-STDERR_LINES:]
        return ["agent stderr:", *(f"  | {line}" for line in lines)]
