"""The client side of Streamable HTTP, as a wire of newline-delimited JSON-RPC.

:class:`HttpWire` takes the lines a client connection writes and POSTs each
one; it opens the connection-scoped SSE stream after ``initialize`` and a
session's stream before the first message naming that session (as the RFD's
flows show, so nothing for the session is sent before its stream is open), and
writes every event back as a line.  The connection itself (``acp_trio`` or
``acp_asyncio``) runs on the other end of the in-memory seam: :mod:`acp_http._client`.

HTTP failures are clear: a request whose POST is refused is answered with a
JSON-RPC error whose ``data`` holds the status and (truncated) body; 401, 403,
404 and 410, a failed notification or response, a stream that ends or fails,
end the wire (the connection's pending calls then fail with
``ConnectionClosed``) and :attr:`HttpWire.error` says why.  A POST that a
server's ending of its connection cut off is sent again when that is safe
(:class:`HttpWire`, :mod:`acp_http._resend`).  Reconnecting is
the caller's: a new connection, then ``session/load`` or ``session/resume``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Mapping
from functools import partial

import anyio
import anyio.abc
import h2.exceptions
import httpx
import msgspec

from ._lines import hand_on, read_lines
from ._resend import CUT, RETRIES, PostTrace, recycled, unprocessed
from ._routing import Envelope, MessageError, decode_envelope, id_key
from ._sse import SseReader

__all__ = ["HttpError", "HttpVersions", "HttpWire"]

log = logging.getLogger("acp_http")

#: statuses after which the connection is unusable (TS SDK 2.4.0 agrees)
FATAL_STATUSES = frozenset({401, 403, 404, 410})
#: how much of an error body goes into the JSON-RPC error's data
ERROR_BODY_CHARS = 2048
#: requests from the agent whose answer's session is remembered (oldest forgotten)
MAX_ANSWER_ROUTES = 4096
#: the longest line an :class:`HttpError` says (what failed, what was tried, what to change)
ERROR_LINE_CHARS = 400
#: how much of the underlying exception's text goes into that line
CAUSE_CHARS = 120
#: seconds before the second reopening of a stream in a row (each next
#: one: twice the last, at most 1 s)
REOPEN_PAUSE = 0.1
#: how long a stream's reopening waits for the server to let go of the old
#: reader (409): it lets go when it sees the old connection end
REOPEN_WAIT_SECONDS = 30.0


@dataclasses.dataclass(frozen=True)
class HttpVersions:
    """The HTTP versions a client offers, and what to say when they fail."""

    #: HTTP/1.1 offered
    http1: bool
    #: HTTP/2 offered (alone on ``http://``: prior knowledge; by ALPN on ``https://``)
    http2: bool
    #: what was tried, for an error line ("HTTP/1.1", ...)
    tried: str
    #: what to change when it fails, for an error line
    advice: str


@dataclasses.dataclass
class _StreamRead:
    """What one GET of a stream got: bytes (then its failure resets the count)."""

    received: bool = False


class _StreamCut(Exception):
    """A stream's HTTP connection failed under it (or, reopening, a 409): reopen."""

    def __init__(self, status: int, said: str) -> None:
        super().__init__(said)
        self.status = status
        self.said = said


