"""The conductor's and a proxy's routing rules, without an event loop
(acp_conductor.Router, acp_core.ProxyCore)."""

from __future__ import annotations

import json

from acp_conductor import CLIENT, ChainFailure, Router
from acp_core import CancelHandler, Handle, ProxyCore, Write

INIT = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}'


def _json(data: bytes) -> dict[str, object]:
    return json.loads(data)


def test_initialize_goes_to_a_proxy_as_proxy_initialize_and_to_a_lone_agent_unchanged() -> (
    None
):
    chain = Router(["p", "agent"])
    (send,) = chain.receive(CLIENT, INIT)
    assert send.hop == 0 and _json(send.data)["method"] == "proxy/initialize"
    alone = Router(["agent"])
    (send,) = alone.receive(CLIENT, INIT)
    assert send.hop == 0 and send.data == INIT + b"\n"  # byte for byte


def test_proxy_successor_is_unwrapped_for_the_next_hop_and_its_answer_goes_back_unchanged() -> (
    None
):
    chain = Router(["p", "agent"])
    chain.receive(CLIENT, INIT)
    wrapped = b'{"jsonrpc":"2.0","id":7,"method":"proxy/successor","params":{"method":"initialize","params":{"protocolVersion":1},"_meta":{"hop":1}}}'
    (send,) = chain.receive(0, wrapped)
    assert send.hop == 1
    assert (
        send.data
        == b'{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}\n'
    )  # envelope _meta is hop-local
    answer = b'{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":1,"x":[1]}}'
    (back,) = chain.receive(1, answer)
    assert back == type(back)(0, answer + b"\n")
    (to_client,) = chain.receive(
        0, b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}'
    )
    assert to_client.hop == CLIENT and chain.client_initialized


def test_what_the_agent_sends_reaches_the_last_proxy_wrapped_and_the_client_plain() -> (
    None
):
    chain = Router(["p", "agent"])
    update = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","_meta":{"k":1}}}'
    (send,) = chain.receive(1, update)
    assert send.hop == 0
    assert _json(send.data) == {
        "jsonrpc": "2.0",
        "method": "proxy/successor",
        "params": {
            "method": "session/update",
            "params": {"sessionId": "s", "_meta": {"k": 1}},
        },
    }
    plain = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s"}}'
    (send,) = chain.receive(0, plain)
    assert send == type(send)(CLIENT, plain + b"\n")


def test_a_forwarded_request_keeps_its_id_where_free_and_takes_a_fresh_one_where_not() -> (
    None
):
    chain = Router(["p", "agent"])
    first = chain.receive(
        CLIENT, b'{"jsonrpc":"2.0","id":5,"method":"session/new","params":{}}'
    )
    assert (
        first[0].hop == 0 and _json(first[0].data)["id"] == 5
    )  # free on p's hop: kept
    # the agent asks the client something under the same id 5, through p: taken there
    second = chain.receive(
        1, b'{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{}}'
    )
    assert second[0].hop == 0 and _json(second[0].data)["id"] != 5
    # p's own id 5 to the client: free on the client's hop
    third = chain.receive(0, b'{"jsonrpc":"2.0","id":5,"method":"x/y","params":{}}')
    assert (
        third[0].hop == CLIENT
        and third[0].data == b'{"jsonrpc":"2.0","id":5,"method":"x/y","params":{}}\n'
    )
    # its answer goes back to p under 5, byte for byte; then 5 is free again
    answer = b'{"jsonrpc":"2.0","id":5,"result":{}}'
    assert chain.receive(CLIENT, answer)[0].data == answer + b"\n"


