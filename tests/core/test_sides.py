"""The sides' shared rules (acp_core.AgentSide / ClientSide, PeerProxy,
normalize_offer), driven with plain calls: no event loop, no I/O.

A bare connection class stands in for an adapter's: it has an engine and
records what the peer proxy asks it to send.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

import msgspec
import pytest
from acp_core import (
    NEED_DATA,
    AgentRules,
    ClientRules,
    Engine,
    IncomingRequest,
    MethodSpec,
    ProtocolVersionError,
    VersionChosen,
)
from acp_core._proxy import PeerProxy
from acp_core._sides import AgentSide, ClientSide, normalize_offer
from acp_schema import v1
from acp_schema import v2_alpha0 as v2


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine that never suspends (the bare connection's calls)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("suspended")


class Bare:
    """An adapter's connection, minus the I/O: calls are recorded."""

    def __init__(self, rules: AgentRules | ClientRules) -> None:
        self.engine = Engine(rules)
        self.rules = rules
        self.sent: list[tuple[str, str, Any]] = []

    async def request(self, method: MethodSpec, params: Any) -> Any:
        self.sent.append(("request", method.name, params))
        return "answer"

    async def notify(self, method: MethodSpec, params: Any) -> None:
        self.sent.append(("notify", method.name, params))

    async def ext_request(self, name: str, params: Any) -> Any:
        self.sent.append(("ext_request", name, params))
        return {"ok": True}

    async def ext_notify(self, name: str, params: Any) -> None:
        self.sent.append(("ext_notify", name, params))


class AgentConn(AgentSide[Any], Bare):
    rules: AgentRules

    def __init__(self, offer: Any) -> None:
        offers = normalize_offer(offer, "agent")
        super().__init__(AgentRules(offers))
        self._init_side(offers)


class ClientConn(ClientSide[Any], Bare):
    rules: ClientRules

    def __init__(self, offer: Any) -> None:
        offers = normalize_offer(offer, "client")
        super().__init__(ClientRules(offers))
        self._init_side(offers)


class AgentV1:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, p: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)


class AgentV2(AgentV1):
    pass


class ClientV1:
    def __init__(self, conn: Any) -> None:
        self.conn = conn


class ClientV2(ClientV1):
    acp_schema = v2  # the 2.0.0-alpha.0 draft: the requests below are its


def line(obj: Any) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", **obj}) + b"\n"


def events(engine: Engine) -> list[Any]:
    out = []
    while (event := engine.next_event()) is not NEED_DATA:
        out.append(event)
    return out


def receive_initialize(conn: AgentConn, version: int) -> list[Any]:
    """The adapter's part: feed ``initialize``, act on VersionChosen."""
    init = {"id": 0, "method": "initialize", "params": {"protocolVersion": version}}
    conn.engine.receive_data(line(init))
    (chosen,) = events(conn.engine)
    assert isinstance(chosen, VersionChosen)
    conn.version_chosen(chosen.version)
    return events(conn.engine)


def test_an_offer_is_one_factory_for_v1_or_a_map_of_versions() -> None:
    assert normalize_offer(AgentV1) == {1: AgentV1}
    assert normalize_offer({1: AgentV1, 2: AgentV2}) == {1: AgentV1, 2: AgentV2}


def test_an_empty_or_unknown_offer_fails_before_any_connection_exists() -> None:
    with pytest.raises(ValueError, match="at least one"):
        normalize_offer({})
    with pytest.raises(ValueError, match="unsupported protocol version 99"):
        normalize_offer({99: AgentV1}, "client")


def test_the_agent_side_builds_the_agent_object_for_the_version_the_engine_chose() -> (
    None
):
    conn = AgentConn({1: AgentV1, 2: AgentV2})
    assert conn.agent is None and conn.protocol_version is None
    assert conn.init_state == "waiting"
    (init,) = receive_initialize(conn, 1)
    assert (
        isinstance(init, IncomingRequest) and init.running.method.name == "initialize"
    )
    agent: Any = conn.agent
    assert type(agent) is AgentV1 and agent.conn is conn
    assert conn.protocol_version == 1
    assert conn.negotiate(2) == 2 and conn.negotiate(7) == 2  # offered, else latest


