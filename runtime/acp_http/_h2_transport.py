"""An HTTP/2 transport for httpx: one connection, one reader task, every request at once.

A remote ACP connection keeps two SSE streams open and POSTs beside them.
Over HTTP/2 they all share one connection (as the RFD intends), and what
comes for one of them must never wait for another.  httpcore (1.0.9, and
httpcore2 2.17) reads an HTTP/2 connection from whichever task waits for a
response, under a lock: the task waiting on an idle stream holds that lock
through its network read, and a task whose answer another read already
brought waits behind it for the lock until more bytes come (the next
keepalive comment, seconds later).  Here one task per connection reads it
(:meth:`_Connection.read`) and hands each event to its stream, waking the
task waiting for that stream alone.

Flow control: a stream's window is :data:`STREAM_WINDOW`, the connection's
:data:`CONNECTION_WINDOW` (by default: :class:`H2Transport`'s
``stream_window`` and ``connection_window``); what a stream received is acknowledged
(WINDOW_UPDATE) as its reader takes it, so what waits unread is bounded by
the window.  A request waits for a free stream while the server's
``MAX_CONCURRENT_STREAMS`` are in use, and for window to send its body.
A GOAWAY ends the connection (h2 takes no frame after it): every stream
still open fails with httpx's ``RemoteProtocolError`` whose ``__cause__`` is
``httpcore.RemoteProtocolError(event)`` (``ConnectionTerminated``, or
``StreamReset`` for a stream reset alone), as httpcore says them, and
httpcore's ``trace`` extension is called with its event names, so that
:mod:`acp_http._resend` judges a failed POST the same way; the next request
opens a new connection.

On ``https://`` ALPN offers ``h2`` and, when ``http1`` is allowed,
``http/1.1``: a server that picks HTTP/1.1 gets that connection closed and
every request from then on through httpx's own HTTP/1.1 transport.  The
reader tasks run in a task group the transport opens when it is entered:
use its client as ``async with`` (a request outside raises ``RuntimeError``).
"""

from __future__ import annotations

import collections
import ssl
from collections.abc import AsyncIterator, Callable, Mapping
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import anyio.streams.tls
import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
import httpcore
import httpx

from ._signal import Signal

__all__ = ["CONNECTION_WINDOW", "STREAM_WINDOW", "H2Transport"]

#: what one stream may receive before its reader takes it
STREAM_WINDOW = 1024 * 1024
#: what the connection's streams together may receive unread
CONNECTION_WINDOW = 16 * 1024 * 1024
#: the streams the server may open to us (none: no push) and the largest head
_MAX_HEADER_LIST = 65536
#: bytes read from the socket at a time
_READ_BYTES = 65536
#: an HTTP/2 frame's head (length, type, flags, stream), and GOAWAY's type
_FRAME_HEAD = 9
_GOAWAY = 0x7
#: how long a stream's closing waits to send its RST_STREAM
_CLOSE_SECONDS = 5.0
#: request headers HTTP/2 forbids (RFC 9113, 8.2.2) or says otherwise
_DROPPED = frozenset(
    {
        b"host",
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"transfer-encoding",
        b"upgrade",
        b"te",
    }
)

#: makes the exception a stream's reader raises (a fresh one each time)
Failure = Callable[[], Exception]


def _protocol_error(event: object, said: str) -> Failure:
    """httpx's ``RemoteProtocolError`` caused by httpcore's, holding h2's ``event``."""

    def make() -> Exception:
        error = httpx.RemoteProtocolError(said)
        error.__cause__ = httpcore.RemoteProtocolError(event)
        return error

    return make


def _failure(kind: type[httpx.TransportError], said: str) -> Failure:
    return lambda: kind(said)


class _Unavailable(Exception):
    """The connection takes no new stream (ended, or out of stream ids): another."""


class _Stream:
    """What one request's stream received, for the task waiting for it."""

    __slots__ = ("chunks", "ended", "failure", "head", "id", "signal")

    def __init__(self, stream_id: int) -> None:
        self.id = stream_id
        self.head: list[tuple[bytes, bytes]] | None = None
        #: (data, its flow-controlled length), not yet taken by the reader
        self.chunks: collections.deque[tuple[bytes, int]] = collections.deque()
        self.ended = False
        self.failure: Failure | None = None
        self.signal = Signal()


def _head(request: httpx.Request) -> list[tuple[bytes, bytes]]:
    """The request's HEADERS: pseudo-headers, then its own (HTTP/1.1's dropped)."""
    url = request.url
    authority = request.headers.get("host", "").encode("ascii") or url.netloc
    return [
        (b":method", request.method.encode("ascii")),
        (b":authority", authority),
        (b":scheme", url.scheme.encode("ascii")),
        (b":path", url.raw_path),
    ] + [
        (name.lower(), value)
        for name, value in request.headers.raw
        if name.lower() not in _DROPPED
    ]


