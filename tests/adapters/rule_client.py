"""One client, on either runtime, over its own stdin/stdout: the test is its agent.

``python rule_client.py trio|asyncio SCENARIO``; when done it writes one line
``REPORT {json}`` to stderr.  Scenarios:

- ``order N``: initialize, then N x ``session/new``; each update's handler
  records whether the session it names was already known to the code that
  called ``session_new`` (``seen``);
- ``cancel-permission``: initialize, a session, a prompt; when the agent asks
  a permission, sends ``session/cancel`` (the runtime answers the pending
  permission request ``cancelled``); reports the prompt's stop reason;
- ``burst N``: initialize, then wait for the first of N updates the agent
  writes at once; reports how many were handled when this task ran again
  (``handled``) and, once all N were, their number (``seen``);
- ``initialize``: initialize only (reports its result);
- ``version``: initialize, offering v1 only (reports the error);
- ``newer N``: initialize, then wait for N updates and unknown variants (a
  peer on a newer spec) in all; reports the order they came in (``order``:
  a session id, or ``unknown:TAG``), each unknown variant's fields
  (``variants``) and the line its ``forward`` wrote on an agent-side
  connection (``forwarded``); ``newer-plain N``: the same client without
  an ``unknown_variant`` handler (updates only).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from acp_schema import v1

ADAPTER, SCENARIO, *ARGS = sys.argv[1:]
report: dict[str, Any] = {}
known: set[str] = set()

if ADAPTER == "trio":
    import acp_trio as runtime
    import trio

    Event: Any = trio.Event
else:
    import asyncio

    import acp_asyncio as runtime  # type: ignore[no-redef]

    Event = asyncio.Event


class Client:
    def __init__(self, conn: Any) -> None:
        self.asked = Event()
        self.updated = Event()
        self.first = Event()

    async def session_update(self, params: v1.SessionNotification) -> None:
        seen = report.setdefault("seen", [])
        seen.append(params.session_id in known)
        if len(seen) == 1:
            self.first.set()
        if SCENARIO in ("order", "burst") and len(seen) == int(ARGS[0]):
            self.updated.set()
        report.setdefault("order", []).append(params.session_id)
        self._count()

    def _count(self) -> None:
        if SCENARIO.startswith("newer") and len(report["order"]) == int(ARGS[0]):
            self.updated.set()

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        self.asked.set()
        await Event().wait()  # until session/cancel answers it
        raise AssertionError("not reached")


class NewerClient(Client):
    """A client that takes what a peer on a newer spec sends (``newer``)."""

    async def unknown_variant(self, message: runtime.UnknownVariant) -> None:
        report.setdefault("order", []).append(f"unknown:{message.tag}")
        report.setdefault("variants", []).append(
            {
                "method": message.method,
                "where": message.where,
                "params": bytes(message.params).decode(),
                "path": message.path,
                "tag": message.tag,
                "sessionId": message.session_id,
                "knowsAgentMessageChunk": "agent_message_chunk" in message.known,
            }
        )
        if len(report["variants"]) == 1:
            report["forwarded"] = await forwarded(message)
        self._count()


INIT = v1.InitializeRequest(protocol_version=1)


class Agent:
    """The agent side a proxy would forward to (serves nothing)."""

    def __init__(self, conn: Any) -> None:
        pass


async def forwarded(message: Any) -> str:
    """The line ``conn.forward(message)`` writes on an agent-side connection."""
    if ADAPTER == "trio":
        ours, theirs = runtime.memory_stream_pair()
        async with runtime.connect_to_client(ours, Agent) as conn:
            await conn.forward(message)
            line = b""
            while not line.endswith(b"\n"):
                line += await theirs.receive_some()
    else:
        ours, theirs = runtime.memory_stream_pair()
        async with runtime.connect_to_client(*ours, Agent) as conn:
            await conn.forward(message)
            line = await theirs.reader.readline()
    return line.decode()


async def scenario(conn: Any) -> None:
    agent = conn.agent
    if SCENARIO == "version":
        try:
            await agent.initialize(INIT)
        except runtime.ProtocolVersionError as exc:
            report["error"] = type(exc).__name__
        return
    init = await agent.initialize(INIT)
    report["protocolVersion"] = init.protocol_version
    if SCENARIO == "order":
        for _ in range(int(ARGS[0])):
            session = await agent.session_new(
                v1.NewSessionRequest(cwd="/", mcp_servers=[])
            )
            known.add(session.session_id)
        await conn.client.updated.wait()  # the last update, handled after its answer
    elif SCENARIO.startswith("newer"):
        await conn.client.updated.wait()
    elif SCENARIO == "burst":
        await conn.client.first.wait()
        report["handled"] = len(report["seen"])
        await conn.client.updated.wait()
    elif SCENARIO == "cancel-permission":
        session = await agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))
        sid = session.session_id
        request = v1.PromptRequest(session_id=sid, prompt=[v1.TextContent(text="hi")])
        if ADAPTER == "trio":
            async with trio.open_nursery() as nursery:
                results: list[Any] = []

                async def turn() -> None:
                    results.append(await agent.session_prompt(request))

                nursery.start_soon(turn)
                await conn.client.asked.wait()
                await agent.session_cancel(v1.CancelNotification(session_id=sid))
            result = results[0]
        else:
            task = asyncio.ensure_future(agent.session_prompt(request))
            await conn.client.asked.wait()
            await agent.session_cancel(v1.CancelNotification(session_id=sid))
            result = await task
        report["stopReason"] = result.stop_reason


CLIENT = NewerClient if SCENARIO == "newer" else Client


def done() -> None:
    print("REPORT " + json.dumps(report), file=sys.stderr, flush=True)


if ADAPTER == "trio":

    async def main_trio() -> None:
        stream = trio.StapledStream(
            trio.lowlevel.FdStream(os.dup(1)), trio.lowlevel.FdStream(os.dup(0))
        )
        async with runtime.connect_to_agent(stream, CLIENT) as conn:
            await scenario(conn)

    trio.run(main_trio)
else:

    async def main_asyncio() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", 0)
        )
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(os.dup(1), "wb", 0)
        )
        writer = asyncio.StreamWriter(transport, protocol, reader, loop)
        async with runtime.connect_to_agent(reader, writer, CLIENT) as conn:
            await scenario(conn)

    asyncio.run(main_asyncio())
done()
