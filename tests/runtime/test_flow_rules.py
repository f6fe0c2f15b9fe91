"""The limits record reaching every entry point (the flow rules themselves, as
plain objects: tests/core/test_flow_objects.py)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import acp_trio
import msgspec
import trio
import trio.testing
from _acp_helpers import ECHO_AGENT, PYTHON, EchoAgent, RecordingClient

# -- every entry point takes limits= ------------------------------------------------

LIMITS = acp_trio.Limits(max_batch_members=2, max_error_text=32)


async def test_connect_and_serve_take_the_limits_record() -> None:
    a, b = trio.testing.memory_stream_pair()
    async with acp_trio.connect_to_client(a, EchoAgent, limits=LIMITS) as agent_side:
        async with acp_trio.connect_to_agent(
            b, RecordingClient, limits=LIMITS, max_message_size=4096
        ) as client_side:
            assert agent_side.limits == LIMITS
            assert client_side.limits == dataclasses.replace(
                LIMITS, max_message_size=4096
            )
    c, _d = trio.testing.memory_stream_pair()
    async with trio.open_nursery() as nursery:
        served = await nursery.start(
            lambda task_status: acp_trio.serve_agent(
                c, EchoAgent, limits=LIMITS, task_status=task_status
            )
        )
        assert served.limits == LIMITS
        nursery.cancel_scope.cancel()
    with trio.fail_after(20):
        async with acp_trio.spawn_agent(
            [PYTHON, ECHO_AGENT], RecordingClient, limits=LIMITS
        ) as spawned:
            assert spawned.limits == LIMITS


async def test_serve_agent_stdio_applies_its_limits_in_a_real_process() -> None:
    script = (
        "import trio, acp_trio\n"
        "from _acp_helpers import EchoAgent\n"
        "limits = acp_trio.Limits(max_batch_members=2)\n"
        "trio.run(lambda: acp_trio.serve_agent_stdio(EchoAgent, limits=limits))\n"
    )
    with trio.fail_after(20):
        done = await trio.run_process(
            [sys.executable, "-c", script],
            stdin=b"[1,1,1]\n",
            capture_stdout=True,
            stderr=subprocess.DEVNULL,
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(
                    [os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]
                ),
            },
        )
    reply = msgspec.json.decode(done.stdout.splitlines()[0])
    assert reply["error"]["data"] == {"maxBatchMembers": 2}
