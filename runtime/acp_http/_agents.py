"""Where a connection's agent runs: in this process, or as a command.

A server starts one agent per ACP connection and talks newline-delimited
JSON-RPC to it over a byte stream:

- :class:`InProcessAgent` serves agent classes written with this project's
  runtime, by the adapter of the server's event loop (``acp_trio`` under
  trio, ``acp_asyncio`` under asyncio), over the in-memory seam;
- :class:`CommandAgent` starts a stdio agent command in a process group of
  its own, ended with the connection.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Mapping, Sequence
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
    """One running agent: its byte stream and how to end it."""

    @property
    def stream(self) -> anyio.abc.ByteStream:
        """Lines to the agent, lines from it."""
        ...

    async def aclose(self) -> None:
        """End the agent (bounded: see ``HttpLimits.close_grace_seconds``)."""
        ...


class AgentLauncher(Protocol):
    """Starts one agent for a new ACP connection."""

    async def launch(
        self, task_group: anyio.abc.TaskGroup, grace: float
    ) -> AgentHandle:
        """A running agent; long-lived tasks go in ``task_group``."""
        ...


class _InProcessHandle:
    def __init__(
        self, stream: anyio.abc.ByteStream, scope: anyio.CancelScope, grace: float
    ) -> None:
        self._stream = stream
        self._scope = scope
        self._grace = grace
        #: the agent's task ended (:meth:`ended` says so)
        self.done = False
        self._ended = Signal()

    @property
    def stream(self) -> anyio.abc.ByteStream:
        return self._stream

    async def aclose(self) -> None:
        await anyio.aclose_forcefully(self._stream)  # the agent reads EOF
        with anyio.move_on_after(self._grace, shield=True):
            while not self.done:
                await self._ended.wait()
        self._scope.cancel()

    def ended(self) -> None:
        """The agent's task ended."""
        self.done = True
        self._ended.wake()


class InProcessAgent:
    """Agent classes served in this process, one instance per connection.

    ``agents`` is what :func:`acp_trio.serve_agent` takes (a class, or
    ``{version: class}``); ``limits`` and ``unstable`` are passed on.  Under
    trio the connection is an ``acp_trio`` one, under asyncio an
    ``acp_asyncio`` one: handlers that only await the connection run on both.
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
        """Serve a new agent instance over one end of the in-memory seam."""
        ours, theirs = seam_ends()
        stream = SeamStream(ours)
        scope = anyio.CancelScope()
        handle = _InProcessHandle(stream, scope, grace)
        task_group.start_soon(self._serve, theirs, scope, handle)
        return handle

    async def _serve(
        self, end: SeamEnd, scope: anyio.CancelScope, handle: _InProcessHandle
    ) -> None:
        # whatever fails here ends this connection, never the server's task group
        try:
            with scope:
                if sniffio.current_async_library() == "trio":
                    await self._serve_trio(end)
                else:
                    await self._serve_asyncio(end)
        except Exception:
            log.exception("an in-process agent failed")
        finally:
            end.close()
            handle.ended()

    async def _serve_trio(self, end: SeamEnd) -> None:
        import acp_trio

        await acp_trio.serve_agent(
            acp_trio.MemoryStream(end),
            self.agents,
            limits=self.limits,
            unstable=self.unstable,
        )

    async def _serve_asyncio(self, end: SeamEnd) -> None:
        import acp_asyncio

        reader, writer = acp_asyncio.open_memory_stream(end)
        try:
            await acp_asyncio.serve_agent(
                reader, writer, self.agents, limits=self.limits, unstable=self.unstable
            )
        finally:
            writer.close()


class _CommandHandle:
    def __init__(self, process: anyio.abc.Process, grace: float) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._stream = StapledByteStream(process.stdin, process.stdout)
        self._grace = grace

    @property
    def stream(self) -> anyio.abc.ByteStream:
        return self._stream

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
