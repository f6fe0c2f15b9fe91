"""Where a connection's agent runs: in this process, or as a command.

A server starts one agent per ACP connection and talks newline-delimited
JSON-RPC to it over a byte stream:

- :class:`InProcessAgent` serves agent classes written with this project's
  runtime, by the adapter of the server's event loop (``acp_trio`` under
  trio, ``acp_asyncio`` under asyncio), over the in-memory seam, in the
  task the server runs the connection in (:meth:`AgentHandle.run`: an idle
  connection holds no task of its agent's own beside its adapter's);
- :class:`CommandAgent` starts a stdio agent command in a process group of
  its own, ended with the connection.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from math import inf
from typing import Any, Protocol

import anyio
import anyio.abc
import sniffio
from acp_core import Limits, Offer, SeamEnd, seam_ends
from acp_host import GROUP_POLL, AwaitExit, ShutdownPlan, group_alive
from anyio.streams.stapled import StapledByteStream

from ._seam import SeamStream
from ._signal import Signal

__all__ = ["AgentHandle", "AgentLauncher", "CommandAgent", "InProcessAgent"]

log = logging.getLogger("acp_http")


class AgentHandle(Protocol):
    """One running agent: its byte stream, how it runs, how to end it.

    :meth:`run` is new in this version of the protocol (a handle of your own
    needs it): the server runs each connection in one task, which calls
    ``run`` with the connection's pump, so that an agent served in this
    process runs in that task too (no task, cancel scope or wake-up of its
    own per connection); a handle whose agent runs elsewhere (a process)
    just awaits the pump.
    """

    @property
    def stream(self) -> anyio.abc.ByteStream:
        """Lines to the agent, lines from it."""
        ...

    async def run(self, pump: Callable[[], Awaitable[None]]) -> None:
        """Run the agent (if it runs here) while ``pump`` (the connection's
        reading of :attr:`stream`) runs; return once both are over.  What the
        agent raises ends this connection only (the server logs it)."""
        ...

    async def aclose(self) -> None:
        """End the agent (bounded: see ``HttpLimits.close_grace_seconds``)."""
        ...


class AgentLauncher(Protocol):
    """Starts one agent for a new ACP connection."""

    async def launch(
        self, task_group: anyio.abc.TaskGroup, grace: float
    ) -> AgentHandle:
        """A running agent (or one that :meth:`AgentHandle.run` starts);
        long-lived tasks of its own, if any, go in ``task_group``."""
        ...


#: what a closing in-process agent may take beyond its grace: its adapter's
#: flush of what is queued (``FLUSH_GRACE`` of acp_trio and acp_asyncio)
_FLUSH = 1.0


class _InProcessHandle:
    """An agent served in the connection's own task (:meth:`run`), over the seam."""

    __slots__ = ("_agent", "_end", "_ended", "_grace", "_runner", "_stream", "done")

    def __init__(
        self, agent: InProcessAgent, ours: SeamEnd, theirs: SeamEnd, grace: float
    ) -> None:
        self._agent = agent
        self._end = theirs  # the agent's end of the seam
        self._stream = SeamStream(ours)
        self._grace = grace
        #: :meth:`run` is over (the agent ended)
        self.done = False
        # the task running :meth:`run` (its id), while it runs
        self._runner: int | None = None
        # made when a closer waits for the end, woken when run is over
        self._ended: Signal | None = None

    @property
    def stream(self) -> anyio.abc.ByteStream:
        return self._stream

    async def run(self, pump: Callable[[], Awaitable[None]]) -> None:
        """Serve the agent while ``pump`` runs, in this task; once the pump is
        over (the agent ended, or the connection closed its stream: the agent
        read EOF), the agent gets the grace to end by itself, then its
        adapter closes it (its handlers cancelled)."""
        self._runner = anyio.get_current_task().id
        try:
            if sniffio.current_async_library() == "trio":
                await self._run_trio(pump)
            else:
                await self._run_asyncio(pump)
        finally:
            self._end.close()
            self._runner = None
            self.done = True
            if self._ended is not None:
                self._ended.wake()

    async def _run_trio(self, pump: Callable[[], Awaitable[None]]) -> None:
        import acp_trio

        agent = self._agent
        served: AbstractAsyncContextManager[acp_trio.AgentSideConnection[Any]] = (
            acp_trio.connect_to_client(
                acp_trio.MemoryStream(self._end),
                agent.agents,
                limits=agent.limits,
                unstable=agent.unstable,
            )
        )
        async with served as conn:
            await pump()
            with anyio.move_on_after(self._grace):
                await conn.closed.wait()

    async def _run_asyncio(self, pump: Callable[[], Awaitable[None]]) -> None:
        import acp_asyncio

        agent = self._agent
        # the connection reads and writes the seam itself: no streams, no task
        served: AbstractAsyncContextManager[acp_asyncio.AgentSideConnection[Any]] = (
            acp_asyncio.connect_to_client_in_memory(
                self._end, agent.agents, limits=agent.limits, unstable=agent.unstable
            )
        )
        async with served as conn:
            await pump()
            with anyio.move_on_after(self._grace):
                await conn.wait_closed()

    async def aclose(self) -> None:
        await anyio.aclose_forcefully(self._stream)  # the agent reads EOF
        if self.done or self._runner == anyio.get_current_task().id:
            return  # run's own pump closing: run goes on to end the agent
        ended = self._ended
        if ended is None:
            ended = self._ended = Signal()
        # run ends the agent within the grace (and its adapter's flush)
        with anyio.move_on_after(self._grace + _FLUSH, shield=True):
            while not self.done:
                await ended.wait()


