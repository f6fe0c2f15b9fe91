"""The connecting fixtures' objects: an agent in memory, an agent as a process.

``acp_in_memory.connect(agent, client)`` joins the two in this process on
the in-memory seam (``connect_in_memory`` of the test's event loop);
``acp_spawn.start(command, client)`` starts an agent command
(``spawn_agent``, its stderr captured).  Each gives the client's
connection, open until the test ends: the plugin closes it then, inside the
test's event loop, so a spawned agent's process group is ended by
``acp_host.ShutdownPlan`` (stdin closed, grace, SIGTERM, SIGKILL, reaped)
before the test's report is made, and its stderr is shown when the test
failed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from acp_core import DEFAULT_SEAM_CAPACITY, Limits, Offer

from ._runner import TestScope

if TYPE_CHECKING:
    import acp_asyncio
    import acp_trio

    #: The client's connection on either event loop.
    Connection: TypeAlias = (
        acp_trio.ClientSideConnection[Any] | acp_asyncio.ClientSideConnection[Any]
    )

__all__ = ["STDERR_SHOWN", "InMemory", "Spawn", "SpawnedAgent"]

#: Bytes of a spawned agent's stderr shown with a failed test (its last ones):
#: ``acp_spawn.stderr_shown``.
STDERR_SHOWN: Final = 16 * 1024


class _Fixture:
    def __init__(self, scope: TestScope) -> None:
        self._scope = scope

    @property
    def backend(self) -> str:
        """``"trio"`` or ``"asyncio"``: the event loop this test runs on."""
        return self._scope.backend.name

    def _runtime(self) -> Any:
        if self.backend == "trio":
            import acp_trio

            return acp_trio
        import acp_asyncio

        return acp_asyncio


class InMemory(_Fixture):
    """The ``acp_in_memory`` fixture: an agent and a client joined in this process."""

    async def connect(
        self,
        agent: Offer,
        client: Offer,
        *,
        limits: Limits | None = None,
        max_message_size: int | None = None,
        unstable: bool = False,
        capacity: int = DEFAULT_SEAM_CAPACITY,
    ) -> Connection:
        """Serve ``agent`` and connect ``client`` to it; the client's connection.

        ``agent`` and ``client`` are what ``serve_agent`` and
        ``connect_to_agent`` take (a class, a factory such as a
        :class:`~acp_pytest.FakeAgent` / :class:`~acp_pytest.FakeClient`, or
        ``{version: factory}``); the keywords are ``connect_in_memory``'s.
        Open until the test ends.
        """
        self._scope.offered += [agent, client]
        manager = self._runtime().connect_in_memory(
            agent,
            client,
            limits=limits,
            max_message_size=max_message_size,
            unstable=unstable,
            capacity=capacity,
        )
        conn: Connection = await self._scope.enter(manager)
        return conn


@dataclass
class SpawnedAgent:
    """An agent started by ``acp_spawn``: its command, process and connection."""

    command: list[str]
    pid: int
    connection: Any

    @property
    def stderr(self) -> bytes:
        """What it wrote on stderr (the last ``acp_host.STDERR_KEEP`` bytes)."""
        return bytes(self.connection.stderr_output)


class Spawn(_Fixture):
    """The ``acp_spawn`` fixture: an agent command started, ended at the test's end."""

    def __init__(self, scope: TestScope) -> None:
        super().__init__(scope)
        #: every agent started in this test, in order
        self.agents: list[SpawnedAgent] = []
        #: bytes of each agent's stderr shown when the test fails (its last ones)
        self.stderr_shown = STDERR_SHOWN
        scope.sections.append(self._stderr_section)

    async def start(
        self,
        command: Sequence[str | os.PathLike[str]],
        client: Offer,
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        grace_period: float = 2.0,
        limits: Limits | None = None,
        unstable: bool = False,
    ) -> Connection:
        """Start ``command`` (its own process group, stderr captured) and
        connect ``client`` to it over its stdin/stdout; the client's connection.

        At the test's end its stdin is closed, it has ``grace_period``
        seconds to exit, then its group gets SIGTERM, as long again, then
        SIGKILL (``spawn_agent``'s plan).  Its stderr is shown in the report
        of a failed test.
        """
        self._scope.offered.append(client)
        manager = self._runtime().spawn_agent(
            command,
            client,
            cwd=cwd,
            env=env,
            capture_stderr=True,
            grace_period=grace_period,
            limits=limits,
            unstable=unstable,
        )
        conn: Connection = await self._scope.enter(manager)
        process: Any = conn.process
        self.agents.append(
            SpawnedAgent([os.fspath(c) for c in command], process.pid, conn)
        )
        return conn

    def _stderr_section(self) -> tuple[str, str] | None:
        shown = [
            f"$ {' '.join(agent.command)}  (pid {agent.pid})\n"
            + agent.stderr[-self.stderr_shown :].decode(errors="replace")
            for agent in self.agents
        ]
        return ("acp_spawn: the agents' stderr", "\n".join(shown)) if shown else None
