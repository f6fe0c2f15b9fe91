"""The wake-up of acp_http's queues (``acp_http._signal.Signal``) on both event loops.

Under asyncio a waiter waits on a loop future of its own (no ``asyncio.Event``
per waiter): cancelling one waiter (a cancel scope, as a closed stream's
reader is cancelled) leaves the others waiting, and the next wake reaches them.
"""

from __future__ import annotations

import anyio
import pytest
from acp_http._signal import Signal


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_cancelled_waiter_leaves_the_others_to_be_woken(backend: str) -> None:
    async def main() -> list[str]:
        signal = Signal()
        woken: list[str] = []

        async def wait(name: str, scope: anyio.CancelScope) -> None:
            with scope:
                await signal.wait()
                woken.append(name)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tasks:
                cancelled, kept = anyio.CancelScope(), anyio.CancelScope()
                tasks.start_soon(wait, "cancelled", cancelled)
                tasks.start_soon(wait, "kept", kept)
                await anyio.wait_all_tasks_blocked()
                cancelled.cancel()
                await anyio.wait_all_tasks_blocked()
                signal.wake()
        return woken

    assert anyio.run(main, backend=backend) == ["kept"]
