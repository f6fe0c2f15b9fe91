"""The plugin itself, run by pytester on test files written for it: the same test on
trio and asyncio, the backends narrowed, a hanging test bounded, a spawned agent's
group ended and its stderr shown, and a deliberately broken agent and client
failing the assertions with a readable diff."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import acp_asyncio
import acp_core
import acp_pytest
import acp_trio
import pytest
from acp_host import group_alive
from acp_schema import v1, v2

# What the inner runs import, imported here first: pytester's in-process runs
# drop the modules a run imported when it ends, and a second copy of a protocol
# module (its classes not the engine's) would make the next run a different one.
PRELOADED = (acp_asyncio, acp_core, acp_trio, v1, v2, acp_pytest.FakeAgent)
for _name in ("FakeClient", "InMemory", "assert_transcript", "start_session"):
    getattr(acp_pytest, _name)

#: The plugin, as a user's tests load it (pytester's runs read no conftest of ours).
PLUGIN = ("-p", "acp_pytest.plugin", "-p", "no:cacheprovider")


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_inner=source)
    return pytester.runpytest(*PLUGIN, *args)


FAKES = """
import acp_core
from acp_pytest import FakeAgent, FakeClient, prompt, start_session

async def test_a_turn(acp_in_memory, acp_backend):
    assert acp_in_memory.backend == acp_backend.name
    if acp_backend.name == "trio":
        import trio
        trio.lowlevel.current_trio_token()  # raises outside trio
    else:
        import asyncio
        asyncio.get_running_loop()  # raises outside asyncio
    client = FakeClient()
    agent = FakeAgent([acp_core.agent_text("hi", message_id="m1")])
    conn = await acp_in_memory.connect(agent, client)
    assert await prompt(conn, await start_session(conn), "go") == "end_turn"
    assert client.transcript().messages[0].text == "hi"
"""


def test_the_same_test_passes_on_trio_and_on_asyncio(pytester: pytest.Pytester) -> None:
    result = run(pytester, FAKES, "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*test_a_turn[[]trio[]] PASSED*", "*test_a_turn[[]asyncio[]] PASSED*"]
    )


def test_the_acp_backends_marker_narrows_the_loops(pytester: pytest.Pytester) -> None:
    marked = "import pytest\npytestmark = pytest.mark.acp_backends('asyncio')\n"
    result = run(pytester, marked + FAKES, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_a_turn[[]asyncio[]] PASSED*"])


def test_the_acp_backends_ini_option_sets_the_default_loops(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nacp_backends = trio\n")
    result = run(pytester, FAKES, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_a_turn[[]trio[]] PASSED*"])


def test_an_unknown_backend_is_a_usage_error(pytester: pytest.Pytester) -> None:
    marked = "import pytest\npytestmark = pytest.mark.acp_backends('curio')\n"
    result = run(pytester, marked + FAKES)
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["*'curio' is not an acp backend (one of: trio, asyncio)*"]
    )


HANGS = """
from acp_pytest import FakeAgent, FakeClient, prompt, start_session

async def forever(conn):
    import asyncio
    try:
        import trio
        await trio.sleep_forever()
    except RuntimeError:  # not in trio
        await asyncio.Event().wait()

async def test_hangs(acp_in_memory):
    conn = await acp_in_memory.connect(FakeAgent([forever]), FakeClient())
    await prompt(conn, await start_session(conn), "go")
"""


def test_a_test_that_hangs_fails_at_acp_timeout(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nacp_timeout = 0.5\n")
    result = run(pytester, HANGS)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*the test did not finish within acp_timeout=0.5 s (on trio)*"]
    )
    result.stdout.fnmatch_lines(
        ["*the test did not finish within acp_timeout=0.5 s (on asyncio)*"]
    )


SPAWNS = """
from acp_pytest import FakeClient, prompt, start_session

# the agent's shell leaves a sleeper in its process group, and writes to stderr
AGENT = ["sh", "-c", "sleep 600 & echo agent-stderr-line >&2; exec PYTHON -m acp_echo"]

async def test_spawned(acp_spawn):
    conn = await acp_spawn.start(AGENT, FakeClient())
    with open("pgids", "a") as out:
        out.write(f"{acp_spawn.agents[0].pid}\\n")
    assert await prompt(conn, await start_session(conn), "hi") == "end_turn"
    assert VERDICT
""".replace("PYTHON", sys.executable)


def test_a_spawned_agents_process_group_is_ended_when_the_test_ends(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, SPAWNS.replace("VERDICT", "True"))
    result.assert_outcomes(passed=2)
    pgids = [int(line) for line in Path(pytester.path, "pgids").read_text().split()]
    assert len(pgids) == 2
    assert not [pgid for pgid in pgids if group_alive(pgid)]


def test_a_failed_tests_report_shows_the_spawned_agents_stderr(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, SPAWNS.replace("VERDICT", "False"))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*acp_spawn: the agents' stderr*", "$ sh -c sleep 600 &*", "agent-stderr-line"]
    )
    passed = run(pytester, SPAWNS.replace("VERDICT", "True"))
    assert "agent-stderr-line" not in passed.stdout.str()


BROKEN_AGENT = """
import acp_core
from acp_pytest import FakeClient, assert_calls, assert_transcript, prompt, start_session

