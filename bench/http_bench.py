"""ACP over HTTP: what the remote transport costs, and ours against the official SDK's.

    python bench/http_bench.py [--quick]

All in one run, so that the ratios share the machine's state:

- **latency**: the median round trip of a one-update prompt (request, one
  ``session/update``, answer), sequential, over stdio (``acp_trio.spawn_agent``),
  our Streamable HTTP (HTTP/2 and HTTP/1.1, hypercorn), our WebSocket, and the
  official Python SDK 0.12.1's Streamable HTTP (its client against its ASGI
  app) over HTTP/1.1 (what its own client speaks on ``http://``: it asks for
  HTTP/2, which httpx offers by ALPN only) and over HTTP/2 (an httpx client
  with prior knowledge, given through its public ``client=``; its POSTs and
  both SSE streams then share one connection), in rounds that take every transport in turn (the median of all round
  trips of each); the latency each adds beside stdio, per round trip and per
  message crossing (half a round trip), and the CPU time one round trip costs
  the server (its process group) and the client (this process): the CPU
  time is steadier than the latency on a shared machine;
- **messages/s per worker**: 4 concurrent connections, each sending prompts
  that stream 50 updates, through one hypercorn worker (asyncio, as the
  official SDK needs); ours (HTTP/2, HTTP/1.1, WebSocket) against the
  official SDK's Streamable HTTP (the goal: 3x its HTTP/1.1), in rounds that take every
  transport in turn (the median of each), so that a change of the machine's
  load hits all of them alike;
- **memory per idle connection**: the server's resident memory grown by
  100 connections (40 with ``--quick``) each holding a session and its
  streams, divided by their number; ours over HTTP/2, HTTP/1.1 and WebSocket,
  the official SDK's over its Streamable HTTP (HTTP/1.1 and HTTP/2), each in
  a server of its own.  Ours over HTTP/2 is one TCP connection, as the
  SDK's is: its client (``acp_http.http_client``'s transport,
  ``acp_http._h2_transport``) carries the POSTs and both SSE streams on it,
  so its floor is one HTTP/2 connection (below); ours over HTTP/1.1 and the
  SDK's over HTTP/1.1 are two.

The floor of the HTTP versions, with no ACP at all (``http_bench_apps:bare``,
an empty 202): one POST's round trip and its CPU time over HTTP/2 (httpx's
own, and ``acp_http.http_client``'s transport) and HTTP/1.1 (against
hypercorn), and the server's memory per idle keep-alive connection of
each.  What ours over HTTP/2 costs beyond ours over HTTP/1.1 is this
difference, the server's and the client's own.

The load average is printed with the figures: quote it with them.

Timings are reported, never asserted; quote the ratios, not the absolute
times, of a loaded machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# this checkout's packages, in this process as in the servers (ENV)
for _folder in ("generated", "runtime"):
    if os.path.join(ROOT, _folder) not in sys.path:
        sys.path.insert(0, os.path.join(ROOT, _folder))

import acp_http  # noqa: E402
import acp_trio  # noqa: E402
import trio  # noqa: E402
from acp_schema import v1  # noqa: E402
from http_servers import cpu_seconds, rss_kib, serving  # noqa: E402

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        [os.path.join(ROOT, "generated"), os.path.join(ROOT, "runtime"), HERE]
    ),
}
UPDATES = 50  # per prompt, throughput workload
CLIENTS = 4
ROUNDS = 3  # throughput rounds, each over every transport in turn
LATENCY_ROUNDS = 4  # latency rounds, each over every transport in turn


class OurClient:
    def __init__(self, conn: Any) -> None:
        self.updates = 0

    async def session_update(self, params: v1.SessionNotification) -> None:
        self.updates += 1


class TheirClient:
    def __init__(self) -> None:
        self.updates = 0
        #: the httpx client given to the SDK's transport (None: its own)
        self.http: Any = None

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


class Trips:
    """Round trips of one transport, and the CPU time they cost."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.server_cpu = 0.0
        self.client_cpu = 0.0

    def start(self, server: int | None) -> tuple[float, float]:
        return (cpu_seconds(server) if server else 0.0, time.process_time())

    def stop(self, server: int | None, started: tuple[float, float]) -> None:
        self.client_cpu += time.process_time() - started[1]
        if server:
            self.server_cpu += cpu_seconds(server) - started[0]


