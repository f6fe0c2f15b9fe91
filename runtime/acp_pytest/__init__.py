"""acp_pytest: testing ACP agents and clients with pytest.

The plugin (:mod:`acp_pytest.plugin`, loaded by its ``pytest11`` entry
point once ``acp-msgspec[testing]`` is installed) gives the fixtures
``acp_in_memory`` (an agent and a client joined in this process, on trio and
on asyncio), ``acp_spawn`` (an agent command started, its process group
ended when the test ends, its stderr shown when it fails) and
``acp_backend``.  This package gives what tests write with them: the fakes
and the assertions::

    from acp_pytest import FakeClient, assert_transcript, prompt, start_session

    async def test_the_agent_echoes(acp_in_memory):
        client = FakeClient(permissions=["allow"])
        conn = await acp_in_memory.connect(EchoAgent, client)
        session_id = await start_session(conn)
        assert await prompt(conn, session_id, "hi") == "end_turn"
        assert_transcript(client.transcript(), "agent: hi")

- :class:`FakeClient`: permission answers, files, terminals, elicitation
  answers scripted; every call recorded, each session's transcript kept;
- :class:`FakeAgent`: a list of updates and requests sent on each prompt,
  then a stop reason; every call recorded, with the client's answers;
- :func:`assert_transcript`, :func:`assert_calls`: a readable diff on failure
  (:func:`render_transcript` is the text compared);
- :func:`start_session`, :func:`prompt`: the usual first calls of a v1 client.

The names are imported on first use: pytest imports this package with its
plugin in every run, and a project that does not use it should not pay for
the protocol's modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._assertions import (
        MAX_DIFF_LINES,
        assert_calls,
        assert_transcript,
        render_transcript,
    )
    from ._fake_agent import FakeAgent, Step
    from ._fake_client import CANCELLED, FakeClient, FakeTerminal, OpenedTerminal
    from ._fixtures import STDERR_SHOWN, InMemory, Spawn, SpawnedAgent
    from ._runner import BACKENDS, DEFAULT_TIMEOUT, Backend
    from ._schema_calls import MAX_CALLS, MAX_SHOWN, RecordedCall
    from ._session import FULL_CLIENT, prompt, start_session

#: Where each public name is defined (imported by ``__getattr__`` on first use).
_WHERE: dict[str, str] = {
    "BACKENDS": "_runner",
    "Backend": "_runner",
    "CANCELLED": "_fake_client",
    "DEFAULT_TIMEOUT": "_runner",
    "FULL_CLIENT": "_session",
    "FakeAgent": "_fake_agent",
    "FakeClient": "_fake_client",
    "FakeTerminal": "_fake_client",
    "InMemory": "_fixtures",
    "MAX_CALLS": "_schema_calls",
    "MAX_DIFF_LINES": "_assertions",
    "MAX_SHOWN": "_schema_calls",
    "OpenedTerminal": "_fake_client",
    "RecordedCall": "_schema_calls",
    "STDERR_SHOWN": "_fixtures",
    "Spawn": "_fixtures",
    "SpawnedAgent": "_fixtures",
    "Step": "_fake_agent",
    "assert_calls": "_assertions",
    "assert_transcript": "_assertions",
    "prompt": "_session",
    "render_transcript": "_assertions",
    "start_session": "_session",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BACKENDS",
    "CANCELLED",
    "DEFAULT_TIMEOUT",
    "FULL_CLIENT",
    "MAX_CALLS",
    "MAX_DIFF_LINES",
    "MAX_SHOWN",
    "STDERR_SHOWN",
    "Backend",
    "FakeAgent",
    "FakeClient",
    "FakeTerminal",
    "InMemory",
    "OpenedTerminal",
    "RecordedCall",
    "Spawn",
    "SpawnedAgent",
    "Step",
    "assert_calls",
    "assert_transcript",
    "prompt",
    "render_transcript",
    "start_session",
]
