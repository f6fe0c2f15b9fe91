"""What the inspector says of a peer on a newer spec and of a multi-version
``initialize`` (no event loop: lines in, findings out)."""

from __future__ import annotations

from _inspect_wire import Wire, rules


def test_an_unknown_variant_is_reported_as_a_peer_on_a_newer_spec_not_a_must() -> None:
    w = Wire()
    found = w.update(kind="future_kind")
    assert rules(found) == ["newer-spec"]
    assert found[0].level == "NOTE" and not found[0].is_must
    assert "agent is a peer on a newer spec" in found[0].text
    assert "'future_kind' at $.update.sessionUpdate" in found[0].text
    # the codec stays exact: any other fault is still a MUST
    found = w.agent(
        method="session/update",
        params={"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk"}},
    )
    assert rules(found) == ["schema"] and found[0].is_must


def test_each_unknown_kind_is_reported_once() -> None:
    w = Wire()
    assert rules(w.update(kind="future_kind")) == ["newer-spec"]
    assert w.update(kind="future_kind") == []
    assert rules(w.update(kind="other_kind")) == ["newer-spec"]


def test_an_initialize_fitting_only_an_older_version_is_judged_by_it() -> None:
    w = Wire(init=False)
    # names v2, but lacks the v2 schema's required `info`: valid for v1 only
    params = {"protocolVersion": 2, "clientCapabilities": {}}
    found = w.client(id=1, method="initialize", params=params)
    assert rules(found) == ["offer"]
    assert found[0].level == "SHOULD" and not found[0].is_must
    assert "fits v1's schema, not v2's" in found[0].text
    assert "`info`" in found[0].text
    # valid under each version it offers: no finding
    w = Wire(init=False)
    info = {"name": "c", "version": "1"}
    params = {
        "protocolVersion": 2,
        "clientCapabilities": {},
        "capabilities": {},
        "clientInfo": info,
        "info": info,
    }
    assert w.client(id=1, method="initialize", params=params) == []
