"""Which failed POSTs are sent again: those the server provably did not process.

Servers and proxies end their connections after so many requests (hypercorn's
``keep_alive_max_requests``, nginx's ``keepalive_requests``: 1000 by default),
or when idle.  A POST caught by that ending is sent again on a fresh
connection when, and only when, the server cannot have processed it:

* HTTP/2: the server's GOAWAY names a last stream below the POST's, or the
  server reset the POST's stream with
  ``REFUSED_STREAM`` (RFC 9113, 8.7: both mean "not processed");
* HTTP/1.1: the connection was one kept alive from an earlier request (no new
  TCP connection was made for this one), and it closed or was reset before a
  byte of the response came (the server closed an idle connection as the
  request went out: RFC 9112, 9.3.1).

And whatever the version: the connection failed before the request's body
had all gone out (the JSON-RPC message is the body: a server processes none
without all of it).  A connection that could not be made, or a timeout, is
no ending of a connection: nothing is sent again after it (:func:`recycled`).

httpx says these as ``httpx.RemoteProtocolError`` (its ``__cause__`` an
``httpcore.RemoteProtocolError`` whose argument is h2's ``ConnectionTerminated``
or ``StreamReset`` event, or the text "Server disconnected without sending a
response."), ``httpx.ReadError`` or ``httpx.WriteError`` (a reset),
``httpx.LocalProtocolError`` (h2 refusing to send on a connection a GOAWAY
closed), or h2's own ``ProtocolError`` (:data:`CUT`); the POST's stream,
whether its body all went out and whether its connection was new come from
httpcore's ``trace`` request extension.  A GOAWAY whose last stream is the POST's or above says the
server may have processed it (hypercorn's, sent as it reads the request past
its limit, does): such a POST is not sent again blindly (see
:meth:`acp_http.HttpWire` for what happens to it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import h2.errors
import h2.events
import h2.exceptions
import httpcore
import httpx

__all__ = ["CUT", "RETRIES", "PostTrace", "recycled", "unprocessed"]

#: what a request raises when its connection fails under it: httpx's errors,
#: and h2's ``ProtocolError``, which httpcore (1.0) lets out of a response
#: body's read when frames follow a GOAWAY (nginx's WINDOW_UPDATE: h2 takes
#: no frame once the connection is closed; encode/httpcore#46)
CUT = (httpx.HTTPError, h2.exceptions.ProtocolError)

#: how many more times a POST the server did not process is sent, and a
#: stream whose connection failed is reopened in a row (default)
RETRIES = 2

#: httpcore's words for an HTTP/1.1 connection closed before any response byte
_NO_RESPONSE = "Server disconnected without sending a response."


@dataclasses.dataclass
class PostTrace:
    """What httpcore's ``trace`` extension told of one request (pass it as
    ``extensions={"trace": trace}``)."""

    #: a new TCP connection was made for it (else one kept alive was reused)
    connected: bool = False
    #: its HTTP/2 stream, once its headers were being sent (None: none yet)
    stream_id: int | None = None
    #: the request's body all went out (before: the server has no message)
    sent: bool = False
    #: the response's head came (a failure after it is not before "a byte of it")
    answered: bool = False

    async def __call__(self, event: str, info: Mapping[str, object]) -> None:
        if event == "connection.connect_tcp.started":
            self.connected = True
        elif event == "http2.send_request_headers.started":
            stream_id = info.get("stream_id")
            if isinstance(stream_id, int):
                self.stream_id = stream_id
        elif event.endswith(".send_request_body.complete"):
            self.sent = True
        elif event.endswith(".receive_response_headers.complete"):
            self.answered = True


def recycled(error: Exception) -> bool:
    """Whether ``error`` may be an HTTP connection's ending, after which a new
    one is worth a try: not a connection that could not be made, nor a timeout
    (the server is gone or stuck: trying again only takes longer to fail)."""
    return not isinstance(error, (httpx.ConnectError, httpx.TimeoutException))


def unprocessed(error: Exception, trace: PostTrace) -> str | None:
    """Why the server provably did not process the request that failed with
    ``error`` (a few words), or None if it may have."""
    if not trace.sent:
        # the JSON-RPC message is the body: without all of it, nothing to process
        return "the connection failed before the POST's body had all gone out"
    cause = error.__cause__
    event = cause.args[0] if isinstance(cause, httpcore.RemoteProtocolError) else None
    if isinstance(event, h2.events.ConnectionTerminated):
        last = event.last_stream_id
        if trace.stream_id is not None and last is not None and trace.stream_id > last:
            return f"the server's GOAWAY took streams up to {last} only"
        return None
    if isinstance(event, h2.events.StreamReset):
        if event.error_code == h2.errors.ErrorCodes.REFUSED_STREAM:
            return "the server refused the POST's HTTP/2 stream"
        return None
    if trace.connected or trace.answered or trace.stream_id is not None:
        # a new connection, an answer begun, or HTTP/2: closing proves nothing
        return None
    if isinstance(error, httpx.RemoteProtocolError) and str(error) == _NO_RESPONSE:
        return "the server closed its kept-alive connection before answering"
    if isinstance(error, (httpx.ReadError, httpx.WriteError)):
        return "the server reset its kept-alive connection before answering"
    return None