async def _trace(request: httpx.Request, name: str, info: Mapping[str, Any]) -> None:
    """httpcore's ``trace`` request extension, called as httpcore calls it."""
    trace = request.extensions.get("trace")
    if trace is not None:
        await trace(name, {"request": request, **info})


class _Connection:
    """One HTTP/2 connection, read by one task (:meth:`_read`)."""

    def __init__(
        self,
        socket: anyio.abc.ByteStream,
        *,
        stream_window: int = STREAM_WINDOW,
        connection_window: int = CONNECTION_WINDOW,
    ) -> None:
        self.socket = socket
        self.stream_window = stream_window
        self.connection_window = connection_window
        self.h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(
                client_side=True, header_encoding=None, validate_inbound_headers=False
            )
        )
        self.streams: dict[int, _Stream] = {}
        #: set once the connection failed or ended (then no new stream)
        self.failure: Failure | None = None
        self._write_lock = anyio.Lock()
        #: window, settings, a free stream, the connection's end
        self._changed = Signal()
        self._no_more_ids = False

    @property
    def usable(self) -> bool:
        return self.failure is None and not self._no_more_ids

    async def start(self) -> None:
        """The preface and our settings (no push; a stream's window)."""
        self.h2.local_settings = h2.settings.Settings(
            client=True,
            initial_values={
                h2.settings.SettingCodes.ENABLE_PUSH: 0,
                h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 100,
                h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: _MAX_HEADER_LIST,
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: self.stream_window,
            },
        )
        # some servers refuse a setting RFC 7540 did not name (httpcore drops it too)
        del self.h2.local_settings[h2.settings.SettingCodes.ENABLE_CONNECT_PROTOCOL]
        self.h2.initiate_connection()
        if self.connection_window > 65535:  # RFC 9113's initial window
            self.h2.increment_flow_control_window(self.connection_window - 65535)
        await self.flush()

    # -- the one reader ------------------------------------------------------

    async def read(self) -> None:
        """Read the connection until it ends; hand each event to its stream."""
        pending = bytearray()
        try:
            while self.failure is None:
                try:
                    pending += await self.socket.receive(_READ_BYTES)
                except anyio.EndOfStream:
                    self._fail(
                        _failure(httpx.RemoteProtocolError, "Server disconnected")
                    )
                    return
                except (OSError, anyio.BrokenResourceError, ssl.SSLError) as error:
                    self._fail(_failure(httpx.ReadError, repr(error)))
                    return
                except anyio.ClosedResourceError:
                    self._fail(_failure(httpx.ReadError, "the connection was closed"))
                    return
                whole = self._whole_frames(pending)
                if not whole:
                    continue
                try:
                    events = self.h2.receive_data(whole)
                except h2.exceptions.ProtocolError as error:
                    self._fail(_failure(httpx.RemoteProtocolError, repr(error)))
                    await self._flush_quietly()  # h2's GOAWAY, if it made one
                    return
                for event in events:
                    self._on_event(event)
                await self._flush_quietly()  # SETTINGS and PING acks
        finally:
            self._fail(_failure(httpx.ReadError, "the connection was closed"))
            with anyio.CancelScope(shield=True):
                await anyio.aclose_forcefully(self.socket)

    def _whole_frames(self, pending: bytearray) -> bytes:
        """The whole frames at the start of ``pending``, taken off it, up to
        and including a GOAWAY: h2 takes no frame after one, and refusing
        those that came with it in one read it would lose the GOAWAY too (its
        last stream says which requests the server did not process).  A frame
        longer than h2 takes goes at once (h2 refuses it by its header)."""
        end = 0
        while len(pending) - end >= _FRAME_HEAD:
            length = int.from_bytes(pending[end : end + 3], "big")
            if length > self.h2.max_inbound_frame_size:
                end = len(pending)
                break
            if len(pending) - end < _FRAME_HEAD + length:
                break
            kind = pending[end + 3]
            end += _FRAME_HEAD + length
            if kind == _GOAWAY:
                del pending[end:]  # nothing after it is read
                break
        whole = bytes(pending[:end])
        del pending[:end]
        return whole

    def _on_event(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.ConnectionTerminated):
            self._fail(_protocol_error(event, f"{event!r}"[:300]))
            return
        stream_id = getattr(event, "stream_id", None)
        stream = self.streams.get(stream_id) if isinstance(stream_id, int) else None
        if isinstance(event, h2.events.ResponseReceived) and stream is not None:
            stream.head = list(event.headers or [])
        elif isinstance(event, h2.events.DataReceived) and stream is not None:
            stream.chunks.append((event.data or b"", event.flow_controlled_length or 0))
        elif isinstance(event, h2.events.DataReceived) and event.stream_id:
            # a stream we let go of: give its window back at once
            self._acknowledge(event.flow_controlled_length or 0, event.stream_id)
            return
        elif isinstance(event, h2.events.StreamEnded) and stream is not None:
            stream.ended = True
            self._changed.wake()  # a stream freed
        elif isinstance(event, h2.events.StreamReset) and stream is not None:
            if stream.failure is None and not stream.ended:
                stream.failure = _protocol_error(event, f"{event!r}"[:300])
            self._changed.wake()  # a stream freed
        else:
            # settings (streams allowed, windows), WINDOW_UPDATE
            self._changed.wake()
            return
        stream.signal.wake()

    def _fail(self, failure: Failure) -> None:
        """The connection ended: every stream still open fails with ``failure``
        (after what it already received)."""
        if self.failure is not None:
            return
        self.failure = failure
        for stream in self.streams.values():
            if stream.failure is None and not stream.ended:
                stream.failure = failure
            stream.signal.wake()
        self._changed.wake()

    # -- writing -------------------------------------------------------------

    async def flush(self) -> None:
        """Send what h2 has to send (any task's: frames go out in h2's order)."""
        async with self._write_lock:
            data = self.h2.data_to_send()
            if not data:
                return
            try:
                await self.socket.send(data)
            except (
                OSError,
                ssl.SSLError,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
            ) as error:
                self._fail(_failure(httpx.WriteError, repr(error)))
                failure = self.failure
                assert failure is not None
                raise failure() from None

    async def _flush_quietly(self) -> None:
        try:
            await self.flush()
        except httpx.TransportError:
            pass  # the connection failed: its streams say so

    def _acknowledge(self, size: int, stream_id: int) -> None:
        if self.failure is None and size:
            try:
                self.h2.acknowledge_received_data(size, stream_id)
            except h2.exceptions.ProtocolError:
                pass  # the connection is closing: no window to give back

    def _h2_failed(self, error: h2.exceptions.ProtocolError) -> Exception:
        """What h2 refusing to send means: the connection's end, or our mistake."""
        if self.failure is not None:
            return self.failure()
        return httpx.LocalProtocolError(repr(error))

    # -- a request -----------------------------------------------------------

    async def request(self, request: httpx.Request) -> httpx.Response:
        timeouts: Mapping[str, float | None] = request.extensions.get("timeout", {})
        try:
            with anyio.fail_after(timeouts.get("pool")):
                while (
                    self.usable
                    and self.h2.open_outbound_streams
                    >= self.h2.remote_settings.max_concurrent_streams
                ):
                    await self._changed.wait()
        except TimeoutError:
            raise httpx.PoolTimeout("no free HTTP/2 stream in time") from None
        if not self.usable:
            raise _Unavailable
        has_body = "content-length" in request.headers or (
            "transfer-encoding" in request.headers
        )
        # the id and its HEADERS with no await between: ids go out in order
        try:
            stream_id = self.h2.get_next_available_stream_id()
        except h2.exceptions.NoAvailableStreamIDError:
            self._no_more_ids = True
            raise _Unavailable from None
        try:
            self.h2.send_headers(stream_id, _head(request), end_stream=not has_body)
        except h2.exceptions.ProtocolError as error:
            raise self._h2_failed(error) from None
        stream = self.streams[stream_id] = _Stream(stream_id)
        try:
            await _trace(
                request, "http2.send_request_headers.started", {"stream_id": stream_id}
            )
            try:
                with anyio.fail_after(timeouts.get("write")):
                    if has_body:
                        await self._send_body(request, stream)
                    else:
                        await self.flush()
            except TimeoutError:
                raise httpx.WriteTimeout("the request did not go out in time") from None
            try:
                with anyio.fail_after(timeouts.get("read")):
                    while stream.head is None:
                        if stream.failure is not None:
                            raise stream.failure()
                        await stream.signal.wait()
            except TimeoutError:
                raise httpx.ReadTimeout("no answer in time") from None
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close_stream(stream)
            raise
        await _trace(request, "http2.receive_response_headers.complete", {})
        status = 200
        headers: list[tuple[bytes, bytes]] = []
        for name, value in stream.head:
            if name == b":status":
                status = int(value)
            elif not name.startswith(b":"):
                headers.append((name, value))
        return httpx.Response(
            status,
            headers=headers,
            stream=_Body(self, stream, request),
            extensions={"http_version": b"HTTP/2", "stream_id": stream_id},
        )

    async def _send_body(self, request: httpx.Request, stream: _Stream) -> None:
        """The request's body in DATA frames as the window allows, then its end:
        sent with its HEADERS in one write when the window holds it all."""
        assert isinstance(request.stream, httpx.AsyncByteStream)
        async for chunk in request.stream:
            view = memoryview(chunk)
            while view:
                if stream.failure is not None:
                    raise stream.failure()
                try:
                    window = self._window(stream)
                    if window > 0:
                        self.h2.send_data(stream.id, view[:window].tobytes())
                except h2.exceptions.ProtocolError as error:
                    raise self._h2_failed(error) from None
                if window > 0:
                    view = view[window:]
                    continue
                await self.flush()  # what is queued, before waiting
                if stream.failure is None and self._window(stream) <= 0:
                    await self._changed.wait()  # a WINDOW_UPDATE, or the end
        try:
            self.h2.end_stream(stream.id)
        except h2.exceptions.ProtocolError as error:
            raise self._h2_failed(error) from None
        await self.flush()
        await _trace(request, "http2.send_request_body.complete", {})

    def _window(self, stream: _Stream) -> int:
        """What ``stream`` may send now, in one frame (0: none, or it closed)."""
        if stream.failure is not None:
            return 0
        try:
            window = self.h2.local_flow_control_window(stream.id)
        except h2.exceptions.ProtocolError:
            return 0
        return min(window, self.h2.max_outbound_frame_size)

    async def receive(self, stream: _Stream, read_timeout: float | None) -> bytes:
        """The stream's next bytes (b"": it ended); its window given back."""
        while True:
            if stream.chunks:
                data, size = stream.chunks.popleft()
                self._acknowledge(size, stream.id)
                await self._flush_quietly()
                if data:
                    return data
                continue
            if stream.ended:
                return b""
            if stream.failure is not None:
                raise stream.failure()
            with anyio.fail_after(read_timeout):
                await stream.signal.wait()

    async def close_stream(self, stream: _Stream) -> None:
        """Let go of ``stream``: reset it if it is still open (CANCEL)."""
        if self.streams.pop(stream.id, None) is None:
            return
        unread = sum(size for _, size in stream.chunks)
        stream.chunks.clear()
        self._acknowledge(unread, stream.id)
        if self.failure is None and not (stream.ended or stream.failure):
            try:
                self.h2.reset_stream(stream.id, h2.errors.ErrorCodes.CANCEL)
            except h2.exceptions.ProtocolError:
                pass  # it closed meanwhile
        with anyio.move_on_after(_CLOSE_SECONDS):
            await self._flush_quietly()
        self._changed.wake()

    async def aclose(self) -> None:
        if self.failure is None:
            self.h2.close_connection()
            with anyio.move_on_after(_CLOSE_SECONDS):
                await self._flush_quietly()
        self._fail(_failure(httpx.ReadError, "the connection was closed"))
        await anyio.aclose_forcefully(self.socket)


