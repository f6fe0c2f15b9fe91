"""The agents and ASGI apps bench/http_bench.py serves (one module, imported by the servers).

``ours``: :class:`BenchAgent` (this project's runtime) in ``acp_http.asgi_app``;
``theirs``: the same agent written with the official Python SDK 0.12.1 in its
``acp.http.asgi.create_asgi_app``.  A prompt whose text is a number N streams
N ``agent_message_chunk`` updates, then ends the turn.
``bare``: no ACP at all, a 202 to every request: the floor of one POST
over HTTP/2 and HTTP/1.1 under the same server.
``python http_bench_apps.py`` serves :class:`BenchAgent` on stdio.
"""

from __future__ import annotations

from typing import Any

import acp_http
from acp_schema import v1


class BenchAgent(v1.Agent):
    """Loop-neutral: served by acp_trio or acp_asyncio."""

    def __init__(self, conn: Any) -> None:
        self.client: v1.Client = conn.client

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return v1.NewSessionResponse(session_id="bench")

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        block = params.prompt[0]
        count = int(block.text) if isinstance(block, v1.TextContent) else 0
        for _ in range(count):
            # the types' own constructors, as TheirAgent builds its updates
            await self.client.session_update(
                v1.SessionNotification(
                    session_id=params.session_id,
                    update=v1.AgentMessageChunk(content=v1.TextContent(text="chunk ")),
                )
            )
        return v1.PromptResponse(stop_reason="end_turn")


class TheirAgent:
    """The same agent on the official SDK (duck-typed ``acp.Agent``)."""

    def __init__(self) -> None:
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> Any:
        from acp import InitializeResponse

        return InitializeResponse(protocol_version=1)

    async def new_session(self, cwd: str, **kwargs: Any) -> Any:
        from acp import NewSessionResponse

        return NewSessionResponse(session_id="bench")

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> Any:
        from acp import PromptResponse, text_block
        from acp.schema import AgentMessageChunk

        for _ in range(int(prompt[0].text)):
            await self.conn.session_update(
                session_id=session_id,
                update=AgentMessageChunk(
                    session_update="agent_message_chunk", content=text_block("chunk ")
                ),
            )
        return PromptResponse(stop_reason="end_turn")


ours = acp_http.asgi_app(acp_http.InProcessAgent(BenchAgent))


def _theirs() -> Any:
    from acp.http.asgi import create_asgi_app

    return create_asgi_app(lambda conn: TheirAgent())


theirs = _theirs()


async def bare(scope: Any, receive: Any, send: Any) -> None:
    """An empty 202 to every request (lifespan: started and stopped)."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-length", b"0")]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


if __name__ == "__main__":
    import acp_trio
    import trio

    trio.run(acp_trio.serve_agent_stdio, BenchAgent)