class HttpError(Exception):
    """What ended a remote connection: an HTTP status (0 if none) and a reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}" if status else message)
        self.status = status
        self.message = message


class HttpWire:
    """POSTs the lines it reads from ``local``, writes back what the streams carry.

    ``http`` carries the POSTs, the SSE streams and the DELETE.  Over HTTP/2
    (:func:`acp_http.http_client`'s :class:`~acp_http._h2_transport.H2Transport`)
    they all share one connection, as the official SDK's do, and what comes
    for one never waits for another.  Your own httpx client with httpx's
    HTTP/2 would make them wait: httpcore (1.0) lets the task reading one
    stream hold the connection's reads while it waits, and an answer that
    another task already received waits with it (until the next keepalive
    comment, seconds later).  Over HTTP/1.1 each request and stream takes a
    connection of the pool to itself.

    A server (or proxy) may end a connection under a POST (after so many
    requests, or idle).  The POST is sent again on a fresh connection, at most
    ``retries`` more times, when the server provably did not process it
    (:func:`acp_http._resend.unprocessed`), and when it carries an answer to
    the agent (an answer is taken once per id: a second copy is dropped).  A
    request that may have been processed is not sent again (JSON-RPC requests
    are not idempotent): its call fails with a JSON-RPC error (-32603, one
    bounded line, ``data`` ``{"sends": n, "processed": "maybe"}``; ``"no"``
    past the retries) and the connection goes on; a notification that may
    have been processed, or an answer or notification past the retries, ends
    the wire as other failures do.  A stream whose connection failed under it
    is reopened, at most ``retries`` times in a row.
    """

    def __init__(
        self,
        url: str,
        http: httpx.AsyncClient,
        *,
        headers: Mapping[str, str] | None = None,
        max_message_bytes: int = 16 * 1024 * 1024,
        versions: HttpVersions | None = None,
        retries: int = RETRIES,
    ) -> None:
        self.url = url
        #: how many more times a POST is sent when the server ended its
        #: connection under it (see :mod:`acp_http._resend`), and a stream
        #: reopened in a row
        self.retries = retries
        #: what ``http`` speaks, said when ``initialize`` fails (None: not known)
        self.versions = versions
        self.http = http
        self.headers = dict(headers or {})
        self.max_message_bytes = max_message_bytes
        self.connection_id: str | None = None
        #: None until an ``initialize`` is sent; then whether the last one
        #: made a connection (False: unreachable, or refused by its status)
        self.initialized: bool | None = None
        self.error: HttpError | None = None
        self._local: anyio.abc.ByteStream | None = None
        self._write_lock = anyio.Lock()
        self._streams: dict[str | None, anyio.Event] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        #: id of a request from the agent -> its session (the answer's POST names it)
        self._answer_sessions: dict[str, str] = {}

    async def run(self, local: anyio.abc.ByteStream) -> None:
        """Serve ``local`` until it closes or the remote connection fails."""
        self._local = local
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                reading = read_lines(
                    local,
                    self._post_all,
                    max_message_size=self.max_message_bytes,
                    answer_sender=self._deliver,
                )
                await self._guarded(reading)
                task_group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.aclose_forcefully(local)
                await self._delete()

    async def _guarded(self, work: Awaitable[None]) -> None:
        """Run ``work``; an :class:`HttpError` ends the wire (kept in :attr:`error`)."""
        try:
            await work
        except HttpError as error:
            if self.error is None:
                self.error = error
                log.warning("remote ACP connection ended: %s", error)
            assert self._task_group is not None
            self._task_group.cancel_scope.cancel()

    async def _post_all(self, lines: list[bytes]) -> None:
        for line in lines:
            await self._post(line)

    async def _post(self, line: bytes) -> None:
        try:
            envelope = decode_envelope(line)
        except MessageError:
            envelope = Envelope()
        if envelope.method == "initialize" and self.connection_id is None:
            await self._initialize(envelope, line)
            return
        headers = {"content-type": "application/json", **self.headers}
        if self.connection_id is not None:
            headers["acp-connection-id"] = self.connection_id
        session = envelope.params_session
        if envelope.is_response:
            session = self._answer_sessions.pop(id_key(envelope.id) or "", None)
        if session is not None:
            headers["acp-session-id"] = session
            await self._open_stream(session)
        response = await self._sent(envelope, line, headers)
        if response is None or response.status_code in (200, 202):
            return
        await self._refused(envelope, response)

    async def _sent(
        self, envelope: Envelope, line: bytes, headers: Mapping[str, str]
    ) -> httpx.Response | None:
        """POST ``line``, again (at most :attr:`retries` more times) when
        the server provably did not process it or it is an answer; a request
        whose POST failed for good is answered here with an error (None)."""
        sends = 0
        while True:
            trace = PostTrace()
            sends += 1
            try:
                return await self.http.post(
                    self.url,
                    content=line,
                    headers=headers,
                    extensions={"trace": trace},
                )
            except CUT as error:
                why = unprocessed(error, trace)
                cause = repr(error)[:CAUSE_CHARS]
                again = recycled(error) and (why or envelope.is_response)
                if sends <= self.retries and again:
                    # an answer is the agent's once: it drops a second of an id
                    reason = why or "an answer, taken once"
                    log.info("POST sent again (%s): %s", reason, cause)
                    continue
                failed = await self._post_failed(envelope, sends, why, cause)
                if not envelope.is_request:
                    raise failed from None
                return None

    async def _post_failed(
        self, envelope: Envelope, sends: int, why: str | None, cause: str
    ) -> HttpError:
        """What a POST that failed for good says; a request's call gets it as
        its error (the connection goes on: the next POST takes a fresh one)."""
        fate = "not processed" if why else "the server may have processed it"
        said = (
            f"POST {envelope.method or 'response'} failed ({sends} sent): {cause};"
            f" {fate}, not sent again"
        )[:ERROR_LINE_CHARS]
        if envelope.is_request:
            log.warning("%s", said)
            error = {
                "jsonrpc": "2.0",
                "id": envelope.id,
                "error": {
                    "code": -32603,
                    "message": said,
                    "data": {"sends": sends, "processed": "no" if why else "maybe"},
                },
            }
            await self._deliver(msgspec.json.encode(error))
        return HttpError(0, said)

    async def _refused(self, envelope: Envelope, response: httpx.Response) -> None:
        status = response.status_code
        body = response.text[:ERROR_BODY_CHARS]
        fatal = HttpError(
            status, f"POST {envelope.method or 'response'} refused: {body}"
        )
        if not envelope.is_request:
            raise fatal
        message = f"HTTP {status} from the ACP server"
        try:
            detail = msgspec.json.decode(response.content)
            message = f"{message}: {detail['error']['message']}"[:300]
        except (msgspec.DecodeError, KeyError, TypeError):
            pass
        error = {
            "jsonrpc": "2.0",
            "id": envelope.id,
            "error": {
                "code": -32603,
                "message": message,
                "data": {"status": status, "body": body},
            },
        }
        await self._deliver(msgspec.json.encode(error))
        if status in FATAL_STATUSES:
            raise fatal

    async def _initialize(self, envelope: Envelope, line: bytes) -> None:
        self.initialized = False
        headers = {"content-type": "application/json", **self.headers}
        try:
            response = await self.http.post(self.url, content=line, headers=headers)
        except httpx.HTTPError as error:
            raise HttpError(0, self._initialize_failed(error)) from None
        connection_id = response.headers.get("acp-connection-id")
        if response.status_code != 200 or not connection_id:
            if response.status_code == 200:
                raise HttpError(200, "the initialize answer has no Acp-Connection-Id")
            await self._refused(envelope, response)  # raises if fatal
            body = response.text[:CAUSE_CHARS].replace("\n", " ")
            said = f"initialize refused: HTTP {response.status_code} to POST {self.url}"
            log.warning("%s", f"{said}: {body}"[:ERROR_LINE_CHARS])
            return
        self.connection_id = connection_id
        self.initialized = True
        await self._open_stream(None)
        await self._deliver(response.content.strip())

    def _initialize_failed(self, error: httpx.HTTPError) -> str:
        """One bounded line: the URL, what was tried, what failed, what to change."""
        cause = repr(error)[:CAUSE_CHARS]
        versions = self.versions
        if versions is None:
            line = f"initialize failed: POST {self.url}: {cause}"
        else:
            advice = versions.advice
            if isinstance(error, httpx.ConnectError) and "SSL" not in repr(error):
                advice = "check the URL: no server answered there"
            line = (
                f"initialize failed: POST {self.url} over {versions.tried}: {cause};"
                f" {advice}"
            )
        return line[:ERROR_LINE_CHARS]

    async def _open_stream(self, session: str | None) -> None:
        """Open (once) the stream of ``session`` (None: the connection's); wait until it is."""
        ready = self._streams.get(session)
        if ready is None:
            ready = self._streams[session] = anyio.Event()
            assert self._task_group is not None
            self._task_group.start_soon(
                self._guarded, self._read_stream(session, ready)
            )
        await ready.wait()

    async def _read_stream(self, session: str | None, ready: anyio.Event) -> None:
        try:
            await self._reopened(session, ready)
        except HttpError as error:
            if session is None:
                raise
            # a session's stream alone: its next message reopens it
            log.info("%s", error)
            if self._streams.get(session) is ready:
                del self._streams[session]

    async def _reopened(self, session: str | None, ready: anyio.Event) -> None:
        """Read the stream of ``session``; reopen it when its HTTP connection
        failed under it (the server or a proxy ended it), at most
        :attr:`retries` times in a row (a stream that carried bytes resets the
        count).  A GET of a stream is safe to repeat: the server queues what
        it has for the stream until a reader comes (bounded in bytes and time:
        ``HttpLimits``); what it had sent into the ended connection is lost.
        While the server still holds the old reader (409: it has not seen the
        old connection end yet), the reopening waits, pausing longer each
        time, at most :data:`REOPEN_WAIT_SECONDS`."""
        failures = 0
        tries = 0
        held_since: float | None = None
        while True:
            read = _StreamRead()
            try:
                await self._read_events(session, ready, read, reopening=tries > 0)
                return
            except _StreamCut as cut:
                if read.received:
                    failures = tries = 0
                    held_since = None
                now = anyio.current_time()
                if cut.status == 409:
                    held_since = now if held_since is None else held_since
                    if now - held_since > REOPEN_WAIT_SECONDS:
                        raise HttpError(cut.status, cut.said) from None
                elif failures >= self.retries:
                    raise HttpError(cut.status, cut.said) from None
                else:
                    failures += 1
                log.info("%s; reopened", cut.said)
                if tries:  # the first at once
                    await anyio.sleep(min(REOPEN_PAUSE * 2 ** (tries - 1), 1.0))
                tries += 1

    async def _read_events(
        self,
        session: str | None,
        ready: anyio.Event,
        read: _StreamRead,
        *,
        reopening: bool = False,
    ) -> None:
        headers = {"accept": "text/event-stream", **self.headers}
        assert self.connection_id is not None
        headers["acp-connection-id"] = self.connection_id
        if session is not None:
            headers["acp-session-id"] = session
        reader = SseReader(self.max_message_bytes)
        scope = "connection" if session is None else f"session {session[:64]}"
        try:
            async with self.http.stream("GET", self.url, headers=headers) as response:
                if response.status_code != 200:
                    body = (await response.aread())[:ERROR_BODY_CHARS]
                    said = f"the {scope} stream was refused: {body.decode('utf-8', 'replace')}"
                    if reopening and response.status_code == 409:
                        raise _StreamCut(409, said[:ERROR_LINE_CHARS])
                    raise HttpError(response.status_code, said)
                ready.set()
                deliver = partial(self._deliver_events, session)
                answer = partial(self._answer_server, session)
                async for chunk in response.aiter_raw():
                    read.received = True
                    events = reader.feed(chunk)
                    if events:  # an over-long one judged as every reader does
                        await hand_on(events, deliver, self.max_message_bytes, answer)
        except (httpx.TransportError, h2.exceptions.ProtocolError) as error:
            said = f"the {scope} stream failed: {error!r}"[:300]
            if not recycled(error):
                raise HttpError(0, said) from None
            raise _StreamCut(0, said) from None
        except httpx.HTTPError as error:
            raise HttpError(0, f"the {scope} stream failed: {error!r}"[:300]) from None
        finally:
            ready.set()
        raise HttpError(0, f"the server ended the {scope} stream")

    async def _deliver_events(self, session: str | None, events: list[bytes]) -> None:
        for data in events:
            self._on_event(data, session)
        await self._deliver(b"\n".join(events))  # one write

    async def _answer_server(self, session: str | None, line: bytes) -> None:
        """The wire's own answer to a request of the agent's stream ``session``
        (an over-long request's -32600), POSTed as the client's answers are."""
        key = id_key(decode_envelope(line).id)
        if session is not None and key is not None:
            self._answer_sessions[key] = session
        await self._post(line)

    def _on_event(self, data: bytes, stream_session: str | None) -> None:
        """What an event tells the wire (answers' sessions, streams to open)."""
        try:
            envelope = decode_envelope(data)
        except MessageError:
            envelope = Envelope()
        if envelope.is_request:
            asking = envelope.params_session or stream_session
            key = id_key(envelope.id)
            if asking is not None and key is not None:
                if len(self._answer_sessions) >= MAX_ANSWER_ROUTES:
                    self._answer_sessions.pop(next(iter(self._answer_sessions)))
                self._answer_sessions[key] = asking
        session = envelope.result_session
        if (
            session is not None
            and session not in self._streams
            and envelope.is_response
        ):
            # a session/new (or fork) answer: that session's stream opens now
            ready = self._streams[session] = anyio.Event()
            assert self._task_group is not None
            self._task_group.start_soon(
                self._guarded, self._read_stream(session, ready)
            )

    async def _deliver(self, line: bytes) -> None:
        local = self._local
        assert local is not None
        async with self._write_lock:
            try:
                await local.send(line + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                raise HttpError(0, "the local connection closed") from None

    async def _delete(self) -> None:
        connection_id = self.connection_id
        if connection_id is None:
            return
        self.connection_id = None
        headers = {"acp-connection-id": connection_id, **self.headers}
        with anyio.move_on_after(5):
            try:
                await self.http.delete(self.url, headers=headers)
            except httpx.HTTPError:
                pass
