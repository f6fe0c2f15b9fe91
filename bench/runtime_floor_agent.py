"""The floor agent: a bare trio loop, untyped msgspec, no runtime.

``python bench/runtime_floor_agent.py`` reads lines on stdin, decodes each
to builtins (``msgspec.json.decode``), answers by ``method`` with dicts
encoded by ``msgspec.json.encode``, and writes the replies to one incoming
chunk with one ``send_all``.  Same messages as the other agents
(runtime_workload.py); no validation, no routing table, no concurrency.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
import trio
from runtime_workload import AGENT_NAME, CHUNKS, VERSION, chunk_text, message_id


async def main() -> None:
    rx = trio.lowlevel.FdStream(os.dup(0))
    tx = trio.lowlevel.FdStream(os.dup(1))
    decode = msgspec.json.decode
    encode = msgspec.json.encode
    buf = bytearray()
    turns = 0
    while data := await rx.receive_some(65536):
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
            await tx.send_all(b"\n".join(out))


if __name__ == "__main__":
    trio.run(main)
