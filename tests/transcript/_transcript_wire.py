"""Session updates as they arrive: JSON bytes decoded with the version's codec."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import acp_trio
import pytest
from acp_schema import v1
from acp_schema import v2_alpha0 as v2

SESSION = "sess_abc123def456"

# One class per concept: the unstable surface's updates are these same classes.
both_versions = pytest.mark.parametrize("vn", [v1, v2], ids=["v1", "v2"])


def notification(vn: ModuleType, update: dict[str, Any], session: str = SESSION) -> Any:
    """``{"sessionId": ..., "update": update}`` as bytes, decoded by ``vn``."""
    data = json.dumps({"sessionId": session, "update": update}).encode()
    return vn.decode(data, vn.SessionNotification)


def feed(
    vn: ModuleType, *updates: dict[str, Any], transcript: Any = None
) -> acp_trio.SessionTranscript:
    """A transcript (new unless given) after applying ``updates`` in order."""
    if transcript is None:
        transcript = acp_trio.SessionTranscript(version=vn)
    for update in updates:
        transcript.apply(notification(vn, update))
    return transcript


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def link(name: str) -> dict[str, Any]:
    return {"type": "resource_link", "uri": f"file:///work/{name}", "name": name}


def chunk(
    kind: str, block: dict[str, Any], message_id: str | None = None
) -> dict[str, Any]:
    """A ``{kind}_chunk`` update (kind: user_message, agent_message, agent_thought)."""
    update: dict[str, Any] = {"sessionUpdate": f"{kind}_chunk", "content": block}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def state(transcript: acp_trio.SessionTranscript) -> dict[str, Any]:
    """What a transcript holds, without its log of updates."""
    return {
        "messages": list(transcript.messages),
        "tool_calls": dict(transcript.tool_calls),
        "plans": dict(transcript.plans),
        "plan": list(transcript.plan),
        "usage": transcript.usage,
        "current_mode_id": transcript.current_mode_id,
        "config_options": list(transcript.config_options),
        "available_commands": list(transcript.available_commands),
        "session_info": transcript.session_info,
    }