class BrokenAgent:
    # reports the tool call failed though the user allowed it, and never asks
    def __init__(self, conn):
        self.client = conn.client

    async def initialize(self, params):
        from acp_schema import v1
        return v1.InitializeResponse(protocol_version=1)

    async def session_new(self, params):
        from acp_schema import v1
        return v1.NewSessionResponse(session_id="s1")

    async def session_prompt(self, params):
        from acp_schema import v1
        for update in (
            acp_core.agent_text("Echo: hi", message_id="m1"),
            acp_core.tool_call("c1", "Echo", kind="other"),
            acp_core.tool_call_update("c1", status="failed"),
        ):
            await self.client.session_update(acp_core.notification("s1", update))
        return v1.PromptResponse(stop_reason="end_turn")

async def test_the_transcript(acp_in_memory):
    client = FakeClient(permissions=["allow_once"])
    conn = await acp_in_memory.connect(BrokenAgent, client)
    await prompt(conn, await start_session(conn), "hi")
    assert_transcript(client.transcript(), '''
        agent: Echo: hi
        tool c1 completed: Echo
    ''')

async def test_the_calls(acp_in_memory):
    client = FakeClient(permissions=["allow_once"])
    conn = await acp_in_memory.connect(BrokenAgent, client)
    await prompt(conn, await start_session(conn), "hi")
    assert_calls(client.calls, ["session/request_permission"], exact=False)
"""


def test_a_broken_agent_fails_the_transcript_assertion_with_a_diff(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, BROKEN_AGENT, "-k", "transcript")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: the transcript differs from the expected one "
            "(- expected, + actual):",
            "E*@@ -1,2 +1,2 @@",
            "E*  agent: Echo: hi",
            "E*-tool c1 completed: Echo",
            "E*+tool c1 failed: Echo",
        ]
    )
    # the test's own assertion, not an exception group around it
    assert "ExceptionGroup" not in result.stdout.str()


def test_a_broken_agent_fails_the_calls_assertion_with_a_diff(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, BROKEN_AGENT, "-k", "calls")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E*AssertionError: the calls lack the expected ones, in this order "
            "(- expected, + actual):",
            "E*-session/request_permission",
            "E*+session/update",
        ]
    )


BROKEN_CLIENT = """
import acp_core
from acp_pytest import FakeAgent, assert_transcript, prompt, start_session

class BrokenClient:
    # drops tool_call_update: its transcript keeps the call pending
    made = []

    def __init__(self, conn):
        self.transcript = acp_core.SessionTranscript()
        self.made.append(self)

    async def session_update(self, params):
        if type(params.update).__name__ != "SessionUpdateToolCallUpdate":
            self.transcript.apply(params)

    async def session_request_permission(self, params):
        from acp_schema import v1
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=params.options[0].option_id)
        )

async def test_the_client(acp_in_memory):
    agent = FakeAgent([
        acp_core.tool_call("c1", "Run the tests", kind="execute"),
        acp_core.tool_call_update("c1", status="completed"),
    ])
    conn = await acp_in_memory.connect(agent, BrokenClient)
    assert await prompt(conn, await start_session(conn), "go") == "end_turn"
    assert_transcript(BrokenClient.made[-1].transcript, "tool c1 completed: Run the tests")
"""


def test_a_broken_client_fails_the_transcript_assertion_with_a_diff(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, BROKEN_CLIENT)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E*-tool c1 completed: Run the tests",
            "E*+tool c1 pending: Run the tests",
        ]
    )


UNANSWERABLE = """
from acp_schema import v1
from acp_pytest import FakeAgent, FakeClient, prompt, start_session

async def test_unanswerable(acp_in_memory):
    ask = v1.RequestPermissionRequest(
        session_id="session-1",
        tool_call=v1.ToolCallUpdate(tool_call_id="c1"),
        options=[v1.PermissionOption(option_id="no", name="No", kind="reject_once")],
    )
    conn = await acp_in_memory.connect(FakeAgent([ask]), FakeClient(permissions=["allow_once"]))
    await prompt(conn, await start_session(conn), "go")
"""


def test_a_script_answer_the_fake_client_could_not_give_fails_the_test(
    pytester: pytest.Pytester,
) -> None:
    result = run(pytester, UNANSWERABLE)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "E*the fake client could not answer as scripted:",
            "*session/request_permission: the script answers 'allow_once', which "
            "names none of the options offered: no (reject_once)",
        ]
    )


def test_outside_an_acp_test_the_fixtures_say_where_to_connect(
    pytester: pytest.Pytester,
) -> None:
    source = """
import pytest
from acp_pytest import FakeAgent, FakeClient

@pytest.fixture
def connected(acp_in_memory):
    import asyncio
    return asyncio.run(acp_in_memory.connect(FakeAgent(), FakeClient()))

async def test_in_a_fixture(connected):
    pass
"""
    result = run(pytester, source)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*the acp fixtures connect inside the test's body*"])


def test_tests_without_the_fixtures_are_left_to_other_plugins(
    pytester: pytest.Pytester,
) -> None:
    source = """
def test_plain():
    pass

async def test_async_alone():
    pass
"""
    result = run(pytester, source, "-p", "no:trio", "-p", "no:anyio")
    # pytest's own verdict on an async test no plugin runs, not ours
    assert result.parseoutcomes().get("passed") == 1
    assert not re.search(r"acp", result.stdout.str().split("short test summary")[-1])


def test_a_test_taking_acp_backend_alone_runs_on_each_loop(
    pytester: pytest.Pytester,
) -> None:
    source = """
import asyncio, sys

async def test_the_loop(acp_backend):
    if acp_backend.name == "asyncio":
        asyncio.get_running_loop()
    else:
        import trio
        trio.lowlevel.current_trio_token()
"""
    result = run(pytester, source, "-p", "no:trio", "-p", "no:anyio")
    result.assert_outcomes(passed=2)
