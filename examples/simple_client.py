"""A small ACP client to copy: runs an agent, sends one prompt, prints the turn.

``python examples/simple_client.py PROMPT AGENT_COMMAND...``, e.g.::

    python examples/simple_client.py "hello there" python examples/simple_agent.py

It speaks protocol v1: prints the agent's text as it streams and each tool
call's status, allows a permission request once (printing what it chose), and
sends ``session/cancel`` on Ctrl-C; the turn's stop reason ends the output.

Handler names: the client implements methods of ``acp_schema.v1.Client``,
each named after its wire name with ``/`` as ``_``
(``session/update`` -> ``session_update``,
``session/request_permission`` -> ``session_request_permission``). Subclass
``v1.Client`` and write the methods you support: the type checker checks each
against the protocol, and the methods left out are answered -32601 (method not
found). The connection parameter, ``ClientSideConnection[v1.Agent]``, tells
the type checker which version you speak, so ``conn.agent`` is a typed
``v1.Agent``.
"""

from __future__ import annotations

import os
import signal
import sys

import acp_trio
import trio
from acp_schema import v1


class SimpleClient(v1.Client):
    def __init__(self, conn: acp_trio.ClientSideConnection[v1.Agent]) -> None:
        self.transcript = acp_trio.SessionTranscript(version=v1)
        self.midline = False  # streamed text printed without its newline yet

    def line(self, text: str) -> None:
        print(("\n" if self.midline else "") + text, flush=True)
        self.midline = False

    async def session_update(self, params: v1.SessionNotification) -> None:
        # The transcript keeps the session's state (messages, tool calls, plan).
        touched = self.transcript.apply(params)
        update = params.update
        if isinstance(update, v1.AgentMessageChunk) and isinstance(
            update.content, v1.TextContent
        ):
            print(update.content.text, end="", flush=True)
            self.midline = True
        elif isinstance(touched, acp_trio.ToolCallState):
            self.line(f"[tool {touched.title}: {touched.status}]")

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        once = [o for o in params.options if o.kind == "allow_once"]
        if not once:  # never grant "always" unasked
            return v1.RequestPermissionResponse(
                outcome=v1.RequestPermissionOutcomeCancelled()
            )
        self.line(f"[permission: {once[0].name}]")
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=once[0].option_id)
        )


async def main(prompt: str, command: list[str]) -> None:
    async with acp_trio.spawn_agent(command, client=SimpleClient) as conn:
        await conn.agent.initialize(
            v1.InitializeRequest(
                protocol_version=1,
                client_info=v1.Implementation(name="simple-client", version="1.0"),
            )
        )
        session = await conn.agent.session_new(
            v1.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[])
        )
        sid = session.session_id

        async def cancel_on_ctrl_c(task_status: trio.TaskStatus[None]) -> None:
            with trio.open_signal_receiver(signal.SIGINT) as signals:
                task_status.started()
                async for _ in signals:
                    # The agent answers the running prompt "cancelled".
                    await conn.agent.session_cancel(
                        v1.CancelNotification(session_id=sid)
                    )

        async with trio.open_nursery() as nursery:
            await nursery.start(cancel_on_ctrl_c)
            result = await conn.agent.session_prompt(
                v1.PromptRequest(session_id=sid, prompt=[v1.TextContent(text=prompt)])
            )
            nursery.cancel_scope.cancel()
        client = conn.client  # the SimpleClient the runtime built
        assert isinstance(client, SimpleClient)
        client.line(f"[{result.stop_reason}]")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: simple_client.py PROMPT AGENT_COMMAND...")
    trio.run(main, sys.argv[1], sys.argv[2:])
