"""What one idle connection's engine holds: nothing for lines or events it is done with.

A server keeps thousands of idle connections (issue 29, item 8): once the
lines of a chunk and the events they made are handled, the engine keeps no
storage for them (a ``collections.deque`` holds a block of 64 slots even
when empty).
"""

from __future__ import annotations

import collections
import sys

import msgspec
from acp_core import NEED_DATA, AgentRules, Engine, VersionChosen

INIT = msgspec.json.encode(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": 1},
    }
)
PROMPTS = b"".join(
    msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "session/new",
            "params": {"cwd": "/", "mcpServers": []},
        }
    )
    + b"\n"
    for n in range(1, 40)
)


def drain(engine: Engine) -> list[object]:
    events: list[object] = []
    while (event := engine.next_event()) is not NEED_DATA:
        events.append(event)
    return events


def test_an_idle_engine_holds_no_storage_for_lines_and_events_it_handled() -> None:
    engine = Engine(AgentRules([1]))
    engine.receive_data(INIT + b"\n" + PROMPTS)
    events = drain(engine)
    # initialize waits for its handler object, the rest behind it
    assert [type(e) for e in events] == [VersionChosen]
    engine.take_outbox()
    held = [
        (name, value)
        for name, value in vars(engine).items()
        if isinstance(value, collections.deque)
        or (isinstance(value, list) and sys.getsizeof(value) > sys.getsizeof([]))
    ]
    assert held == []
