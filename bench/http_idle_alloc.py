"""Python allocations per idle connection of acp_http's server (tracemalloc).

    python bench/http_idle_alloc.py [--connections N] [--transport http1|http2|ws] [--top K]

The server is hypercorn's asyncio worker serving ``http_bench_apps:ours``
(:class:`BenchAgent` in process) in this process, under ``tracemalloc``; a
client process (this checkout's ``acp_http`` on trio, as
``bench/http_bench.py``'s ``our_idle``) opens one connection, then N more,
each with a session and its SSE streams (or its WebSocket).  Reported: the
snapshot difference across the N, divided by N, in total and by file (and
by line with ``--top``).  Unlike ``http_bench.py``'s resident memory, this
counts Python's allocations alone, the same way on a loaded machine: what
a change to the server's objects saves, byte for byte.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import socket
import subprocess
import sys
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _folder in ("generated", "runtime", "bench"):
    if os.path.join(ROOT, _folder) not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, _folder))

#: The client process: ``ROOT URL COUNT TRANSPORT``; says ``one`` once its
#: first connection is ready, ``all`` once every other is, then waits for a
#: line on stdin each time.
CLIENT = r"""
import os, sys
ROOT = sys.argv[1]
for folder in ("generated", "runtime", "bench"):
    sys.path.insert(0, os.path.join(ROOT, folder))
import acp_http, trio
from http_bench import OurClient, _our_session
url, count, transport = sys.argv[2], int(sys.argv[3]), sys.argv[4]

def connect():
    if transport == "ws":
        return acp_http.connect_websocket(url.replace("http", "ws", 1), OurClient)
    return acp_http.connect_http(url, OurClient, http2=transport == "http2")

async def main():
    async with trio.open_nursery() as nursery:
        ready = trio.Semaphore(0)
        done = trio.Event()

        async def hold():
            async with connect() as conn:
                await _our_session(conn)
                ready.release()
                await done.wait()

        nursery.start_soon(hold)
        await ready.acquire()
        print("one", flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)
        for _ in range(count):
            nursery.start_soon(hold)
            await ready.acquire()
        print("all", flush=True)
        await trio.to_thread.run_sync(sys.stdin.readline)
        done.set()

trio.run(main)
"""


async def measure(count: int, transport: str, top: int) -> None:
    import http_bench_apps
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(256)
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.loglevel = "WARNING"
    shutdown = asyncio.Event()
    server = asyncio.ensure_future(
        serve(http_bench_apps.ours, config, shutdown_trigger=shutdown.wait)  # type: ignore[arg-type]
    )
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/acp"
    client = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLIENT,
        ROOT,
        url,
        str(count),
        transport,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert client.stdin is not None and client.stdout is not None
    assert (await client.stdout.readline()).strip() == b"one"
    await asyncio.sleep(0.5)
    gc.collect()
    before = tracemalloc.take_snapshot()
    client.stdin.write(b"go\n")
    assert (await client.stdout.readline()).strip() == b"all"
    await asyncio.sleep(0.5)
    gc.collect()
    after = tracemalloc.take_snapshot()
    by_file = after.compare_to(before, "filename")
    total = sum(stat.size_diff for stat in by_file)
    print(
        f"{transport}: {total / count / 1024:.1f} KiB of Python allocations per idle"
        f" connection ({count} connections; load average"
        f" {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    for stat in by_file[:12]:
        where = stat.traceback[0].filename
        print(
            f"  {stat.size_diff / count:8.0f} B  {stat.count_diff / count:5.1f} blocks  {where}"
        )
    for stat in after.compare_to(before, "lineno")[:top]:
        frame = stat.traceback[0]
        print(f"  {stat.size_diff / count:8.0f} B  {frame.filename}:{frame.lineno}")
    client.stdin.write(b"quit\n")
    await client.wait()
    shutdown.set()
    await server


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument(
        "--transport", choices=["http1", "http2", "ws"], default="http1"
    )
    parser.add_argument("--top", type=int, default=0, help="lines to list")
    args = parser.parse_args()
    tracemalloc.start()
    asyncio.run(measure(args.connections, args.transport, args.top))


if __name__ == "__main__":
    main()
