"""A server that ends its HTTP connections does not end the ACP connection.

Servers and proxies end a connection after so many requests (hypercorn's
``keep_alive_max_requests``, nginx's ``keepalive_requests``: 1000 by default),
or when idle.  Our client sends the next POST on a fresh connection; a POST
the ending cut off is sent again when the server provably did not process it,
or when it carries an answer (taken once per id); a request the server may
have processed is not sent again: its call fails alone, with a clear error.

hypercorn ends an HTTP/2 connection as it reads the request past its limit: a
GOAWAY whose last stream is that request's (so it "may have been processed"),
which it then never answers.  Over HTTP/1.1 it says ``Connection: close`` on
its last answer.  A server closing a kept-alive HTTP/1.1 connection as a
request arrives is played by a proxy here (the race of an idle timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import acp_core
import acp_http
import anyio
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import pytest
import sniffio
import trio
from _scenario import RecordingClient, text
from _servers import serve_command, serving
from acp_http._http_wire import ERROR_LINE_CHARS
from acp_schema import v1

TIMEOUT = 30
HERE = Path(__file__).resolve().parent
#: a line of JSON-RPC: initialize, protocol v1
INITIALIZE = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'
)
#: a notification the agent ignores (an extension's)
PING = b'{"jsonrpc":"2.0","method":"_test/ping","params":{}}'
#: the server's requests per connection (hypercorn's keep_alive_max_requests)
LIMIT = 5


@pytest.fixture(scope="module")
def recycling_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """hypercorn (trio worker) ending each connection after :data:`LIMIT` requests.

    Keepalive comments every 0.5 s (15 s by default)."""
    config = tmp_path_factory.mktemp("hypercorn") / "recycling.toml"
    config.write_text(f"keep_alive_max_requests = {LIMIT}\n")
    limits = {"ACP_HTTP_LIMITS": json.dumps({"keepalive_seconds": 0.5})}
    with serving(
        "hypercorn-trio", options=["--config", str(config)], env=limits
    ) as url:
        yield url


async def _opened(conn: Any) -> str:
    await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
    session = await conn.agent.session_new(
        v1.NewSessionRequest(cwd="/", mcp_servers=[])
    )
    return session.session_id


def _client(conn: Any) -> RecordingClient:
    """The connection's client: a :class:`RecordingClient`."""
    recorder: RecordingClient = conn.client
    return recorder


async def _prompt(conn: Any, session: str, words: str) -> str:
    answer = await conn.agent.session_prompt(
        v1.PromptRequest(session_id=session, prompt=[v1.TextContent(text=words)])
    )
    return answer.stop_reason


async def _cut_off(conn: Any, session: str, words: str) -> str | None:
    """Prompt ``words`` as the POST the server ends its connection under: the
    stop reason if the server processed it (its answer comes over the session's
    stream, reopened on the next connection), None if the call failed."""
    try:
        return await _prompt(conn, session, words)
    except acp_core.RequestError as failed:
        assert "may have processed it, not sent again" in failed.message
        assert "ConnectionTerminated" in failed.message  # as httpx said it
        assert failed.data == {"sends": 1, "processed": "maybe"}
        return None


async def test_a_prompt_after_the_server_ends_the_http2_connection_goes_on_a_new_one(
    recycling_url: str,
) -> None:
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(
            recycling_url, RecordingClient, http2=True
        ) as conn:
            # POSTs 1 and 3, the streams' GETs 2 and 4: one HTTP/2 connection
            session = await _opened(conn)
            assert await _prompt(conn, session, "nopermission 0") == "end_turn"  # 5
            # request 6: hypercorn ends the connection under it, and the streams
            await _cut_off(conn, session, "nopermission 1")
            # on a new connection, the streams reopened: two prompts (4 of its
            # LIMIT requests with the 2 GETs) leave room for a reopening
            # refused 409 while hypercorn still holds the old reader
            for n in range(2, 4):
                assert await _prompt(conn, session, f"nopermission {n}") == "end_turn"
            assert text(_client(conn).updates, session).endswith("nopermission 3 ")