async def our_latency(
    connect: Connect, rounds: int, server: int | None, trips: Trips
) -> None:
    async with connect() as conn:
        await _our_session(conn)
        await conn.agent.session_prompt(prompt(1))  # warm
        started = trips.start(server)
        for _ in range(rounds):
            start = time.perf_counter()
            await conn.agent.session_prompt(prompt(1))
            trips.times.append(time.perf_counter() - start)
        trips.stop(server, started)


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
        for _ in range(count):  # one after the other, as their_idle does
            nursery.start_soon(hold)
            await ready.acquire()
        await trio.sleep(0.5)
        after = rss_kib(pid)
        done.set()
    return (after - before) / count


# -- theirs (asyncio) ----------------------------------------------------------


def _their_http(http2: bool) -> Any:
    """The official SDK's client over HTTP/1.1 (its default on ``http://``)
    or HTTP/2 (prior knowledge), given through its public ``client=``: one
    connection carries its POSTs and both SSE streams."""
    import httpx

    if not http2:
        return None  # its own client: ``http2=True``, which is HTTP/1.1 on http://
    return httpx.AsyncClient(http1=False, http2=True, timeout=httpx.Timeout(None))


async def _their_session(url: str, http2: bool) -> tuple[Any, TheirClient]:
    import acp
    from acp.http import create_http_stream

    client = TheirClient()
    http = _their_http(http2)
    conn = acp.connect_to_agent(client, create_http_stream(url, client=http))
    await conn.initialize(protocol_version=1)
    await conn.new_session(cwd="/", mcp_servers=[])
    client.http = http  # closed by _their_close (the SDK closes only its own)
    return conn, client


async def _their_close(conn: Any, client: TheirClient) -> None:
    await conn.close()
    if client.http is not None:
        await client.http.aclose()


async def _their_prompt(conn: Any, count: int) -> None:
    import acp

    await conn.prompt(session_id="bench", prompt=[acp.text_block(str(count))])


async def their_latency(
    url: str, http2: bool, rounds: int, server: int, trips: Trips
) -> None:
    conn, client = await _their_session(url, http2)
    await _their_prompt(conn, 1)  # warm
    started = trips.start(server)
    for _ in range(rounds):
        start = time.perf_counter()
        await _their_prompt(conn, 1)
        trips.times.append(time.perf_counter() - start)
    trips.stop(server, started)
    await _their_close(conn, client)


async def their_throughput(url: str, http2: bool, prompts: int) -> float:
    async def one() -> None:
        conn, client = await _their_session(url, http2)
        for _ in range(prompts):
            await _their_prompt(conn, UPDATES)
        # its updates travel on another stream than the answers: count them all in
        deadline = time.perf_counter() + 10
        while client.updates < prompts * UPDATES and time.perf_counter() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.001)
        await _their_close(conn, client)

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(CLIENTS)))
    return CLIENTS * prompts * (UPDATES + 2) / (time.perf_counter() - start)


async def their_idle(url: str, http2: bool, pid: int, count: int) -> float:
    first = await _their_session(url, http2)
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    held = [await _their_session(url, http2) for _ in range(count)]
    await asyncio.sleep(0.5)
    after = rss_kib(pid)
    for conn, client in [*held, first]:
        await _their_close(conn, client)
    return (after - before) / count


# -- the floor: a bare POST ------------------------------------------------------

BARE_BODY = (
    b'{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":'
    b'{"sessionId":"bench","prompt":[{"type":"text","text":"1"}]}}'
)


def bare_client(url: str, version: str) -> Any:
    """An httpx client of the floor: ``h2`` (httpx's HTTP/2), ``h2 ours``
    (``acp_http.http_client``'s, our HTTP/2 transport), ``h1``."""
    import httpx

    if version == "h2 ours":
        return acp_http.http_client(url, http2=True)
    http2 = version == "h2"
    return httpx.AsyncClient(http1=not http2, http2=http2)


async def bare_posts(url: Any, version: str, rounds: int, trips: Trips) -> None:
    async with bare_client(url, version) as client:
        headers = {"content-type": "application/json"}
        await client.post(url, content=BARE_BODY, headers=headers)  # warm
        started = trips.start(url.pid)
        for _ in range(rounds):
            start = time.perf_counter()
            await client.post(url, content=BARE_BODY, headers=headers)
            trips.times.append(time.perf_counter() - start)
        trips.stop(url.pid, started)


