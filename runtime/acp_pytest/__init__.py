"""acp_pytest: testing ACP agents and clients with pytest.

The plugin (:mod:`acp_pytest.plugin`, loaded by its ``pytest11`` entry
point once ``acp-msgspec[testing]`` is installed) gives the fixtures
``acp_in_memory`` (an agent and a client joined in this process, on trio and
on asyncio), ``acp_spawn`` (an agent command started, its process group
ended when the test ends, its stderr shown when it fails) and
``acp_backend``.  This package gives what tests write with them: the fakes
and the assertions::

    from acp_pytest import FakeClient, assert_transcript

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
"""

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
