"""An HTTP/2 peer frame by frame (the h2 library on a blocking socket), for
tests that must see what a server sends on a stream, and when, as it is."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import h2.config
import h2.connection
import h2.events

#: how long one wait for the server may take (a hang guard only)
TIMEOUT = 20.0


class H2Peer:
    """One HTTP/2 connection (h2c, prior knowledge) to ``url``'s server."""

    def __init__(self, url: str) -> None:
        self.authority = url.split("//")[1].split("/")[0]
        host, port = self.authority.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True)
        )
        #: True once the server closed the connection
        self.closed = False
        self.conn.initiate_connection()
        self.flush()
        self.wait_for(h2.events.RemoteSettingsChanged)

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data and not self.closed:
            try:
                self.sock.sendall(data)
            except OSError:
                self.closed = True

    def headers(
        self,
        stream_id: int,
        method: str,
        path: str = "/acp",
        extra: list[tuple[str, str]] | None = None,
        end_stream: bool = False,
    ) -> None:
        """Open stream ``stream_id`` with a request's headers."""
        fields = [
            (":method", method),
            (":path", path),
            (":scheme", "http"),
            (":authority", self.authority),
            *(extra or []),
        ]
        self.conn.send_headers(stream_id, fields, end_stream=end_stream)
        self.flush()

    def data(self, stream_id: int, data: bytes, end_stream: bool = False) -> None:
        self.conn.send_data(stream_id, data, end_stream=end_stream)
        self.flush()

    def events(
        self, seconds: float, until: Callable[[h2.events.Event], bool] | None = None
    ) -> list[h2.events.Event]:
        """What the server sends within ``seconds`` (less if it closes the
        connection, or sends an event ``until`` is true of), its DATA
        acknowledged as it comes."""
        found: list[h2.events.Event] = []
        deadline = time.monotonic() + seconds
        while not self.closed and (left := deadline - time.monotonic()) > 0:
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                break
            except OSError:
                data = b""
            if not data:
                self.closed = True
                break
            for event in self.conn.receive_data(data):
                found.append(event)
                if isinstance(event, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(
                        event.flow_controlled_length, event.stream_id
                    )
            self.flush()
            if until is not None and any(until(event) for event in found):
                break
        return found

    def wait_for(
        self, kind: type[h2.events.Event], stream_id: int | None = None
    ) -> list[h2.events.Event]:
        """Events until one of ``kind`` (on ``stream_id``, if given) comes;
        the server closing the connection first, or a wait of ``TIMEOUT``,
        fails the test."""

        def wanted(event: h2.events.Event) -> bool:
            return isinstance(event, kind) and (
                stream_id is None or getattr(event, "stream_id", None) == stream_id
            )

        found = self.events(TIMEOUT, wanted)
        assert any(wanted(event) for event in found), (
            f"no {kind.__name__} within {TIMEOUT} s"
            f" (the server closed the connection: {self.closed}): {found}"
        )
        return found

    def close(self) -> None:
        self.sock.close()


def status_of(events: list[h2.events.Event], stream_id: int) -> int | None:
    """The status the server answered on ``stream_id``, if it did."""
    for event in events:
        if (
            isinstance(event, h2.events.ResponseReceived)
            and event.stream_id == stream_id
        ):
            return int(dict(event.headers)[b":status"])
    return None


def ended(events: list[h2.events.Event], stream_id: int) -> bool:
    """Whether the server ended (or reset) ``stream_id``."""
    return any(
        isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset))
        and event.stream_id == stream_id
        for event in events
    )
