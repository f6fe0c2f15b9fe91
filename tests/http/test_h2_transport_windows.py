"""What our HTTP/2 client may hold unread is bounded by its flow-control windows.

``acp_http.H2Transport`` announces ``stream_window`` (SETTINGS
INITIAL_WINDOW_SIZE: what one response may have received and not yet read)
and ``connection_window`` (a WINDOW_UPDATE on stream 0: all its streams
together); the server may send no more.  Both are documented defaults you can
set.  Bytes in, frames out: a loopback socket read with h2 as the server.
"""

from __future__ import annotations

import acp_http
import h2.config
import h2.connection
import h2.events
import h2.settings
import httpx
import pytest
import trio

#: the test's bound: a hang guard only
TIMEOUT = 10


async def _announced(transport: acp_http.H2Transport) -> tuple[int, int]:
    """The stream window and the connection window a client announces."""
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    port = listener.socket.getsockname()[1]
    server = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    server.initiate_connection()
    stream_window: int | None = None
    connection_window = 65535

    async def request() -> None:
        async with httpx.AsyncClient(transport=transport) as client:
            await client.get(f"http://127.0.0.1:{port}/")

    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(request)
            socket = await listener.accept()
            await socket.send_all(server.data_to_send())
            while True:
                data = await socket.receive_some(65536)
                assert data, "the client left before its first request"
                events = server.receive_data(data)
                for event in events:
                    if isinstance(event, h2.events.RemoteSettingsChanged):
                        setting = event.changed_settings.get(
                            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE
                        )
                        if setting is not None:
                            stream_window = setting.new_value
                    elif isinstance(event, h2.events.WindowUpdated):
                        if event.stream_id == 0:
                            connection_window += event.delta
                if any(isinstance(e, h2.events.RequestReceived) for e in events):
                    break
            nursery.cancel_scope.cancel()
            await socket.aclose()
            await listener.aclose()
    assert stream_window is not None
    return stream_window, connection_window


async def test_our_http2_client_announces_its_default_flow_control_windows() -> None:
    announced = await _announced(acp_http.H2Transport())
    assert announced == (1024 * 1024, 16 * 1024 * 1024)


async def test_our_http2_clients_flow_control_windows_are_set_by_its_transport() -> (
    None
):
    transport = acp_http.H2Transport(stream_window=65535, connection_window=256 * 1024)
    assert await _announced(transport) == (65535, 256 * 1024)


def test_a_flow_control_window_below_http2s_initial_one_is_refused() -> None:
    with pytest.raises(ValueError, match="stream_window"):
        acp_http.H2Transport(stream_window=1024)
    with pytest.raises(ValueError, match="connection_window"):
        acp_http.H2Transport(connection_window=2**31)
