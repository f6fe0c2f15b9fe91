"""acp_asyncio: an asyncio runtime for the Agent Client Protocol.

The public shape of :mod:`acp_trio` on asyncio, over the same I/O-free
protocol engine (:mod:`acp_core`): the same rules (ordering, cancellation,
initialize and version negotiation, capability refusals, bounds), the same
typed peers.  It needs nothing beyond the base install (``msgspec``).
An agent process::

    import asyncio
    import acp_asyncio
    from acp_schema import v1

    class EchoAgent(v1.Agent):
        def __init__(self, conn: acp_asyncio.AgentSideConnection[v1.Client]) -> None:
            self.client = conn.client

        async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
            return v1.InitializeResponse(protocol_version=1)

        async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
            return v1.NewSessionResponse(session_id="s1")

        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            chunk = acp_asyncio.agent_text("Hello", message_id="m1")
            await self.client.session_update(acp_asyncio.notification("s1", chunk))
            return v1.PromptResponse(stop_reason="end_turn")

    asyncio.run(acp_asyncio.serve_agent_stdio(EchoAgent))

and a client driving it::

    async with acp_asyncio.spawn_agent(["python", "my_agent.py"], client=MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        session = await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))

On ``session/cancel`` the prompt's task is cancelled (an
:class:`asyncio.CancelledError` at its next ``await``) and the prompt is
answered ``stopReason: "cancelled"``.
"""

from acp_core import reexports
from acp_core.reexports import *  # noqa: F403  (errors, Limits, builders, transcript, PeerProxy, Offer)

from ._connection import Connection
from ._memory import (
    MemoryEnd,
    connect_in_memory,
    connect_to_agent_in_memory,
    connect_to_client_in_memory,
    memory_stream_pair,
    open_memory_stream,
)
from ._serve import connect_to_agent, connect_to_client, serve_agent
from ._sides import (
    AgentFactory,
    AgentOffer,
    AgentSideConnection,
    ClientFactory,
    ClientOffer,
    ClientSideConnection,
)
from ._stdio import serve_agent_stdio
from ._subprocess import spawn_agent

__all__ = [
    "AgentFactory",
    "AgentOffer",
    "AgentSideConnection",
    "ClientFactory",
    "ClientOffer",
    "ClientSideConnection",
    "Connection",
    "MemoryEnd",
    "connect_in_memory",
    "connect_to_agent",
    "connect_to_agent_in_memory",
    "connect_to_client",
    "connect_to_client_in_memory",
    "memory_stream_pair",
    "open_memory_stream",
    "serve_agent",
    "serve_agent_stdio",
    "spawn_agent",
]
__all__ += reexports.__all__

# proxy chains: a proxy on asyncio (acp_core's ProxyCore; docs/proxies.md)
from acp_core import Proxy  # noqa: E402

from ._proxy_api import serve_proxy, serve_proxy_stdio  # noqa: E402

__all__ += ["Proxy", "serve_proxy", "serve_proxy_stdio"]
