"""The lean agent: the floor agent's loop on ``os.read`` / ``os.write`` directly.

``python bench/runtime_lean_agent.py``: the same messages and replies as
runtime_floor_agent.py (untyped msgspec, no validation, no routing), but
the pipes are read and written with ``os.read`` / ``os.write`` on
non-blocking descriptors, waiting in trio (``wait_readable`` /
``wait_writable``) only when they would block: no ``FdStream`` and no
checkpoint before every call.  What the least a trio program spends on
this workload looks like.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import trio
from runtime_workload import AGENT_NAME, CHUNKS, VERSION, chunk_text, message_id


async def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await trio.lowlevel.wait_writable(fd)


async def main() -> None:
    rfd, wfd = os.dup(0), os.dup(1)
    os.set_blocking(rfd, False)
    os.set_blocking(wfd, False)
    decode = msgspec.json.decode
    encode = msgspec.json.encode
    buf = bytearray()
    turns = 0
    while True:
        try:
            data = os.read(rfd, 65536)
        except BlockingIOError:
            await trio.lowlevel.wait_readable(rfd)
            continue
        if not data:
            break
        buf += data
        out: list[bytes] = []
        while (i := buf.find(b"\n")) >= 0:
            msg: dict[str, Any] = decode(bytes(buf[:i]))
            del buf[: i + 1]
            method = msg.get("method")
            if method == "session/prompt":
                sid = msg["params"]["sessionId"]
                mid = message_id(turns)
                turns += 1
                for k in range(CHUNKS):
                    out.append(
                        encode(
                            {
                                "jsonrpc": "2.0",
                                "method": "session/update",
                                "params": {
                                    "sessionId": sid,
                                    "update": {
                                        "sessionUpdate": "agent_message_chunk",
                                        "content": {
                                            "type": "text",
                                            "text": chunk_text(k),
                                        },
                                        "messageId": mid,
                                    },
                                },
                            }
                        )
                    )
                result: Any = {"stopReason": "end_turn"}
            elif method == "initialize":
                result = {
                    "protocolVersion": 1,
                    "agentCapabilities": {
                        "loadSession": False,
                        "promptCapabilities": {"embeddedContext": True},
                    },
                    "agentInfo": {"name": AGENT_NAME, "version": VERSION},
                }
            elif method == "session/new":
                result = {"sessionId": "sess_bench"}
            else:
                continue
            out.append(encode({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
        if out:
            out.append(b"")
            await write_all(wfd, b"\n".join(out))


if __name__ == "__main__":
    trio.run(main)
