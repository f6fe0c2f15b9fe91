"""The proxy's backlog: forwarding never waits for a check (the checks run
once the wire is quiet), and a backlog over its bound holds forwarding back
rather than growing or dropping lines.  Trio's mock clock: no real time."""

from __future__ import annotations

import io

import msgspec
import trio
import trio.testing
from _inspect_wire import line
from acp_inspect._observer import Observer
from acp_inspect._proxy import Backlog
from acp_inspect._trace import TraceWriter

NEW = line(id=1, method="session/new", params={"cwd": "rel", "mcpServers": []})
NEW_2 = line(id=2, method="session/new", params={"cwd": "/abs", "mcpServers": []})


async def test_checks_wait_for_a_quiet_wire_and_keep_the_crossing_order(
    mock_clock: trio.testing.MockClock,
) -> None:
    observer = Observer()
    backlog = Backlog(observer)
    backlog.quiet = 1.0
    async with trio.open_nursery() as nursery:
        nursery.start_soon(backlog.run)
        backlog.push("to_agent", NEW + b"\n", 0.0)
        assert observer.inspector.index == 0  # pushing parses nothing
        await trio.testing.wait_all_tasks_blocked()
        mock_clock.jump(0.6)
        backlog.push("to_agent", NEW_2 + b"\n", 0.6)  # traffic: not quiet yet
        await trio.testing.wait_all_tasks_blocked()
        mock_clock.jump(0.6)
        await trio.testing.wait_all_tasks_blocked()
        assert observer.inspector.index == 0
        mock_clock.jump(1.0)  # a quiet second: both checked, in order
        await trio.testing.wait_all_tasks_blocked()
        assert observer.inspector.index == 2
        assert [f.rule for f in observer.inspector.findings] == [
            "before-initialize",
            "relative-path",
            "before-initialize",
        ]
        assert backlog.bytes == 0
        nursery.cancel_scope.cancel()


async def test_backlog_over_its_bound_holds_forwarding_until_checked(
    mock_clock: trio.testing.MockClock,
) -> None:
    observer = Observer()
    backlog = Backlog(observer, max_bytes=len(NEW))
    backlog.quiet = 1.0
    backlog.push("to_agent", NEW + b"\n" + NEW_2 + b"\n", 0.0)
    assert backlog.bytes > backlog.max_bytes
    room = trio.Event()

    async def forwarder() -> None:
        await backlog.room()
        room.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(forwarder)
        await trio.testing.wait_all_tasks_blocked()
        assert not room.is_set()  # forwarding waits ...
        nursery.start_soon(backlog.run)
        await trio.testing.wait_all_tasks_blocked()
        # ... and the checks do not wait for quiet past the bound
        assert room.is_set() and observer.inspector.index == 2
        nursery.cancel_scope.cancel()


def test_drain_checks_whatever_is_left_at_the_end() -> None:
    observer = Observer()
    backlog = Backlog(observer)
    backlog.push("to_agent", NEW + b"\n" + NEW_2, 0.0)  # the last without newline
    backlog.call(lambda: observer.eof("to_agent"))
    backlog.drain()
    assert observer.inspector.index == 2 and backlog.bytes == 0


def test_a_line_over_the_limit_is_said_in_the_trace_not_checked() -> None:
    out = io.BytesIO()
    observer = Observer(trace=TraceWriter(out), max_line=len(NEW_2))
    backlog = Backlog(observer)
    backlog.push("to_agent", NEW_2 + b"xx\n" + NEW + b"\n", 0.0)
    backlog.drain()
    records = [msgspec.json.decode(r) for r in out.getvalue().splitlines()]
    events = [r["event"] for r in records if "event" in r]
    assert events == [
        f"to_agent: discarded a {len(NEW_2) + 2}-byte message (limit {len(NEW_2)},"
        " id=2): forwarded, not traced or checked"
    ]
    assert [r["n"] for r in records if "dir" in r] == [1]  # NEW only
    assert observer.inspector.index == 1


async def test_room_wakes_both_forwarders_waiting_at_once(
    mock_clock: trio.testing.MockClock,
) -> None:
    observer = Observer()
    backlog = Backlog(observer, max_bytes=len(NEW))
    backlog.quiet = 1.0
    backlog.push("to_agent", NEW + b"\n" + NEW_2 + b"\n", 0.0)
    woken: list[str] = []

    async def forwarder(name: str) -> None:
        await backlog.room()
        woken.append(name)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(forwarder, "to_agent")
        nursery.start_soon(forwarder, "from_agent")
        await trio.testing.wait_all_tasks_blocked()
        assert woken == []
        nursery.start_soon(backlog.run)
        await trio.testing.wait_all_tasks_blocked()
        assert sorted(woken) == ["from_agent", "to_agent"]  # no lost wake-up
        nursery.cancel_scope.cancel()