def test_cancel_request_goes_where_its_request_went_under_that_hops_id_never_wrapped() -> (
    None
):
    chain = Router(["p", "agent"])
    chain.receive(
        CLIENT, b'{"jsonrpc":"2.0","id":5,"method":"session/new","params":{}}'
    )
    chain.receive(
        CLIENT, b'{"jsonrpc":"2.0","id":6,"method":"session/new","params":{}}'
    )
    chain.receive(
        0,
        b'{"jsonrpc":"2.0","id":5,"method":"proxy/successor","params":{"method":"session/new","params":{}}}',
    )
    sends = chain.receive(
        0, b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}'
    )
    assert [(s.hop, _json(s.data)) for s in sends] == [
        (
            1,
            {
                "jsonrpc": "2.0",
                "method": "$/cancel_request",
                "params": {"requestId": 5},
            },
        )
    ]
    assert (
        chain.receive(
            0,
            b'{"jsonrpc":"2.0","method":"proxy/successor","params":{"method":"$/cancel_request","params":{"requestId":5}}}',
        )
        == []
    )


def test_the_agent_has_no_successor() -> None:
    chain = Router(["p", "agent"])
    (send,) = chain.receive(
        1,
        b'{"jsonrpc":"2.0","id":3,"method":"proxy/successor","params":{"method":"x"}}',
    )
    assert send.hop == 1 and _json(send.data)["error"]["code"] == -32601  # type: ignore[index]


def test_a_proxy_answering_proxy_initialize_without_initializing_its_successor_is_an_error() -> (
    None
):
    chain = Router(["p", "agent"])
    chain.receive(CLIENT, INIT)
    (send,) = chain.receive(
        0, b'{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}'
    )
    assert (
        send.hop == CLIENT
        and "without initializing its successor" in send.data.decode()
    )


def test_an_unreadable_answer_fails_the_call_it_names() -> None:
    chain = Router(["p", "agent"])
    chain.receive(
        1, b'{"jsonrpc":"2.0","id":4,"method":"session/request_permission","params":{}}'
    )
    (send,) = chain.receive(0, b'{"jsonrpc":"2.0","id":4,"result":{"outcome": garbage')
    assert (
        send.hop == 1
        and _json(send.data)["id"] == 4
        and "invalid answer" in send.data.decode()
    )


def test_a_batch_is_answered_as_one_array_once_every_member_was() -> None:
    chain = Router(["agent"])
    sends = chain.receive(
        CLIENT,
        b'[{"jsonrpc":"2.0","id":1,"method":"a","params":{}},{"jsonrpc":"2.0","id":2,"method":"b","params":{}}]',
    )
    assert [s.hop for s in sends] == [0, 0]
    assert chain.receive(0, b'{"jsonrpc":"2.0","id":2,"result":2}') == []
    (send,) = chain.receive(0, b'{"jsonrpc":"2.0","id":1,"result":1}')
    assert send.hop == CLIENT and json.loads(send.data) == [
        {"jsonrpc": "2.0", "id": 2, "result": 2},
        {"jsonrpc": "2.0", "id": 1, "result": 1},
    ]


def test_when_the_chain_fails_every_request_the_client_waits_for_gets_the_error() -> (
    None
):
    chain = Router(["p", "agent"])
    chain.receive(CLIENT, INIT)
    chain.receive(
        CLIENT, b'{"jsonrpc":"2.0","id":"b","method":"session/new","params":{}}'
    )
    sends = chain.fail_chain(ChainFailure("agent exited"))
    assert sorted(str(_json(s.data)["id"]) for s in sends if s.hop == CLIENT) == [
        "1",
        "b",
    ]


def test_proxy_mode_sends_past_the_last_proxy_to_the_client_wrapped() -> None:
    nested = Router(["p"], has_agent=False)
    (send,) = nested.receive(
        CLIENT, b'{"jsonrpc":"2.0","id":1,"method":"proxy/initialize","params":{}}'
    )
    assert _json(send.data)["method"] == "proxy/initialize"
    (send,) = nested.receive(
        0,
        b'{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"initialize","params":{}}}',
    )
    assert send.hop == CLIENT and _json(send.data)["method"] == "proxy/successor"
    (refused,) = Router(["p"], has_agent=False).receive(CLIENT, INIT)
    assert "proxy/initialize" in refused.data.decode()


