"""A proxy that masks secrets in what the agent sends back (asyncio).

Run it in a chain in front of any agent::

    python -m acp_conductor --proxy "python examples/proxy_redaction.py" -- python -m acp_echo

Every string of every session update and permission request from the agent
(message text, tool titles, tool input and output, ``_meta``) goes through
:func:`mask`. Streamed text is the one subtle case: an agent may split a secret
between two chunks, so the last word of a chunk is held back until the next
chunk, another update or the end of the turn. Files the agent writes through the
client (``fs/write_text_file``) are forwarded unchanged: masking them would
corrupt the user's files.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from typing import TypeVar

import acp_asyncio
import msgspec
from acp_schema import v1

#: What a secret looks like: API keys of common providers, and the values of
#: ``ACP_REDACT`` (comma-separated literals).
PATTERNS = [
    r"sk-[A-Za-z0-9_-]{16,}",  # OpenAI / Anthropic style keys
    r"AKIA[0-9A-Z]{16}",  # AWS access key ids
    r"gh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    *(re.escape(s) for s in os.environ.get("ACP_REDACT", "").split(",") if s),
]
SECRET = re.compile("|".join(PATTERNS))
MASK = "[REDACTED]"
#: A held-back word longer than this is sent (masked) anyway: the hold is bounded.
MAX_HELD_CHARS = 4_096

T = TypeVar("T")
Json = str | int | float | bool | None | list["Json"] | dict[str, "Json"]


def mask(text: str) -> str:
    return SECRET.sub(MASK, text)


def mask_all(value: T) -> T:
    """``value`` (a schema Struct) with every string in it masked."""

    def walk(item: Json) -> Json:
        if isinstance(item, str):
            return mask(item)
        if isinstance(item, list):
            return [walk(x) for x in item]
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        return item

    return msgspec.convert(walk(msgspec.to_builtins(value)), type(value))


@dataclass
class HeldText:
    """The unfinished last word of a session's streamed text."""

    update: v1.AgentMessageChunk | v1.AgentThoughtChunk
    block: v1.TextContent
    text: str


class Redact(acp_asyncio.Proxy):
    def __init__(self) -> None:
        self.held: dict[str, HeldText] = {}  # by session id

    async def session_update(self, params: v1.SessionNotification) -> None:
        update = params.update
        content = getattr(update, "content", None)
        if isinstance(update, (v1.AgentMessageChunk, v1.AgentThoughtChunk)) and (
            isinstance(content, v1.TextContent)
        ):
            await self.stream(params.session_id, update, content)
            return
        await self.flush(params.session_id)
        await self.predecessor.session_update(mask_all(params))

    async def stream(
        self,
        session_id: str,
        update: v1.AgentMessageChunk | v1.AgentThoughtChunk,
        block: v1.TextContent,
    ) -> None:
        held = self.held.get(session_id)
        if held is not None and (
            type(held.update) is not type(update)
            or held.update.message_id != update.message_id
        ):
            await self.flush(session_id)
            held = None
        text = (held.text if held else "") + block.text
        cut = max(text.rfind(" "), text.rfind("\n")) + 1  # after the last space
        if len(text) - cut > MAX_HELD_CHARS:
            cut = len(text)
        self.held[session_id] = HeldText(update, block, text[cut:])
        if cut:
            await self.send_text(session_id, update, block, text[:cut])

    async def flush(self, session_id: str) -> None:
        held = self.held.pop(session_id, None)
        if held is not None and held.text:
            await self.send_text(session_id, held.update, held.block, held.text)

    async def send_text(
        self,
        session_id: str,
        update: v1.AgentMessageChunk | v1.AgentThoughtChunk,
        block: v1.TextContent,
        text: str,
    ) -> None:
        content = msgspec.structs.replace(block, text=text)
        chunk = msgspec.structs.replace(update, content=content)
        notification = v1.SessionNotification(session_id=session_id, update=chunk)
        await self.predecessor.session_update(mask_all(notification))

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        await self.flush(params.session_id)
        return await self.predecessor.session_request_permission(mask_all(params))

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        try:
            return await self.successor.session_prompt(params)
        finally:  # the turn's last word, before its answer
            await self.flush(params.session_id)


if __name__ == "__main__":
    asyncio.run(acp_asyncio.serve_proxy_stdio(Redact()))