async def bare_idle(url: Any, version: str, count: int) -> float:
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(bare_client(url, version))
            for _ in range(count + 1)
        ]
        await clients[0].post(url, content=BARE_BODY)
        await trio.sleep(0.5)
        before = rss_kib(url.pid)
        for client in clients[1:]:
            await client.post(url, content=BARE_BODY)
        await trio.sleep(0.5)
        after = rss_kib(url.pid)
    return (after - before) / count


def floor(rounds: int, idle: int) -> dict[str, tuple[Trips, float]]:
    """HTTP/2 (httpx's and ours) and HTTP/1.1 with no ACP: POST round trips
    (interleaved) and memory per idle keep-alive connection (a server each)."""
    versions = {
        "bare HTTP/2": "h2",
        "bare HTTP/2 ours": "h2 ours",
        "bare HTTP/1.1": "h1",
    }
    trips = {name: Trips() for name in versions}
    with serving(
        "hypercorn-asyncio", "http_bench_apps:bare", cwd=Path(HERE), env=ENV
    ) as url:
        for _ in range(LATENCY_ROUNDS):
            for name, version in versions.items():
                trio.run(bare_posts, url, version, rounds, trips[name])
    memory = {}
    for name, version in versions.items():
        with serving(
            "hypercorn-asyncio", "http_bench_apps:bare", cwd=Path(HERE), env=ENV
        ) as url:
            memory[name] = trio.run(bare_idle, url, version, idle)
    return {name: (trips[name], memory[name]) for name in versions}


# -- the run -------------------------------------------------------------------


def _load() -> str:
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def connector(url: str, http2: bool | None) -> Connect:
    """Our client of ``url``: HTTP/2 (True), HTTP/1.1 (False), WebSocket (None)."""
    if http2 is None:
        ws = url.replace("http", "ws", 1)
        return lambda: acp_http.connect_websocket(ws, OurClient)
    return lambda: acp_http.connect_http(url, OurClient, http2=http2)


def idle_memory(app: str, measure: Callable[[Any], float]) -> float:
    """``measure`` (KiB per connection) against a fresh server of ``app``
    (``ours``, ``theirs``): each figure starts from the same state."""
    with serving(
        "hypercorn-asyncio", f"http_bench_apps:{app}", cwd=Path(HERE), env=ENV
    ) as url:
        return measure(url)