async def test_a_post_the_server_may_have_processed_is_not_sent_again(
    recycling_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acp_http")
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(
            recycling_url, RecordingClient, http2=True
        ) as conn:
            session = await _opened(conn)  # requests 1 to 4 (2 GETs)
            await _prompt(conn, session, "nopermission 0")
            await _cut_off(conn, session, "nopermission cut off")
        said = [
            r.getMessage() for r in caplog.records if "sent again" in r.getMessage()
        ]
        assert len(said) == 1, said  # one bounded line, and no second POST
        assert "may have processed it, not sent again" in said[0]
        assert len(said[0]) <= ERROR_LINE_CHARS
        # the agent's store, replayed by session/load: the prompt at most once
        async with acp_http.connect_http(recycling_url, RecordingClient) as again:
            await again.agent.initialize(v1.InitializeRequest(protocol_version=1))
            await again.agent.session_load(
                v1.LoadSessionRequest(session_id=session, cwd="/", mcp_servers=[])
            )
            # its chunks come after the replay's on the session's stream
            await _prompt(again, session, "nopermission last")
            replayed = [
                note.update.content.text
                for note in _client(again).updates
                if isinstance(note.update, v1.UserMessageChunk)
                and isinstance(note.update.content, v1.TextContent)
            ]
        assert replayed[:1] == ["nopermission 0"]
        assert replayed.count("nopermission cut off") <= 1


async def test_the_streams_on_a_connection_the_server_ends_are_reopened(
    recycling_url: str,
) -> None:
    # your own client (http_client's): the streams share the POSTs' HTTP/2
    # connection (GETs 2 and 4), and hypercorn's GOAWAY ends them with it
    with trio.fail_after(TIMEOUT):
        async with (
            acp_http.http_client(recycling_url, http2=True) as http,
            acp_http.connect_http(recycling_url, RecordingClient, http=http) as conn,
        ):
            session = await _opened(conn)
            assert await _prompt(conn, session, "nopermission 0") == "end_turn"
            await _cut_off(conn, session, "nopermission 1")  # request 6
            # on a new connection, and the streams too: two prompts (4 of its
            # LIMIT requests with the 2 GETs) leave room for a reopening
            # refused 409 while hypercorn still holds the old reader
            for n in range(2, 4):
                assert await _prompt(conn, session, f"nopermission {n}") == "end_turn"
                assert text(_client(conn).updates, session).endswith(
                    f"nopermission {n} "
                )


async def test_prompts_go_on_when_the_server_closes_its_http1_connections(
    recycling_url: str,
) -> None:
    # hypercorn says Connection: close on its last answer: the client knew
    # before this change to take a new connection (a guard, not a fix)
    with trio.fail_after(TIMEOUT):
        async with acp_http.connect_http(
            recycling_url, RecordingClient, http2=False
        ) as conn:
            session = await _opened(conn)
            for _ in range(2 * LIMIT):
                assert await _prompt(conn, session, "ask") == "end_turn"
            assert _client(conn).permissions == 2 * LIMIT


class _ClosingProxy:
    """A TCP proxy to ``port`` that closes a client's connection, unanswered and
    unforwarded, as its request number ``after + 1`` (a POST) arrives."""

    def __init__(self, port: int, after: int) -> None:
        self.port = port
        self.after = after
        self.closed = 0

    async def serve(self, client: trio.SocketStream) -> None:
        async with client, await trio.open_tcp_stream("127.0.0.1", self.port) as server:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._back, server, client, nursery.cancel_scope)
                requests = 0
                async for chunk in client:
                    if chunk.startswith((b"POST ", b"GET ", b"DELETE ")):
                        requests += 1
                        if requests > self.after and chunk.startswith(b"POST "):
                            self.closed += 1
                            break
                    await server.send_all(chunk)
                nursery.cancel_scope.cancel()

    async def _back(
        self,
        server: trio.SocketStream,
        client: trio.SocketStream,
        scope: trio.CancelScope,
    ) -> None:
        async for chunk in server:
            await client.send_all(chunk)
        scope.cancel()


async def test_a_post_on_a_kept_alive_http1_connection_closed_unanswered_is_sent_again(
    url: str,
) -> None:
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    proxy = _ClosingProxy(port, after=3)
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                partial(trio.serve_tcp, host="127.0.0.1"), proxy.serve, 0
            )
            proxy_port = listeners[0].socket.getsockname()[1]
            proxied = f"http://127.0.0.1:{proxy_port}/acp"
            async with acp_http.connect_http(proxied, RecordingClient) as conn:
                session = await _opened(conn)
                for n in range(6):
                    assert (
                        await _prompt(conn, session, f"nopermission {n}") == "end_turn"
                    )
            nursery.cancel_scope.cancel()
    assert proxy.closed >= 1