class InProcessAgent:
    """Agent classes served in this process, one instance per connection.

    ``agents`` is what :func:`acp_trio.serve_agent` takes (a class, or
    ``{version: class}``); ``limits`` and ``unstable`` are passed on.  Under
    trio the connection is an ``acp_trio`` one, under asyncio an
    ``acp_asyncio`` one: handlers that only await the connection run on both.
    The agent runs in its connection's task (:meth:`AgentHandle.run`).
    """

    def __init__(
        self, agents: Offer, *, limits: Limits | None = None, unstable: bool = False
    ) -> None:
        self.agents = agents
        self.limits = limits
        self.unstable = unstable

    async def launch(
        self, task_group: anyio.abc.TaskGroup, grace: float
    ) -> AgentHandle:
        """A new agent instance on one end of the in-memory seam, served by
        the handle's :meth:`~AgentHandle.run`."""
        ours, theirs = seam_ends()
        return _InProcessHandle(self, ours, theirs, grace)


class _CommandHandle:
    def __init__(self, process: anyio.abc.Process, grace: float) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._stream = StapledByteStream(process.stdin, process.stdout)
        self._grace = grace

    @property
    def stream(self) -> anyio.abc.ByteStream:
        return self._stream

    async def run(self, pump: Callable[[], Awaitable[None]]) -> None:
        """The agent runs in its own process: only the pump runs here."""
        await pump()

    async def aclose(self) -> None:
        """End the agent's process group by ``acp_host.ShutdownPlan`` (stdin
        closed, the grace, SIGTERM, the grace, SIGKILL; always reaped), with
        anyio's waits; shielded from cancellation."""
        process = self._process
        pgid = process.pid  # it leads its group (start_new_session)

        async def close_input() -> None:
            await anyio.aclose_forcefully(self._stream)  # stdin EOF: the polite way

        async def await_exit(step: AwaitExit) -> None:
            with anyio.move_on_after(inf if step.timeout is None else step.timeout):
                await process.wait()
                # polled: no event tells the exit of a process not our child
                while step.group and group_alive(pgid):  # noqa: ASYNC110
                    await anyio.sleep(GROUP_POLL)

        signalled = False
        with anyio.CancelScope(shield=True):
            signalled = await ShutdownPlan(pgid, self._grace).carry_out(
                process, await_exit=await_exit, close_input=close_input
            )
        if signalled:  # as every tool says a stuck child: one bounded line
            log.warning(
                "agent process %d did not exit %g s after its stdin closed:"
                " its process group was signalled (exit status %s)",
                pgid,
                self._grace,
                process.returncode,
            )


class CommandAgent:
    """A stdio agent command, one process (group) per connection.

    ``argv`` is started with ``env`` (the server's environment when None) in
    ``cwd``, in a new session so that ending the connection ends the agent
    and whatever it started.  Its stderr is the server's.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        if not argv:
            raise ValueError("CommandAgent needs a command")
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd

    async def launch(
        self, task_group: anyio.abc.TaskGroup, grace: float
    ) -> AgentHandle:
        """Start the command with pipes on its stdin and stdout."""
        kwargs: dict[str, Any] = {}
        if self.env is not None:
            kwargs["env"] = self.env
        process = await anyio.open_process(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            cwd=self.cwd,
            start_new_session=True,
            **kwargs,
        )
        return _CommandHandle(process, grace)
