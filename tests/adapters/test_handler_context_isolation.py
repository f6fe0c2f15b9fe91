"""Handlers do not share context: a ``ContextVar`` a notification handler sets
is not seen by the request handlers after it, on either adapter (issue 29,
item 7).  Each request handler starts from the connection's own context, as
a task started by ``serve_agent`` would; notification handlers, run one at a
time in the wire's order, share theirs."""

from __future__ import annotations

from _raw_peer import RawPeer

ROUNDS = 5


def test_a_context_variable_set_by_a_notification_handler_is_not_seen_by_the_next_request_handler(
    peer: RawPeer,
) -> None:
    peer.initialize()
    seen = []
    for round_ in range(ROUNDS):
        peer.notify("_context/set", {"value": f"notification {round_}"})
        ident = peer.request("_context/get", {})
        seen.append(peer.answer_of(ident)["result"]["value"])
    assert seen == [None] * ROUNDS
