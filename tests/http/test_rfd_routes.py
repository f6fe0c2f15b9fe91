"""The RFD's routing table on a real server (hypercorn, HTTP/2), message by message."""

from __future__ import annotations

from typing import Any

import msgspec
from _raw import INIT, new_session, prompt, raw_client, request


def is_answer(rid: int) -> Any:
    return lambda m: m.get("id") == rid and "method" not in m


def error_of(response: Any) -> dict[str, Any]:
    body = msgspec.json.decode(response.content)
    assert body["jsonrpc"] == "2.0"
    return body["error"]


async def test_initialize_answers_200_with_the_json_result_and_an_acp_connection_id(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        response = await raw.post(INIT)
        assert response.status_code == 200
        assert response.http_version == "HTTP/2"
        assert response.headers["content-type"] == "application/json"
        assert response.headers["acp-connection-id"]
        body = msgspec.json.decode(response.content)
        assert body["id"] == 0 and body["result"]["protocolVersion"] == 1


async def test_other_posts_answer_202_and_session_new_is_answered_on_the_connection_stream(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        stream = await raw.stream(cid)
        response = await raw.post(new_session(1), cid)
        assert response.status_code == 202 and response.content == b""
        answer = await stream.next()
        assert answer["id"] == 1 and answer["result"]["sessionId"]


async def test_a_prompt_streams_updates_a_permission_request_and_its_answer_on_the_session_stream(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        connection_stream = await raw.stream(cid)
        await raw.post(new_session(1), cid)
        sid = (await connection_stream.next())["result"]["sessionId"]
        session_stream = await raw.stream(cid, sid)
        assert (await raw.post(prompt(2, sid, "hi there"), cid, sid)).status_code == 202
        seen = await session_stream.until(
            lambda m: m.get("method") == "session/request_permission"
        )
        chunks = [
            m["params"]["update"] for m in seen if m.get("method") == "session/update"
        ]
        assert [
            c["content"]["text"]
            for c in chunks
            if c["sessionUpdate"] == "agent_message_chunk"
        ] == ["hi ", "there "]
        ask = seen[-1]
        assert ask["params"]["sessionId"] == sid
        # the client's answer: a POST (202), no session header needed (the official Python SDK sends none)
        answer = {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "allow"}},
        }
        assert (await raw.post(answer, cid)).status_code == 202
        rest = await session_stream.until(is_answer(2))
        assert rest[-1]["result"]["stopReason"] == "end_turn"
        assert rest[0]["params"]["update"]["status"] == "completed"


async def test_a_cancel_is_202_and_the_prompt_answers_cancelled_on_the_session_stream(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        connection_stream = await raw.stream(cid)
        await raw.post(new_session(1), cid)
        sid = (await connection_stream.next())["result"]["sessionId"]
        session_stream = await raw.stream(cid, sid)
        await raw.post(prompt(2, sid, "slow a b c d e f g"), cid, sid)
        await session_stream.next()  # the first word
        cancel = {
            "jsonrpc": "2.0",
            "method": "session/cancel",
            "params": {"sessionId": sid},
        }
        assert (await raw.post(cancel, cid, sid)).status_code == 202
        rest = await session_stream.until(is_answer(2))
        assert rest[-1]["result"]["stopReason"] == "cancelled"


async def test_resume_on_a_new_connection_with_session_load_replays_on_the_session_stream(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        connection_stream = await raw.stream(cid)
        await raw.post(new_session(1), cid)
        sid = (await connection_stream.next())["result"]["sessionId"]
        session_stream = await raw.stream(cid, sid)
        await raw.post(prompt(2, sid, "remember nopermission"), cid, sid)
        await session_stream.until(is_answer(2))
        assert (
            await raw.post(b"", cid, **{"content-type": "application/json"})
        ).status_code == 400
        response = await raw.http.delete(raw.url, headers={"acp-connection-id": cid})
        assert response.status_code == 202
        # the RFD's resume flow: new connection, both streams, then session/load
        new = await raw.initialize()
        new_connection_stream = await raw.stream(new)
        new_session_stream = await raw.stream(new, sid)
        load = request(2, "session/load", sessionId=sid, cwd="/", mcpServers=[])
        assert (await raw.post(load, new, sid)).status_code == 202
        replay = await new_session_stream.next()
        assert replay["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        assert replay["params"]["update"]["content"]["text"] == "remember nopermission"
        assert (await new_connection_stream.next())["id"] == 2
        await raw.post(prompt(3, sid, "again nopermission"), new, sid)
        assert (await new_session_stream.until(is_answer(3)))[-1]["result"][
            "stopReason"
        ] == "end_turn"


async def test_a_session_the_connection_did_not_create_or_load_is_refused_409(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        owner = await raw.initialize()
        stream = await raw.stream(owner)
        await raw.post(new_session(1), owner)
        sid = (await stream.next())["result"]["sessionId"]
        other = await raw.initialize()
        response = await raw.post(prompt(2, sid, "steal"), other, sid)
        assert response.status_code == 409
        assert error_of(response)["code"] == -32600 and "id" in msgspec.json.decode(
            response.content
        )
        # a stream for it carries nothing of it: the connection owns nothing
        cancel = {
            "jsonrpc": "2.0",
            "method": "session/cancel",
            "params": {"sessionId": sid},
        }
        assert (await raw.post(cancel, other, sid)).status_code == 409


async def test_unknown_connection_ids_are_404_with_a_jsonrpc_error_body(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        response = await raw.post(new_session(7), "no-such-connection")
        assert response.status_code == 404
        body = msgspec.json.decode(response.content)
        assert body["id"] == 7 and body["error"]["code"] == -32600
        stream = await raw.stream("no-such-connection")
        assert stream.status == 404 and b'"error"' in stream.body
        response = await raw.http.delete(raw.url, headers={"acp-connection-id": "nope"})
        assert response.status_code == 404 and error_of(response)


async def test_missing_or_misplaced_ids_are_400(url: str) -> None:
    async with raw_client(url) as raw:
        assert (await raw.post(new_session(1))).status_code == 400  # no connection id
        cid = await raw.initialize()
        assert (
            await raw.post(INIT, cid)
        ).status_code == 400  # initialize on a connection
        no_header = prompt(2, "s", "x")
        assert "Acp-Session-Id" in error_of(await raw.post(no_header, cid))["message"]
        assert (await raw.post(prompt(3, "a", "x"), cid, "b")).status_code == 400
        response = await raw.http.delete(raw.url)
        assert response.status_code == 400
        response = await raw.http.get(raw.url, headers={"accept": "text/event-stream"})
        assert response.status_code == 400


async def test_content_negotiation_415_406_and_batches_501(url: str) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        response = await raw.post(new_session(1), cid, **{"content-type": "text/plain"})
        assert response.status_code == 415 and error_of(response)
        response = await raw.http.get(raw.url, headers={"acp-connection-id": cid})
        assert response.status_code == 406
        response = await raw.post([new_session(1)], cid)
        assert response.status_code == 501 and error_of(response)["code"] == -32600
        response = await raw.post(b"{not json", cid)
        assert response.status_code == 400 and error_of(response)["code"] == -32700


async def test_a_stream_has_one_reader_409_and_delete_ends_the_streams(
    url: str,
) -> None:
    async with raw_client(url) as raw:
        cid = await raw.initialize()
        stream = await raw.stream(cid)
        second = await raw.stream(cid)
        assert second.status == 409
        response = await raw.http.delete(raw.url, headers={"acp-connection-id": cid})
        assert response.status_code == 202
        try:
            message = await stream.next(wait=10)
        except Exception:  # the stream ended (EndOfStream)
            message = None
        assert message is None
        assert (await raw.post(new_session(1), cid)).status_code == 404