def test_an_agent_factory_that_raises_answers_initialize_32603_with_a_one_line_cause(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(conn: Any) -> object:
        raise RuntimeError("no agent\ntoday " + "x" * 1000)

    conn = AgentConn(broken)
    assert receive_initialize(conn, 1) == []  # answered here, never run
    (reply,) = [msgspec.json.decode(b) for b in conn.engine.take_outbox()]
    assert reply["id"] == 0 and reply["error"]["code"] == -32603
    message = reply["error"]["message"]
    assert message.startswith(
        "Internal error: test_an_agent_factory_that_raises_answers_initialize_32603"
        "_with_a_one_line_cause.<locals>.broken() raised RuntimeError: no agent today x"
    )
    assert "\n" not in message and len(message) <= 256  # max_error_text
    assert "Traceback" in caplog.text and "failed to build the handler" in caplog.text
    assert conn.agent is None and conn.init_state == "waiting"  # may be retried


def test_an_agent_without_initialize_is_still_answered_32601() -> None:
    conn = AgentConn(lambda conn: object())
    assert receive_initialize(conn, 1) == []
    (reply,) = [msgspec.json.decode(b) for b in conn.engine.take_outbox()]
    assert reply["error"] == {"code": -32601, "message": "Method not found: initialize"}


def test_the_checked_views_raise_unless_the_connection_speaks_that_version() -> None:
    conn = AgentConn({1: AgentV1, 2: AgentV2})
    receive_initialize(conn, 1)
    assert conn.client_v1 is conn.client
    with pytest.raises(ProtocolVersionError, match="speaks protocol v1, not v2"):
        conn.client_v2  # noqa: B018


def test_the_peer_proxy_sends_requests_and_notifications_by_handler_name() -> None:
    conn = ClientConn(ClientV1)
    params = v1.NewSessionRequest(cwd="/", mcp_servers=[])
    assert run(conn.agent.session_new(params)) == "answer"
    cancel = v1.CancelNotification(session_id="s1")
    assert run(conn.agent.session_cancel(cancel)) is None
    assert run(conn.agent.ext_method("_x/y", {"a": 1})) == {"ok": True}
    assert run(conn.agent.ext_notification("_x/z", {})) is None
    assert conn.sent == [
        ("request", "session/new", params),
        ("notify", "session/cancel", cancel),
        ("ext_request", "_x/y", {"a": 1}),
        ("ext_notify", "_x/z", {}),
    ]


def test_the_peer_proxy_keeps_each_call_until_the_version_changes() -> None:
    conn = ClientConn(ClientV1)
    proxy = conn.agent
    assert isinstance(proxy, PeerProxy)
    first = proxy.session_new
    assert proxy.session_new is first  # kept: later lookups skip __getattr__
    conn._version_switched()  # pyright: ignore[reportPrivateUsage]
    assert proxy.session_new is not first


def test_an_unknown_handler_name_is_an_attribute_error_naming_the_version() -> None:
    conn = ClientConn(ClientV1)
    with pytest.raises(AttributeError, match="no method 'sesion_new' in protocol v1"):
        conn.agent.sesion_new  # noqa: B018
    assert not hasattr(conn.agent, "__deepcopy__")  # dunders are no methods


def test_the_client_side_rebuilds_its_client_object_when_the_agent_answers_another_version() -> (
    None
):
    conn = ClientConn({1: ClientV1, 2: ClientV2})
    assert type(conn.client) is ClientV2  # built for the highest version offered
    assert conn.engine.schema.version == 2
    conn.version_chosen(1)
    assert type(conn.client) is ClientV1 and conn.client.conn is conn


def test_a_multi_version_initialize_sends_one_message_with_each_versions_fields() -> (
    None
):
    conn = ClientConn({1: ClientV1, 2: ClientV2})
    caps = v1.ClientCapabilities(terminal=True)
    run(
        conn.initialize(
            v1.InitializeRequest(protocol_version=1, client_capabilities=caps),
            v2.InitializeRequest(protocol_version=2),
        )
    )
    ((kind, method, payload),) = conn.sent
    assert (kind, method) == ("request", "initialize")
    sent = msgspec.json.decode(payload)
    assert sent["protocolVersion"] == 2
    assert sent["clientCapabilities"]["terminal"] is True


def test_capabilities_advertised_by_none_are_the_versions_defaults_typed_not_any() -> (
    None
):
    conn = AgentConn({1: AgentV1, 2: AgentV2})
    assert conn.client_capabilities is None  # before initialize
    receive_initialize(conn, 1)  # a client that advertised nothing
    assert conn.client_capabilities == v1.ClientCapabilities()
    # the public properties and initialize() name the versions' types, not Any
    for cls, name in [
        (AgentSide, "client_capabilities"),
        (ClientSide, "agent_capabilities"),
        (ClientSide, "client_capabilities"),
        (ClientSide, "init_response"),
    ]:
        annotation = getattr(cls, name).fget.__annotations__["return"]
        assert "Any" not in annotation and "v1." in annotation, (name, annotation)
    assert "Any" not in ClientSide.initialize.__annotations__["return"]