class _Body(httpx.AsyncByteStream):
    """A response's body as its stream receives it."""

    def __init__(
        self, connection: _Connection, stream: _Stream, request: httpx.Request
    ) -> None:
        self.connection = connection
        self.stream = stream
        timeouts: Mapping[str, float | None] = request.extensions.get("timeout", {})
        self.read_timeout = timeouts.get("read")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while data := await self.connection.receive(self.stream, self.read_timeout):
                yield data
        except TimeoutError:
            raise httpx.ReadTimeout("no bytes came in time") from None

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self.connection.close_stream(self.stream)


class H2Transport(httpx.AsyncBaseTransport):
    """httpx's transport over one HTTP/2 connection at a time (see the module).

    On ``https://``: ``ssl_context`` makes its TLS connections (made for it:
    ALPN is set on it), ``http1`` says whether a server may answer ALPN with
    HTTP/1.1, which is then spoken through ``httpx.AsyncHTTPTransport`` with
    ``http1_ssl_context`` (httpx sets its ALPN too: a context of its own).

    ``stream_window`` bounds what one stream (a response) may have received
    and not yet read, ``connection_window`` what all the connection's
    streams together may (HTTP/2 flow control: the server waits past them);
    at least 65,535 bytes each (RFC 9113's initial window).
    """

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        http1: bool = True,
        http1_ssl_context: ssl.SSLContext | None = None,
        limits: httpx.Limits | None = None,
        stream_window: int = STREAM_WINDOW,
        connection_window: int = CONNECTION_WINDOW,
    ) -> None:
        if not 65535 <= stream_window <= 2**31 - 1:
            raise ValueError("stream_window: 65535 to 2**31-1 bytes")
        if not 65535 <= connection_window <= 2**31 - 1:
            raise ValueError("connection_window: 65535 to 2**31-1 bytes")
        self.stream_window = stream_window
        self.connection_window = connection_window
        self.ssl_context = ssl_context
        self.http1 = http1
        self.http1_ssl_context = http1_ssl_context
        self.limits = limits or httpx.Limits()
        self._connections: dict[tuple[str, str, int], _Connection] = {}
        self._connecting = anyio.Lock()
        self._task_group: anyio.abc.TaskGroup | None = None
        #: the server answered ALPN with HTTP/1.1: every request goes here
        self._fallback: httpx.AsyncHTTPTransport | None = None

    async def __aenter__(self) -> H2Transport:
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        task_group = self._task_group
        try:
            with anyio.CancelScope(shield=True):
                await self.aclose()
        finally:
            if task_group is not None:
                self._task_group = None
                task_group.cancel_scope.cancel()
                await task_group.__aexit__(exc_type, exc_value, traceback)

    async def aclose(self) -> None:
        connections = list(self._connections.values())
        self._connections.clear()
        for connection in connections:
            await connection.aclose()
        if self._fallback is not None:
            await self._fallback.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        while True:
            if self._fallback is not None:
                return await self._fallback.handle_async_request(request)
            connection = await self._connection(request)
            if connection is None:
                continue  # HTTP/1.1 by ALPN: the fallback takes it
            try:
                return await connection.request(request)
            except _Unavailable:
                continue  # it ended as the request came: a new one

    async def _connection(self, request: httpx.Request) -> _Connection | None:
        """The usable connection to ``request``'s origin, made if there is none."""
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        origin = (url.scheme, url.host, port)
        timeouts: Mapping[str, float | None] = request.extensions.get("timeout", {})
        try:
            with anyio.fail_after(timeouts.get("pool")):
                await self._connecting.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout("no connection in time") from None
        try:
            connection = self._connections.get(origin)
            if connection is not None and connection.usable:
                return connection
            if self._task_group is None:
                raise RuntimeError(
                    "acp_http's HTTP/2 transport reads in a task of its client:"
                    " open the client with `async with`"
                )
            await _trace(request, "connection.connect_tcp.started", {})
            socket = await self._connect(url.scheme, url.host, port, timeouts)
            if socket is None:
                return None
            connection = _Connection(
                socket,
                stream_window=self.stream_window,
                connection_window=self.connection_window,
            )
            try:
                await connection.start()
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await anyio.aclose_forcefully(socket)
                raise
            self._connections[origin] = connection
            self._task_group.start_soon(connection.read)
            return connection
        finally:
            self._connecting.release()

    async def _connect(
        self,
        scheme: str,
        host: str,
        port: int,
        timeouts: Mapping[str, float | None],
    ) -> anyio.abc.ByteStream | None:
        """A TCP (and on https, TLS) connection speaking HTTP/2; None when
        ALPN chose HTTP/1.1 (the fallback is made)."""
        tls = scheme == "https"
        try:
            with anyio.fail_after(timeouts.get("connect")):
                if not tls:
                    return await anyio.connect_tcp(host, port)
                context = self.ssl_context
                if context is None:  # made once, when first needed (it loads the CAs)
                    context = self.ssl_context = ssl.create_default_context()
                context.set_alpn_protocols(["h2", "http/1.1"] if self.http1 else ["h2"])
                socket = await anyio.connect_tcp(
                    host, port, ssl_context=context, tls_hostname=host
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(
                f"no connection to {host}:{port} in time"
            ) from None
        except (OSError, ssl.SSLError, anyio.BrokenResourceError) as error:
            # (anyio says a TLS handshake the server cut off as BrokenResourceError)
            cause = (
                error.__cause__
                if isinstance(error, anyio.BrokenResourceError)
                else None
            )
            raise httpx.ConnectError(repr(cause or error)) from None
        alpn = socket.extra(anyio.streams.tls.TLSAttribute.alpn_protocol, None)
        if alpn == "h2":
            return socket
        await anyio.aclose_forcefully(socket)
        if not self.http1:
            raise httpx.ConnectError(
                f"the server at {host}:{port} refused HTTP/2 (ALPN)"
            )
        self._fallback = httpx.AsyncHTTPTransport(
            verify=self.http1_ssl_context or True,
            http1=True,
            http2=False,
            limits=self.limits,
        )
        return None
