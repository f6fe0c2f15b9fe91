"""ACP over HTTP: what the remote transport costs, and ours against the official SDK's.

    python bench/http_bench.py [--quick]

All in one run, so that the ratios share the machine's state:

- **latency**: the median round trip of a one-update prompt (request, one
  ``session/update``, answer), sequential, over stdio (``acp_trio.spawn_agent``),
  our Streamable HTTP (HTTP/2, hypercorn), our WebSocket, and the official
  Python SDK 0.12.1's Streamable HTTP (its client against its ASGI app); the
  latency each adds beside stdio, per round trip and per message crossing
  (half a round trip);
- **messages/s per worker**: 4 concurrent connections, each sending prompts
  that stream 50 updates, through one hypercorn worker (asyncio, as the
  official SDK needs); ours (HTTP/2, HTTP/1.1, WebSocket) against the
  official SDK's Streamable HTTP (the goal: 3x), in rounds that take every
  transport in turn (the median of each), so that a change of the machine's
  load hits all of them alike;
- **memory per idle connection**: the server's resident memory grown by
  50 connections each holding a session and its streams, divided by 50.

Timings are reported, never asserted; quote the ratios, not the absolute
times, of a loaded machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import acp_http
import acp_trio
import trio
from acp_schema import v1
from http_servers import rss_kib, serving

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [os.path.join(ROOT, "generated"), os.path.join(ROOT, "runtime"), HERE]
    ),
}
UPDATES = 50  # per prompt, throughput workload
CLIENTS = 4
ROUNDS = 3  # throughput rounds, each over every transport in turn


class OurClient:
    def __init__(self, conn: Any) -> None:
        self.updates = 0

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.updates += 1


class TheirClient:
    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1


def prompt(count: int) -> v1.PromptRequest:
    return v1.PromptRequest(
        session_id="bench", prompt=[v1.TextContent(text=str(count))]
    )


# -- ours (trio) -------------------------------------------------------------

Connect = Callable[[], Any]


async def _our_session(conn: Any) -> None:
    await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    await conn.agent.session_new(v1.NewSessionRequest(cwd="/", mcp_servers=[]))


async def our_latency(connect: Connect, rounds: int) -> list[float]:
    async with connect() as conn:
        await _our_session(conn)
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            await conn.agent.session_prompt(prompt(1))
            times.append(time.perf_counter() - start)
        return times


async def our_throughput(connect: Connect, prompts: int) -> float:
    async def one() -> None:
        async with connect() as conn:
            await _our_session(conn)
            for _ in range(prompts):
                await conn.agent.session_prompt(prompt(UPDATES))
            assert conn.client.updates == prompts * UPDATES

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(CLIENTS):
            nursery.start_soon(one)
    return CLIENTS * prompts * (UPDATES + 2) / (time.perf_counter() - start)


async def our_idle(connect: Connect, pid: int, count: int) -> float:
    async with trio.open_nursery() as nursery:
        ready = trio.Semaphore(0)
        done = trio.Event()

        async def hold() -> None:
            async with connect() as conn:
                await _our_session(conn)
                ready.release()
                await done.wait()

        nursery.start_soon(hold)
        await ready.acquire()
        await trio.sleep(0.5)
        before = rss_kib(pid)
        for _ in range(count):
            nursery.start_soon(hold)
        for _ in range(count):
            await ready.acquire()
        await trio.sleep(0.5)
        after = rss_kib(pid)
        done.set()
    return (after - before) / count


# -- theirs (asyncio) ----------------------------------------------------------


async def _their_session(url: str) -> tuple[Any, TheirClient]:
    import acp
    from acp.http import create_http_stream

    client = TheirClient()
    conn = acp.connect_to_agent(client, create_http_stream(url))
    await conn.initialize(protocol_version=1)
    await conn.new_session(cwd="/", mcp_servers=[])
    return conn, client


async def _their_prompt(conn: Any, count: int) -> None:
    import acp

    await conn.prompt(session_id="bench", prompt=[acp.text_block(str(count))])


async def their_latency(url: str, rounds: int) -> list[float]:
    conn, _ = await _their_session(url)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        await _their_prompt(conn, 1)
        times.append(time.perf_counter() - start)
    await conn.close()
    return times


async def their_throughput(url: str, prompts: int) -> float:
    async def one() -> None:
        conn, client = await _their_session(url)
        for _ in range(prompts):
            await _their_prompt(conn, UPDATES)
        # its updates travel on another stream than the answers: count them all in
        deadline = time.perf_counter() + 10
        while client.updates < prompts * UPDATES and time.perf_counter() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.001)
        await conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(CLIENTS)))
    return CLIENTS * prompts * (UPDATES + 2) / (time.perf_counter() - start)


async def their_idle(url: str, pid: int, count: int) -> float:
    first, _ = await _their_session(url)
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    held = [await _their_session(url) for _ in range(count)]
    await asyncio.sleep(0.5)
    after = rss_kib(pid)
    for conn, _ in [*held, (first, None)]:
        await conn.close()
    return (after - before) / count


# -- the run -------------------------------------------------------------------


def run(args: argparse.Namespace) -> None:
    rounds, prompts, idle = (100, 10, 20) if args.quick else (400, 40, 50)
    stdio_agent = [sys.executable, os.path.join(HERE, "http_bench_apps.py")]

    def stdio() -> Any:
        return acp_trio.spawn_agent(stdio_agent, OurClient, env=ENV)

    kind, cwd = "hypercorn-asyncio", Path(HERE)
    with (
        serving(kind, "http_bench_apps:ours", cwd=cwd, env=ENV) as ours,
        serving(kind, "http_bench_apps:theirs", cwd=cwd, env=ENV) as theirs,
    ):
        ws = ours.replace("http", "ws", 1)

        def http() -> Any:
            return acp_http.connect_http(ours, OurClient, http2=True)

        def http1() -> Any:
            return acp_http.connect_http(ours, OurClient, http2=False)

        def websocket() -> Any:
            return acp_http.connect_websocket(ws, OurClient)

        latency = {
            "stdio": trio.run(our_latency, stdio, rounds),
            "ours HTTP/2": trio.run(our_latency, http, rounds),
            "ours HTTP/1.1": trio.run(our_latency, http1, rounds),
            "ours WebSocket": trio.run(our_latency, websocket, rounds),
            "official SDK HTTP": asyncio.run(their_latency(theirs, rounds)),
        }
        measures: dict[str, Callable[[], float]] = {
            "ours HTTP/2": lambda: trio.run(our_throughput, http, prompts),
            "ours HTTP/1.1": lambda: trio.run(our_throughput, http1, prompts),
            "ours WebSocket": lambda: trio.run(our_throughput, websocket, prompts),
            "official SDK HTTP": lambda: asyncio.run(their_throughput(theirs, prompts)),
        }
        rates: dict[str, list[float]] = {name: [] for name in measures}
        for _ in range(ROUNDS):
            for name, measure in measures.items():
                rates[name].append(measure())
        throughput = {name: statistics.median(r) for name, r in rates.items()}
        memory = {
            "ours HTTP/2": trio.run(our_idle, http, ours.pid, idle),
            "official SDK HTTP": asyncio.run(their_idle(theirs, theirs.pid, idle)),
        }

    base = statistics.median(latency["stdio"])
    print(
        f"latency: a one-update prompt, {rounds} sequential round trips (median, p90)"
    )
    for name, times in latency.items():
        median = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        added = (
            ""
            if name == "stdio"
            else (
                f"  +{(median - base) * 1e3:.2f} ms per round trip, "
                f"+{(median - base) * 5e2:.2f} ms per message ({median / base:.1f}x stdio)"
            )
        )
        print(f"  {name:18} {median * 1e3:7.2f} ms  {p90 * 1e3:7.2f} ms{added}")
    theirs_rate = throughput["official SDK HTTP"]
    print(
        f"messages/s, one hypercorn worker, {CLIENTS} connections x {prompts} prompts"
        f" x {UPDATES} updates (median of {ROUNDS} interleaved rounds)"
    )
    for name, rate in throughput.items():
        print(
            f"  {name:18} {rate:9.0f} msg/s  ({rate / theirs_rate:.2f}x the official SDK's HTTP; goal 3x)"
        )
    print(f"memory per idle connection (a session and its streams), {idle} connections")
    for name, kib in memory.items():
        print(f"  {name:18} {kib:7.1f} KiB")
    print(
        f"  ours / official SDK: {memory['ours HTTP/2'] / max(memory['official SDK HTTP'], 0.1):.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and prompts")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
