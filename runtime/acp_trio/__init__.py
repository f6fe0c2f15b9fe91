"""acp_trio: a thin trio runtime for the Agent Client Protocol.

Typed agent and client connections over newline-delimited JSON-RPC, using
the generated ``acp_schema`` models and method tables.  An agent process::

    import trio, acp_trio
    from acp_schema import v1

    class EchoAgent:
        def __init__(self, conn: acp_trio.AgentSideConnection[v1.Client]) -> None:
            self.client = conn.client

        async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
            return v1.InitializeResponse(protocol_version=1)

        async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
            return v1.NewSessionResponse(session_id="s1")

        async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
            await self.client.session_update(v1.SessionNotification(...))
            return v1.PromptResponse(stop_reason="end_turn")

    trio.run(acp_trio.serve_agent_stdio, {1: EchoAgent})

and a client driving it::

    async with acp_trio.spawn_agent(["python", "my_agent.py"], client=MyClient) as conn:
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        session = await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
"""

try:
    import trio as _trio  # the adapter's one dependency beyond msgspec

    del _trio
except ModuleNotFoundError as exc:  # tests/packaging
    raise ModuleNotFoundError(
        "acp_trio needs trio: pip install 'acp-msgspec[trio]'", name=exc.name
    ) from exc

from acp_core import reexports
from acp_core.reexports import *  # noqa: F403  (errors, Limits, builders, transcript, PeerProxy, Offer)

from ._connection import Connection
from ._memory import MemoryStream, connect_in_memory, memory_stream_pair
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
    "MemoryStream",
    "connect_in_memory",
    "connect_to_agent",
    "connect_to_client",
    "memory_stream_pair",
    "serve_agent",
    "serve_agent_stdio",
    "spawn_agent",
]
__all__ += reexports.__all__

# proxy chains: a proxy on trio (acp_core's ProxyCore; docs/proxies.md)
from acp_core import Proxy  # noqa: E402

from ._proxy_api import serve_proxy, serve_proxy_stdio  # noqa: E402

__all__ += ["Proxy", "serve_proxy", "serve_proxy_stdio"]