def run(args: argparse.Namespace) -> None:
    rounds, prompts, idle = (100, 10, 40) if args.quick else (400, 40, 100)
    per_round = rounds // LATENCY_ROUNDS
    load_before = _load()
    stdio_agent = [sys.executable, os.path.join(HERE, "http_bench_apps.py")]

    def stdio() -> Any:
        return acp_trio.spawn_agent(stdio_agent, OurClient, env=ENV)

    kind, cwd = "hypercorn-asyncio", Path(HERE)
    with (
        serving(kind, "http_bench_apps:ours", cwd=cwd, env=ENV) as ours,
        serving(kind, "http_bench_apps:theirs", cwd=cwd, env=ENV) as theirs,
    ):
        http = connector(ours, True)
        http1 = connector(ours, False)
        websocket = connector(ours, None)

        runs: dict[str, Callable[[Trips], None]] = {
            "stdio": lambda t: trio.run(our_latency, stdio, per_round, None, t),
            "ours HTTP/2": lambda t: trio.run(
                our_latency, http, per_round, ours.pid, t
            ),
            "ours HTTP/1.1": lambda t: trio.run(
                our_latency, http1, per_round, ours.pid, t
            ),
            "ours WebSocket": lambda t: trio.run(
                our_latency, websocket, per_round, ours.pid, t
            ),
            "official SDK HTTP/1.1": lambda t: asyncio.run(
                their_latency(theirs, False, per_round, theirs.pid, t)
            ),
            "official SDK HTTP/2": lambda t: asyncio.run(
                their_latency(theirs, True, per_round, theirs.pid, t)
            ),
        }
        latency = {name: Trips() for name in runs}
        for _ in range(LATENCY_ROUNDS):
            for name, trip in runs.items():
                trip(latency[name])
        measures: dict[str, Callable[[], float]] = {
            "ours HTTP/2": lambda: trio.run(our_throughput, http, prompts),
            "ours HTTP/1.1": lambda: trio.run(our_throughput, http1, prompts),
            "ours WebSocket": lambda: trio.run(our_throughput, websocket, prompts),
            "official SDK HTTP/1.1": lambda: asyncio.run(
                their_throughput(theirs, False, prompts)
            ),
            "official SDK HTTP/2": lambda: asyncio.run(
                their_throughput(theirs, True, prompts)
            ),
        }
        rates: dict[str, list[float]] = {name: [] for name in measures}
        for _ in range(ROUNDS):
            for name, measure in measures.items():
                rates[name].append(measure())
        throughput = {name: statistics.median(r) for name, r in rates.items()}
    memory = {
        "ours HTTP/2": idle_memory(
            "ours", lambda url: trio.run(our_idle, connector(url, True), url.pid, idle)
        ),
        "ours HTTP/1.1": idle_memory(
            "ours", lambda url: trio.run(our_idle, connector(url, False), url.pid, idle)
        ),
        "ours WebSocket": idle_memory(
            "ours", lambda url: trio.run(our_idle, connector(url, None), url.pid, idle)
        ),
        "official SDK HTTP/1.1": idle_memory(
            "theirs", lambda url: asyncio.run(their_idle(url, False, url.pid, idle))
        ),
        "official SDK HTTP/2": idle_memory(
            "theirs", lambda url: asyncio.run(their_idle(url, True, url.pid, idle))
        ),
    }
    bare = floor(per_round, idle)

    print(f"{os.cpu_count()} CPUs; load average {load_before} before, {_load()} after")
    base = statistics.median(latency["stdio"].times)
    print(
        f"latency: a one-update prompt, {LATENCY_ROUNDS} interleaved rounds x"
        f" {per_round} sequential round trips (median, p90; CPU ms per round trip:"
        " server, client)"
    )
    for name, measured in latency.items():
        times = measured.times
        median = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        cpu = (
            f"  cpu {measured.server_cpu / len(times) * 1e3:5.2f}"
            f" {measured.client_cpu / len(times) * 1e3:5.2f}"
        )
        added = (
            ""
            if name == "stdio"
            else (
                f"  +{(median - base) * 1e3:.2f} ms per round trip, "
                f"+{(median - base) * 5e2:.2f} ms per message ({median / base:.1f}x stdio)"
            )
        )
        print(f"  {name:21} {median * 1e3:7.2f} ms  {p90 * 1e3:7.2f} ms{cpu}{added}")
    theirs_rate = throughput["official SDK HTTP/1.1"]
    theirs_rate2 = throughput["official SDK HTTP/2"]
    print(
        f"messages/s, one hypercorn worker, {CLIENTS} connections x {prompts} prompts"
        f" x {UPDATES} updates (median of {ROUNDS} interleaved rounds)"
    )
    for name, rate in throughput.items():
        print(
            f"  {name:21} {rate:9.0f} msg/s  ({rate / theirs_rate:.2f}x the official"
            f" SDK's HTTP/1.1, goal 3x; {rate / theirs_rate2:.2f}x its HTTP/2)"
        )
    print(
        f"memory per idle connection (a session and its streams), {idle} connections,"
        " a server each"
    )
    theirs_kib = max(memory["official SDK HTTP/1.1"], 0.1)
    theirs_kib2 = max(memory["official SDK HTTP/2"], 0.1)
    for name, kib in memory.items():
        print(
            f"  {name:21} {kib:7.1f} KiB  ({kib / theirs_kib:.2f}x the official SDK's"
            f" HTTP/1.1, {kib / theirs_kib2:.2f}x its HTTP/2)"
        )
    print(
        "the floor, no ACP (an empty 202): a POST round trip (median, p90; CPU ms:"
        " server, client), memory per idle keep-alive connection"
    )
    for name, (trips, kib) in bare.items():
        times = trips.times
        print(
            f"  {name:21} {statistics.median(times) * 1e3:7.2f} ms"
            f"  {statistics.quantiles(times, n=10)[-1] * 1e3:7.2f} ms"
            f"  cpu {trips.server_cpu / len(times) * 1e3:5.2f}"
            f" {trips.client_cpu / len(times) * 1e3:5.2f}  {kib:7.1f} KiB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and prompts")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