async def test_serve_keeps_an_http2_connection_past_hypercorns_1000_requests() -> None:
    agent = [sys.executable, str(HERE / "remote_agent.py")]
    with serve_command(agent) as (url, _), trio.fail_after(TIMEOUT):
        async with acp_http.http_client(url, http2=True) as http:
            json_body = {"content-type": "application/json"}
            init = await http.post(url, content=INITIALIZE, headers=json_body)
            assert init.http_version == "HTTP/2"
            headers = {
                **json_body,
                "acp-connection-id": init.headers["acp-connection-id"],
            }

            async def post_some(count: int) -> None:
                for _ in range(count):
                    posted = await http.post(url, content=PING, headers=headers)
                    assert posted.status_code == 202

            # 1000 more requests, past hypercorn's default, on one connection
            async with trio.open_nursery() as nursery:
                for _ in range(20):
                    nursery.start_soon(post_some, 50)


@dataclasses.dataclass
class _Piped:
    """One client connection through :class:`_HoldingProxy`."""

    scope: trio.CancelScope
    #: it carries a session's SSE stream
    session_stream: bool = False
    #: when it ends, its server side stays open (in :attr:`_HoldingProxy.held`)
    hold: bool = False


class _HoldingProxy:
    """A TCP proxy to ``port`` that can cut the client side of the connections
    carrying session streams while it holds their server side open (the server
    still sees their reader), until it passes a 409 to a client."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.piped: list[_Piped] = []
        self.held: list[trio.SocketStream] = []
        self.refused = 0
        #: a session stream opened after a 409
        self.reopened = trio.Event()

    def cut_session_streams(self) -> None:
        for piped in self.piped:
            if piped.session_stream:
                piped.hold = True
                piped.scope.cancel()

    async def serve(self, client: trio.SocketStream) -> None:
        server = await trio.open_tcp_stream("127.0.0.1", self.port)
        piped = _Piped(trio.CancelScope())
        self.piped.append(piped)
        try:
            with piped.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._forth, client, server, piped)
                    nursery.start_soon(self._back, server, client, piped)
        finally:
            await client.aclose()
            if piped.hold:
                self.held.append(server)
            else:
                await server.aclose()

    async def _forth(
        self, client: trio.SocketStream, server: trio.SocketStream, piped: _Piped
    ) -> None:
        async for chunk in client:
            if chunk.startswith(b"GET ") and b"acp-session-id" in chunk.lower():
                piped.session_stream = True
            await server.send_all(chunk)
        piped.scope.cancel()

    async def _back(
        self, server: trio.SocketStream, client: trio.SocketStream, piped: _Piped
    ) -> None:
        async for chunk in server:
            if chunk.startswith(b"HTTP/1.1 409"):
                self.refused += 1
                for held in self.held:  # the server sees the old reader go
                    await held.aclose()
            elif piped.session_stream and self.refused:
                self.reopened.set()
            await client.send_all(chunk)
        piped.scope.cancel()


async def test_a_reopened_stream_waits_until_the_server_lets_go_of_the_old_reader(
    url: str,
) -> None:
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    proxy = _HoldingProxy(port)
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                partial(trio.serve_tcp, host="127.0.0.1"), proxy.serve, 0
            )
            proxy_port = listeners[0].socket.getsockname()[1]
            proxied = f"http://127.0.0.1:{proxy_port}/acp"
            async with acp_http.connect_http(proxied, RecordingClient) as conn:
                session = await _opened(conn)
                assert await _prompt(conn, session, "nopermission 0") == "end_turn"
                proxy.cut_session_streams()  # the server still has its reader
                # (what it sends the old reader meanwhile is lost: no replay)
                await proxy.reopened.wait()
                assert await _prompt(conn, session, "nopermission 1") == "end_turn"
                assert text(_client(conn).updates, session).endswith("nopermission 1 ")
            nursery.cancel_scope.cancel()


#: a permission request of :class:`_ResettingServer`'s agent, as an SSE event
_ASK = (
    b'data: {"jsonrpc":"2.0","id":0,"method":"session/request_permission",'
    b'"params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},'
    b'"options":[{"optionId":"yes","name":"Yes","kind":"allow_once"}]}}\n\n'
)
#: a WINDOW_UPDATE of the connection (by one byte), as bytes on the wire
_WINDOW_UPDATE = b"\x00\x00\x04\x08\x00\x00\x00\x00\x00" + (1).to_bytes(4, "big")
#: the initialize answer of :class:`_ResettingServer` (its id: the request's)
_INITIALIZED = '{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":1}}}}'


class _ResettingServer:
    """A bare HTTP/2 server (h2c, the h2 library) in the part of an ACP server:
    ``initialize`` answered, streams opened and left idle, other POSTs 202;
    but the POST numbered ``reset`` on a connection has its stream reset with
    ``code`` once its body has all come.  :attr:`bodies`: the POSTs it kept.
    ``ask``: the connection's stream carries a permission request as the
    second POST comes;
    ``goaway``: the POST so numbered on a connection, once its body came, is
    answered with a GOAWAY naming it, and the connection closed (as
    hypercorn ends one); ``before``: the GOAWAY names the stream before it
    (the POST not processed), and a WINDOW_UPDATE follows it in one write
    (as nginx's may)."""

    def __init__(
        self,
        reset: int,
        code: h2.errors.ErrorCodes,
        *,
        ask: bool = False,
        goaway: int = 0,
        before: bool = False,
    ) -> None:
        self.reset = reset
        self.code = code
        self.ask = ask
        self.goaway = goaway
        self.before = before
        self.bodies: list[bytes] = []
        #: set when the permission's answer came twice (the server's thread)
        self.answered_twice = threading.Event()

    async def serve(self, stream: trio.SocketStream) -> None:
        try:
            await self._serve(stream)
        except trio.BrokenResourceError:
            pass  # the client closed with our keepalive comments unread: a reset
        except h2.exceptions.StreamClosedError:
            pass  # a stream the client reset as it left, before its answer

    async def _serve(self, stream: trio.SocketStream) -> None:
        config = h2.config.H2Configuration(client_side=False)
        conn = h2.connection.H2Connection(config=config)
        conn.initiate_connection()
        await stream.send_all(conn.data_to_send())
        posts = 0
        bodies: dict[int, bytes] = {}
        streams: list[int] = []
        async for data in stream:
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.RequestReceived):
                    if (b":method", b"GET") in event.headers:
                        streams.append(event.stream_id)
                        conn.send_headers(
                            event.stream_id,
                            [(":status", "200"), ("content-type", "text/event-stream")],
                        )

                    else:
                        bodies[event.stream_id] = b""
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
                    if event.stream_id in bodies:
                        bodies[event.stream_id] += event.data
                elif isinstance(event, h2.events.StreamEnded):
                    body = bodies.pop(event.stream_id, None)
                    if body is None:
                        continue
                    posts += 1
                    if posts == self.goaway:
                        last = event.stream_id - 2 if self.before else event.stream_id
                        if not self.before:
                            self.bodies.append(body)
                        conn.close_connection(last_stream_id=last)
                        after = _WINDOW_UPDATE if self.before else b""
                        await stream.send_all(conn.data_to_send() + after)
                        return
                    if posts == self.reset:
                        conn.reset_stream(event.stream_id, self.code)
                        if self.code != h2.errors.ErrorCodes.REFUSED_STREAM:
                            self.bodies.append(body)  # reset after reading it
                        continue
                    self.bodies.append(body)
                    if _answers(self) >= 2:
                        self.answered_twice.set()
                    if self.ask and posts == 2 and streams:
                        # after initialize's answer (a stream's event may come first)
                        self.ask = False
                        conn.send_data(streams[0], _ASK)
                    if b'"initialize"' in body:
                        headers = [(":status", "200"), ("acp-connection-id", "c1")]
                        conn.send_headers(event.stream_id, headers)
                        ident = json.dumps(json.loads(body)["id"])
                        answer = _INITIALIZED.format(ident).encode()
                        conn.send_data(event.stream_id, answer, end_stream=True)
                    else:
                        conn.send_headers(
                            event.stream_id, [(":status", "202")], end_stream=True
                        )
            # a comment on each stream: with httpx's own HTTP/2 an answer on
            # a shared connection is read only when a stream's reader gets data
            for reader in streams:
                if reader in conn.streams and not conn.streams[reader].closed:
                    conn.send_data(reader, b": wake\n\n")
            await stream.send_all(conn.data_to_send())


