"""The lean client: the floor client's loop on ``os.read`` / ``os.write`` directly.

``python bench/runtime_lean_client.py N`` spawns runtime_lean_agent.py and
runs the floor client's workload (untyped msgspec, every update checked),
reading and writing the pipes with ``os.read`` / ``os.write`` and waiting in
trio only when they would block.  Prints one JSON line
(runtime_workload.report).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import msgspec
import trio
from runtime_workload import (
    CLIENT_NAME,
    HERE,
    VERSION,
    CpuMeter,
    OrderCheck,
    prompt_text,
    report,
)

AGENT = os.path.join(HERE, "runtime_lean_agent.py")


class Peer:
    def __init__(self, process: trio.Process, check: OrderCheck) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.tx = process.stdin.fileno()  # non-blocking: trio set them so
        self.rx = process.stdout.fileno()
        self.buf = bytearray()
        self.check = check
        self.next_id = 0

    async def call(self, method: str, params: Any) -> Any:
        ident = self.next_id
        self.next_id += 1
        line = msgspec.json.encode(
            {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        )
        view = memoryview(line + b"\n")
        while view:
            try:
                view = view[os.write(self.tx, view) :]
            except BlockingIOError:
                await trio.lowlevel.wait_writable(self.tx)
        buf = self.buf
        decode = msgspec.json.decode
        check = self.check
        while True:
            while (i := buf.find(b"\n")) >= 0:
                msg = decode(bytes(buf[:i]))
                del buf[: i + 1]
                if "method" in msg:
                    if msg["method"] == "session/update":
                        update = msg["params"]["update"]
                        check.update(update.get("messageId"), update["content"]["text"])
                elif msg.get("id") == ident:
                    return msg["result"]
            try:
                data = os.read(self.rx, 65536)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(self.rx)
                continue
            if not data:
                raise EOFError("agent closed its stdout")
            buf += data


async def main(n: int) -> None:
    check = OrderCheck()
    t0 = time.perf_counter()
    process = await trio.lowlevel.open_process(
        [sys.executable, AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        peer = Peer(process, check)
        init = await peer.call(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True},
                    "terminal": True,
                },
                "clientInfo": {"name": CLIENT_NAME, "version": VERSION},
            },
        )
        assert init["protocolVersion"] == 1
        session = await peer.call("session/new", {"cwd": os.getcwd(), "mcpServers": []})
        sid = session["sessionId"]
        cpu = CpuMeter(process.pid)
        cpu.start()
        t1 = time.perf_counter()
        for i in range(n):
            check.turn(i)
            result = await peer.call(
                "session/prompt",
                {
                    "sessionId": sid,
                    "prompt": [{"type": "text", "text": prompt_text(i)}],
                },
            )
            assert result["stopReason"] == "end_turn"
        check.end_turn()
        t2 = time.perf_counter()
        cpu.stop()
    finally:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.aclose()  # EOF: the agent's loop ends
        await process.wait()
        await process.stdout.aclose()
    report("lean", n, check, time.perf_counter() - t0, t2 - t1, cpu)


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 10)
