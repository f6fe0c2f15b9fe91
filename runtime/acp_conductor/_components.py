"""The components of a chain: what the conductor talks to, each over one stream.

A component is anything that gives the conductor a :class:`trio.abc.Stream`
while a block runs and ends when the block is left (:class:`Component`):

- :class:`CommandComponent`: a program, started in a process group of its own
  (``acp_host.group_options``) and ended by ``acp_host.ShutdownPlan`` (stdin
  closed, ``grace_period``, SIGTERM to the group, ``kill_after``, SIGKILL;
  always reaped), as every runtime package ends its children;
- :class:`InProcessComponent`: a coroutine serving the other end of the
  in-memory seam (``acp_trio.memory_stream_pair``) in this process: an agent
  (``acp_trio.serve_agent``), a proxy (``acp_trio.serve_proxy``), or anything
  speaking ACP lines on a stream.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from math import inf
from typing import Protocol

import trio
from acp_core import DEFAULT_SEAM_CAPACITY
from acp_host import GROUP_POLL, AwaitExit, ShutdownPlan, group_alive, group_options
from acp_trio import memory_stream_pair

__all__ = [
    "CommandComponent",
    "Component",
    "InProcessComponent",
    "command_component",
]

#: Seconds an in-process component has to return after its stream closed.
IN_PROCESS_GRACE = 1.0


class Component(Protocol):
    """One link of a chain: a name (in errors and traces) and a stream."""

    @property
    def name(self) -> str:
        """How the component is named in errors and traces."""
        ...

    def open(self) -> AbstractAsyncContextManager[trio.abc.Stream]:
        """Start the component; its stream while the block runs; ended on leaving."""
        ...


@dataclass(frozen=True)
class CommandComponent:
    """A program speaking ACP on its stdin/stdout, in a process group of its own.

    ``group_pid`` (the leader's pid, which is the group id) is set once it
    started, for whoever wants to check that the group is gone.
    """

    argv: Sequence[str]
    name: str = ""
    cwd: str | os.PathLike[str] | None = None
    env: Mapping[str, str] | None = None
    #: seconds to exit after stdin closed, before SIGTERM to its group
    grace_period: float = 2.0
    #: seconds after SIGTERM before SIGKILL
    kill_after: float = 1.0
    started: list[int] = field(default_factory=list[int], compare=False)

    def __post_init__(self) -> None:
        if not self.argv:
            raise ValueError("a component needs a command")
        if not self.name:
            object.__setattr__(self, "name", os.path.basename(str(self.argv[0])))

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[trio.abc.Stream, None]:
        group = group_options()
        process = await trio.lowlevel.open_process(
            [str(a) for a in self.argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=self.cwd,
            env=self.env,
            **group,
        )
        self.started.append(process.pid)
        pgid = process.pid if group else None  # the leader: pgid == pid
        try:
            assert process.stdin is not None and process.stdout is not None
            yield trio.StapledStream(process.stdin, process.stdout)
        finally:
            await _end(
                process,
                ShutdownPlan(pgid, self.grace_period, kill_after=self.kill_after),
            )
            if process.stdout is not None:
                await trio.aclose_forcefully(process.stdout)


def command_component(
    command: str, name: str = "", **options: object
) -> CommandComponent:
    """A :class:`CommandComponent` from one command string, split as a shell would."""
    argv = shlex.split(command)
    return CommandComponent(argv, name, **options)  # type: ignore[arg-type]


async def _end(process: trio.Process, plan: ShutdownPlan) -> None:
    """Carry out ``plan`` with trio's waits; shielded from cancellation."""
    pgid = plan.pgid

    async def close_input() -> None:
        if process.stdin is not None:
            await trio.aclose_forcefully(process.stdin)

    async def await_exit(step: AwaitExit) -> None:
        with trio.move_on_after(inf if step.timeout is None else step.timeout):
            await process.wait()
            # polled: no event tells the exit of a process not our child
            while step.group and pgid is not None and group_alive(pgid):  # noqa: ASYNC110
                await trio.sleep(GROUP_POLL)

    with trio.CancelScope(shield=True):
        await plan.carry_out(process, await_exit=await_exit, close_input=close_input)


@dataclass(frozen=True)
class InProcessComponent:
    """A component served in this process over the in-memory seam.

    ``serve`` is called with the component's end of the seam (a
    :class:`trio.abc.Stream`) and runs until that stream ends; leaving
    :meth:`open` closes the conductor's end and gives ``serve``
    :data:`IN_PROCESS_GRACE` seconds to return before it is cancelled.
    """

    serve: Callable[[trio.abc.Stream], Awaitable[object]]
    name: str = "in-process"
    capacity: int = DEFAULT_SEAM_CAPACITY

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[trio.abc.Stream, None]:
        ours, theirs = memory_stream_pair(self.capacity)

        async def serve() -> None:
            try:
                await self.serve(theirs)
            finally:
                await trio.aclose_forcefully(theirs)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            try:
                yield ours
            finally:
                await trio.aclose_forcefully(ours)
                nursery.cancel_scope.deadline = trio.current_time() + IN_PROCESS_GRACE
