"""How every adapter's ``spawn_agent`` starts and ends the agent
(acp_host._subprocess), driven with plain calls: no event loop.

The shutdown plan is fed what an adapter would see (has the agent exited?
is anything left in its group?) and says the next step.
"""

from __future__ import annotations

import signal
import subprocess
import sys

from acp_host import (
    AwaitExit,
    CloseInput,
    SendSignal,
    ShutdownPlan,
    StderrTail,
    group_options,
)

GRACE = 2.0
PGID = 4242


def steps(plan: ShutdownPlan, exited: list[bool]) -> list[object]:
    """Every step, the agent's state before each given by ``exited``."""
    out: list[object] = []
    seen = iter(exited)
    while (step := plan.next(next(seen, True))) is not None:
        out.append(step)
    return out


def test_the_shutdown_plan_escalates_close_then_sigterm_then_sigkill_to_the_group() -> (
    None
):
    plan = ShutdownPlan(PGID, GRACE, group_alive=lambda pgid: True)
    assert steps(plan, [False, False, False, False, False, False, False]) == [
        CloseInput(),
        AwaitExit(GRACE),
        SendSignal(signal.SIGTERM, group=True),
        AwaitExit(GRACE, group=True),
        SendSignal(signal.SIGKILL, group=True),
        AwaitExit(GRACE, group=True),  # a SIGKILL is delivered: its members die
        AwaitExit(None),  # always reaped
    ]


def test_the_shutdown_plan_only_reaps_an_agent_that_exited_leaving_nothing_behind() -> (
    None
):
    plan = ShutdownPlan(PGID, GRACE, group_alive=lambda pgid: False)
    assert steps(plan, [False, False, True]) == [CloseInput(), AwaitExit(GRACE)]


def test_the_shutdown_plan_signals_the_group_when_a_member_outlives_the_agent() -> None:
    alive = {PGID: True}
    plan = ShutdownPlan(PGID, GRACE, group_alive=lambda pgid: alive[pgid])
    assert plan.next(exited=False) == CloseInput()
    assert plan.next(exited=False) == AwaitExit(GRACE)
    # the agent exited on EOF, a grandchild it started did not
    assert plan.next(exited=True) == SendSignal(signal.SIGTERM, group=True)
    assert plan.next(exited=True) == AwaitExit(GRACE, group=True)
    alive[PGID] = False  # the grandchild honoured SIGTERM
    assert plan.next(exited=True) is None  # no SIGKILL, nothing to reap


def test_an_agent_that_exits_on_sigterm_is_reaped_without_sigkill() -> None:
    alive = {PGID: True}
    plan = ShutdownPlan(PGID, GRACE, group_alive=lambda pgid: alive[pgid])
    assert [plan.next(exited=False) for _ in range(4)] == [
        CloseInput(),
        AwaitExit(GRACE),
        SendSignal(signal.SIGTERM, group=True),
        AwaitExit(GRACE, group=True),
    ]
    alive[PGID] = False
    assert plan.next(exited=True) is None


def test_without_a_group_the_shutdown_plan_terminates_then_kills_the_agent_alone() -> (
    None
):
    plan = ShutdownPlan(None, GRACE)
    got = steps(plan, [False] * 6)
    assert got == [
        CloseInput(),
        AwaitExit(GRACE),
        SendSignal(signal.SIGTERM, group=False),
        AwaitExit(GRACE, group=False),
        SendSignal(signal.SIGKILL, group=False),
        AwaitExit(None),
    ]
    assert [s.kill for s in got if isinstance(s, SendSignal)] == [False, True]


def test_the_agent_leads_a_process_group_of_its_own() -> None:
    options = group_options()
    if sys.version_info >= (3, 11):
        assert options == {"process_group": 0}
    assert group_options(start_new_session=True) == {"start_new_session": True}
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpgid(0) == os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
        **options,
    )
    assert child.stdout == "True\n"


def test_a_captured_stderr_keeps_its_last_bytes() -> None:
    into = bytearray()
    tail = StderrTail(into, keep=4)
    for chunk in (b"abc", b"defgh", b"ij"):
        tail.feed(chunk)
        assert len(into) <= 2 * 4  # trimmed as it grows, not only at the end
    tail.close()
    assert into == b"ghij"


class Stubborn:
    """A process that ignores SIGTERM and dies on SIGKILL (what an adapter's
    process object would report)."""

    def __init__(self) -> None:
        self.returncode: int | None = None
        self.calls: list[str] = []

    def terminate(self) -> None:
        self.calls.append("terminate")

    def kill(self) -> None:
        self.calls.append("kill")
        self.returncode = -9


def test_carrying_out_the_plan_leaves_only_the_waits_to_the_adapter() -> None:
    process = Stubborn()
    waits: list[AwaitExit] = []

    async def await_exit(step: AwaitExit) -> None:
        waits.append(step)

    async def close_input() -> None:
        process.calls.append("close stdin")

    plan = ShutdownPlan(None, GRACE)
    coro = plan.carry_out(process, await_exit=await_exit, close_input=close_input)
    try:
        coro.send(None)  # nothing suspends: no event loop needed
    except StopIteration:
        pass
    assert process.calls == ["close stdin", "terminate", "kill"]
    assert waits == [AwaitExit(GRACE), AwaitExit(GRACE, group=False)]  # reaped: no 3rd