def test_a_proxy_forwards_what_it_does_not_handle_raw_and_hands_what_it_does() -> None:
    core = ProxyCore({"session/prompt"})
    (write,) = core.receive(
        b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","zz":1}}'
    )
    assert isinstance(write, Write)
    assert (
        write.data
        == b'{"jsonrpc":"2.0","id":1,"method":"proxy/successor","params":{"method":"session/new","params":{"cwd":"/","zz":1}}}\n'
    )
    answer = b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","_meta":{}}}'
    assert core.receive(answer) == [Write(answer + b"\n")]
    (handle,) = core.receive(
        b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{}}'
    )
    assert isinstance(handle, Handle) and handle.ident == 2
    assert core.receive(
        b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}'
    ) == [CancelHandler(2)]


def test_handled_requests_past_max_concurrent_requests_are_refused_until_one_is_answered() -> (
    None
):
    core = ProxyCore({"session/prompt"}, max_handling=2)

    def prompt(ident: int) -> bytes:
        return (
            b'{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{}}' % ident
        )

    assert isinstance(core.receive(prompt(1))[0], Handle)
    assert isinstance(core.receive(prompt(2))[0], Handle)
    (refused,) = core.receive(prompt(3))
    assert isinstance(refused, Write)
    assert _json(refused.data) == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32603,
            "message": "Too many concurrent requests",
            "data": {"maxConcurrentRequests": 2},
        },
    }
    # forwarding and notifications are not counted: they go on
    assert isinstance(
        core.receive(b'{"jsonrpc":"2.0","id":9,"method":"session/new"}')[0], Write
    )
    core.answer(1, b"{}")
    assert isinstance(core.receive(prompt(4))[0], Handle)


def test_a_proxy_initialized_with_initialize_is_terminal_and_says_so() -> None:
    (write,) = ProxyCore(()).receive(INIT)
    assert isinstance(write, Write)
    error = _json(write.data)["error"]
    assert error["code"] == -32600 and "proxy/initialize" in error["message"]  # type: ignore[index]


def test_a_flood_of_bad_lines_from_a_hop_does_not_flood_the_log(caplog: object) -> None:
    import logging

    import pytest

    assert isinstance(caplog, pytest.LogCaptureFixture)
    chain = Router(["agent"])
    with caplog.at_level(logging.WARNING, logger="acp_conductor"):
        for _ in range(1000):
            chain.receive(0, b"not json")
    assert (
        10 <= len(caplog.records) <= 13
    )  # the first 10, then the 100th and the 1,000th


def test_a_handled_requests_outcome_is_its_answer_its_error_or_minus_32603_without_text() -> (
    None
):
    import msgspec
    from acp_core import RequestError, proxy_schema

    schema = proxy_schema()
    core = ProxyCore({"session/prompt"})
    (request,) = core.receive(
        b'{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{}}'
    )
    assert isinstance(request, Handle)
    note = Handle("predecessor", "session/cancel", msgspec.UNSET, None)

    def error(line: bytes | None) -> object:
        assert line is not None
        return _json(line)["error"]

    assert _json(core.returned(request, {"stopReason": "end_turn"}, schema) or b"") == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"stopReason": "end_turn"},
    }
    assert error(core.failed(request, RequestError(-32002, "not found"))) == {
        "code": -32002,
        "message": "not found",
    }
    assert error(core.failed(request, KeyError("secret text"))) == {
        "code": -32603,
        "message": "Internal error: KeyError",
    }
    assert error(core.failed(request, None)) == {
        "code": -32800,
        "message": "Request cancelled",
    }
    assert core.failed(note, KeyError("x")) is None  # a notification: nothing to answer
    assert core.returned(note, None, schema) is None
