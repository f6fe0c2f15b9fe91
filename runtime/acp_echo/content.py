"""What the echo agent says back: ids, prompt text, chunks, a session's setup
as text and as ``_meta``."""

from __future__ import annotations

import re
import uuid
from typing import Literal

import acp_trio
import msgspec
from acp_schema import v1

from acp_echo.store import Json, Session


def not_found(session_id: str) -> acp_trio.RequestError:
    return acp_trio.RequestError(
        v1.ERROR_CODE_RESOURCE_NOT_FOUND,
        "Resource not found",
        {"sessionId": session_id},
    )


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def to_json(value: object) -> list[Json]:
    """Generated Structs (a list of them) as wire JSON objects."""
    return msgspec.convert(msgspec.to_builtins(value), list[Json])


def prompt_text(blocks: list[Json]) -> str:
    """The prompt (as wire JSON) as one line of text: links and embedded
    resources by name; read from JSON, it is the same in every version."""
    parts: list[str] = []
    for block in blocks:
        kind, text = block.get("type"), block.get("text")
        resource = block.get("resource")
        if kind == "text" and isinstance(text, str):
            parts.append(text)
        elif kind == "resource_link":
            parts.append(f"[{block.get('name')}]")
        elif kind == "resource" and isinstance(resource, dict):
            parts.append(f"[{resource.get('uri')}]")  # pyright: ignore[reportUnknownMemberType]
    return " ".join(" ".join(parts).split())


def chunks_of(text: str, size: int = 24) -> list[str]:
    """``text`` in pieces of about ``size`` characters, split after spaces."""
    pieces: list[str] = []
    current = ""
    for word in re.findall(r"\S+\s*", text):
        current += word
        if len(current) >= size:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces


def describe_setup(session: Session) -> str:
    lines = [f"Working in {session.cwd}"]
    if session.additional_directories:
        lines[0] += " (also " + ", ".join(session.additional_directories) + ")"
    for server in session.mcp_servers:
        lines.append(describe_server(server))
    return "\n".join(lines)


def describe_server(server: object) -> str:
    """One MCP server entry as a line; any JSON (a custom ``_`` transport, an
    entry edited on disk) is described, never an error."""
    if not isinstance(server, dict):
        return f"MCP server (unreadable entry {str(server)[:40]!r})"
    entry = msgspec.convert(server, Json)
    transport, where = entry.get("type", "stdio"), entry.get("url")
    if not isinstance(where, str):
        command, args = entry.get("command"), entry.get("args")
        words: list[object] = [command]
        if isinstance(args, list):
            words.extend(msgspec.convert(args, list[object]))
        where = " ".join(str(w) for w in words if w is not None) or "(no address)"
    return f"MCP server {entry.get('name', '(unnamed)')} ({transport}): {where}"


def setup_meta(session: Session) -> Json:
    """What the agent recorded of the session setup, echoed in ``_meta``."""
    return {
        "echoAgent": {
            "sessionId": session.session_id,
            "cwd": session.cwd,
            "additionalDirectories": session.additional_directories,
            "mcpServers": session.mcp_servers,
        }
    }


PLAN_STEPS: list[tuple[str, Literal["high", "medium", "low"]]] = [
    ("Read the prompt", "high"),
    ("Ask permission to run the echo tool", "medium"),
    ("Echo the prompt back", "low"),
]


# -- the agent: what both versions share ---------------------------------------------
