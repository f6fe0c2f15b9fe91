"""One agent, on either runtime: ``python rule_agent.py trio|asyncio [--write-buffer N] [--max-message-size N] [--broken-v2]``.

The engine's rules are tested through it over real pipes, once per adapter
(``test_rules_on_both_adapters.py``).  It offers protocol v1 and v2.  A prompt's text
says what the turn does:

- ``updates N``: N agent_message_chunk updates (texts "0", "1", ...), then
  ``end_turn``;
- ``wait``: one update, then waits until cancelled;
- ``flood``: updates until cancelled (each text its number);
- ``ask``: asks ``session/request_permission`` and ends ``end_turn`` after
  an update saying the outcome.

The extension notification ``_context/set`` sets a ``ContextVar`` to its
``value``; the extension request ``_context/get`` answers what that variable
holds in the request handler (``{"value": null}`` when unset).
"""

from __future__ import annotations

import contextvars
import dataclasses
import sys
from typing import Any

from acp_schema import v1
from acp_schema import v2_alpha0 as v2

ADAPTER = sys.argv[1]
#: set by a notification handler; a request handler must never see it
CONTEXT_PROBE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "context_probe", default=None
)


def option(name: str) -> int | None:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else None


WRITE_BUFFER = option("--write-buffer")
MAX_MESSAGE_SIZE = option("--max-message-size")

if ADAPTER == "trio":
    import acp_trio as runtime
    import trio

    async def forever() -> None:
        await trio.sleep_forever()

elif ADAPTER == "asyncio":
    import asyncio

    import acp_asyncio as runtime  # type: ignore[no-redef]

    async def forever() -> None:
        await asyncio.Event().wait()

else:
    raise SystemExit(f"unknown adapter {ADAPTER!r}")


def make_agent(schema: Any) -> type:
    class RuleAgent:
        acp_schema = schema  # the draft it speaks (v2: 2.0.0-alpha.0)

        def __init__(self, conn: Any) -> None:
            self.client = conn.client

        async def initialize(self, params: Any) -> Any:
            return schema.InitializeResponse(
                protocol_version=schema.PROTOCOL_VERSION,
                agent_info=schema.Implementation(
                    name=f"rule-agent-{ADAPTER}", version="1"
                ),
            )

        async def session_new(self, params: Any) -> Any:
            return schema.NewSessionResponse(session_id="s1")

        async def say(self, sid: str, text: str) -> None:
            chunk = runtime.agent_text(text, message_id="m1", version=schema)
            await self.client.session_update(runtime.notification(sid, chunk))

        async def newer(self, sid: str, variant: Any) -> None:
            said = f"newer {variant.tag} {variant.path} {variant.where}"
            await self.say(sid, f"{said} {bytes(variant.params).decode()}")

        async def session_prompt(self, params: Any) -> Any:
            sid = params.session_id
            words = params.prompt[0].text.split()
            if words[0] == "updates":
                for i in range(int(words[1])):
                    await self.say(sid, str(i))
            elif words[0] == "wait":
                await self.say(sid, "waiting")
                await forever()
            elif words[0] == "flood":
                i = 0
                while True:
                    await self.say(sid, str(i))
                    i += 1
            elif words[0] == "ask":
                try:
                    answer = await self.client.session_request_permission(
                        schema.RequestPermissionRequest(
                            session_id=sid,
                            tool_call=schema.ToolCallUpdate(tool_call_id="c1"),
                            options=[
                                schema.PermissionOption(
                                    option_id="yes", name="Yes", kind="allow_once"
                                )
                            ],
                        )
                    )
                except runtime.UnknownVariantError as exc:  # a newer client's
                    await self.newer(sid, exc.variant)
                else:
                    await self.say(sid, answer.outcome.outcome)
            return schema.PromptResponse(stop_reason="end_turn")

        async def ext_notification(self, method: str, params: Any) -> None:
            if method == "_context/set":
                CONTEXT_PROBE.set(params["value"])

        async def ext_method(self, method: str, params: Any) -> Any:
            assert method == "_context/get"
            return {"value": CONTEXT_PROBE.get()}

    return RuleAgent


def broken(conn: Any) -> object:
    raise RuntimeError("this agent cannot be built")


broken.acp_schema = v2  # type: ignore[attr-defined]


OFFERS = {1: make_agent(v1), 2: broken if "--broken-v2" in sys.argv else make_agent(v2)}
LIMITS = runtime.Limits()
if WRITE_BUFFER is not None:
    LIMITS = dataclasses.replace(LIMITS, write_buffer_bytes=WRITE_BUFFER)
if MAX_MESSAGE_SIZE is not None:
    LIMITS = dataclasses.replace(LIMITS, max_message_size=MAX_MESSAGE_SIZE)

if __name__ == "__main__":
    if ADAPTER == "trio":
        trio.run(lambda: runtime.serve_agent_stdio(OFFERS, limits=LIMITS))
    else:
        asyncio.run(runtime.serve_agent_stdio(OFFERS, limits=LIMITS))