async def _cancel_through(server: _ResettingServer) -> None:
    """initialize, then session/cancel (POST 2), over your own HTTP/2 client (its
    streams on the same connection), to ``server``."""
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, host="127.0.0.1"), server.serve, 0
        )
        url = f"http://127.0.0.1:{listeners[0].socket.getsockname()[1]}/acp"
        async with (
            acp_http.http_client(url, http2=True) as http,
            acp_http.connect_http(url, RecordingClient, http=http) as conn,
        ):
            await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
            await conn.agent.session_cancel(v1.CancelNotification(session_id="s1"))
        nursery.cancel_scope.cancel()


def _cancels(server: _ResettingServer) -> int:
    return sum(1 for body in server.bodies if b'"session/cancel"' in body)


async def test_a_post_whose_http2_stream_the_server_refused_is_sent_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="acp_http")
    server = _ResettingServer(2, h2.errors.ErrorCodes.REFUSED_STREAM)
    with trio.fail_after(TIMEOUT):
        await _cancel_through(server)
    assert _cancels(server) == 1  # refused, sent again, taken
    said = [r.getMessage() for r in caplog.records]
    assert any("refused the POST's HTTP/2 stream" in line for line in said), said
    assert not any("connection ended" in line for line in said), said


async def test_a_notification_the_server_may_have_processed_ends_the_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # reset after the body came (CANCEL): it may have been processed
    server = _ResettingServer(2, h2.errors.ErrorCodes.CANCEL)
    with trio.fail_after(TIMEOUT):
        await _cancel_through(server)
    assert _cancels(server) == 1  # not sent again
    ended = [
        r.getMessage() for r in caplog.records if "connection ended" in r.getMessage()
    ]
    assert len(ended) == 1, ended
    assert "POST session/cancel failed (1 sent)" in ended[0]
    assert "may have processed it, not sent again" in ended[0]


