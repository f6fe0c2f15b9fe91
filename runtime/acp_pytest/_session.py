"""The first calls of a v1 client, for tests: ``initialize`` and ``session/new``, a prompt.

::

    session_id = await start_session(conn)             # fs and terminal advertised
    stop_reason = await prompt(conn, session_id, "hi")
"""

from __future__ import annotations

from typing import Any

from acp_schema import v1

__all__ = ["FULL_CLIENT", "prompt", "start_session"]

#: What :func:`start_session` advertises by default: every ``fs/*`` and ``terminal/*``
#: method (a :class:`~acp_pytest.FakeClient` serves them all).
FULL_CLIENT = v1.ClientCapabilities(
    fs=v1.FileSystemCapabilities(read_text_file=True, write_text_file=True),
    terminal=True,
)


async def start_session(
    conn: Any,
    *,
    cwd: str = "/",
    capabilities: v1.ClientCapabilities = FULL_CLIENT,
) -> str:
    """``initialize`` (protocol v1, ``capabilities``) then ``session/new`` in
    ``cwd``; the new session's id."""
    agent: v1.Agent = conn.agent
    await agent.initialize(
        v1.InitializeRequest(protocol_version=1, client_capabilities=capabilities)
    )
    session = await agent.session_new(v1.NewSessionRequest(cwd=cwd, mcp_servers=[]))
    return session.session_id


async def prompt(conn: Any, session_id: str, text: str) -> str:
    """Send ``text`` as one prompt turn; the turn's stop reason."""
    agent: v1.Agent = conn.agent
    answer = await agent.session_prompt(
        v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])
    )
    return answer.stop_reason
