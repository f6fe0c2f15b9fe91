"""What depends only on the schema is built once per process, not per connection.

A server holds thousands of idle connections (issue 29, item 8): each one's
engine takes the process's :class:`acp_core.Schema` of its version and side
(its method tables, wire names, handler index), and its rules object the
sets of the default rules tables, instead of building its own copies.
"""

from __future__ import annotations

import pytest
from acp_core import AgentRules, ClientRules, Engine, Schema
from acp_core._handlers import handler_names
from acp_core._schema import supported_versions
from acp_core._table import MethodRule
from acp_schema import v1

VERSIONS = supported_versions()


@pytest.mark.parametrize("side", ["agent", "client"])
def test_two_connections_of_one_version_share_its_schema(side: str) -> None:
    def engine() -> Engine:
        rules = AgentRules([1]) if side == "agent" else ClientRules([1])
        return Engine(rules)

    first, second = engine(), engine()
    assert first.schema is second.schema
    assert first.schema is Schema.load(1, side)  # type: ignore[arg-type]
    # the handler index is the schema's too
    assert first.by_handler is second.by_handler is first.schema.by_handler


@pytest.mark.parametrize("version", VERSIONS)
def test_a_version_negotiated_is_the_processs_schema_of_it(version: int) -> None:
    engine = Engine(AgentRules([1, *VERSIONS]))
    engine.speak(version)
    assert engine.schema is Schema.load(version, "agent")
    assert Schema.load(version, "agent", unstable=True) is Schema.load(
        version, "agent", unstable=True
    )
    assert Schema.load(version, "agent") is not Schema.load(version, "client")


def test_the_schemas_handler_index_finds_the_peers_methods() -> None:
    schema = Schema.load(1, "agent")
    assert schema.find_outgoing("session_update") is v1.CLIENT_METHODS["session/update"]
    assert schema.find_outgoing("session_prompt") is None  # our own, not the peer's
    for method in schema.outgoing.values():
        assert schema.find_outgoing(method.handler) is method


@pytest.mark.parametrize("rules", [AgentRules, ClientRules])
def test_the_default_tables_sets_are_built_once(
    rules: type[AgentRules] | type[ClientRules],
) -> None:
    first, second = rules([1]), rules([1])
    assert first.checked is second.checked
    assert first.watched_notifications is second.watched_notifications


def test_a_rules_object_on_a_table_of_its_own_reads_that_table() -> None:
    table = {"session_prompt": MethodRule(check=True)}
    rules = AgentRules([1], table=table)
    assert rules.checked == frozenset({"session_prompt"})
    assert rules.watched_notifications == frozenset()


def test_the_handler_names_a_bind_checks_are_built_once_per_schema() -> None:
    schema = Schema.load(1, "agent")
    assert handler_names(schema) is handler_names(schema)
    assert "session_prompt" in handler_names(schema).own