async def test_a_goaway_read_with_the_frames_after_it_still_says_which_posts_were_not_processed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="acp_http")
    # h2 takes no frame after a GOAWAY: read in one piece with one, it was lost
    server = _ResettingServer(0, h2.errors.ErrorCodes.NO_ERROR, goaway=2, before=True)
    with trio.fail_after(TIMEOUT):
        await _cancel_through(server)
    assert _cancels(server) == 1  # not processed: sent again, taken
    said = [r.getMessage() for r in caplog.records]
    assert any("GOAWAY took streams up to" in line for line in said), said
    assert not any("connection ended" in line for line in said), said


def _answers(server: _ResettingServer) -> int:
    return sum(1 for body in server.bodies if b'"optionId":"yes"' in body)


async def _answer_through(server: _ResettingServer, port: int) -> None:
    """initialize, an extension's notification (POST 2: the server's stream
    then carries a permission request), then the answer (POST 3, which the server ends its
    connection under), until the server has the answer twice: once per
    connection."""
    url = f"http://127.0.0.1:{port}/acp"
    async with (
        acp_http.connect_http_asyncio(url, RecordingClient, http2=True)
        if sniffio.current_async_library() == "asyncio"
        else acp_http.connect_http(url, RecordingClient, http2=True) as conn
    ):
        await conn.agent.initialize(v1.InitializeRequest(protocol_version=1))
        await conn.ext_notify("_test/ping", {})
        # (a thread's wait: let go of at the test's bound)
        await anyio.to_thread.run_sync(
            server.answered_twice.wait, abandon_on_cancel=True
        )
        assert _client(conn).permissions == 1


@contextmanager
def _serving_in_thread(handler: Any) -> Iterator[int]:
    """``trio.serve_tcp(handler)`` on 127.0.0.1 in a thread of its own; its port."""
    started = threading.Event()
    state: dict[str, Any] = {}

    async def main() -> None:
        state["token"] = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            state["scope"] = scope
            async with trio.open_nursery() as nursery:
                listeners = await nursery.start(
                    partial(trio.serve_tcp, host="127.0.0.1"), handler, 0
                )
                state["port"] = listeners[0].socket.getsockname()[1]
                started.set()

    thread = threading.Thread(target=trio.run, args=(main,))
    thread.start()
    try:
        assert started.wait(TIMEOUT)
        yield state["port"]
    finally:
        with contextlib.suppress(trio.RunFinishedError):  # it failed: said below
            trio.from_thread.run_sync(state["scope"].cancel, trio_token=state["token"])
        thread.join(TIMEOUT)


def test_an_answer_cut_off_by_the_end_of_an_http2_connection_is_sent_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="acp_http")
    server = _ResettingServer(0, h2.errors.ErrorCodes.NO_ERROR, ask=True, goaway=3)

    async def main() -> None:
        with trio.fail_after(TIMEOUT):
            await _answer_through(server, port)

    with _serving_in_thread(server.serve) as port:
        trio.run(main)
    assert _answers(server) == 2  # the GOAWAY named it: sent again, taken
    said = [r.getMessage() for r in caplog.records]
    assert any("sent again (an answer, taken once)" in line for line in said), said


def test_an_answer_cut_off_is_sent_again_on_asyncio() -> None:
    server = _ResettingServer(0, h2.errors.ErrorCodes.NO_ERROR, ask=True, goaway=3)
    with _serving_in_thread(server.serve) as port:
        asyncio.run(asyncio.wait_for(_answer_through(server, port), TIMEOUT))
    assert _answers(server) == 2
