"""acp_inspect: a recording, validating proxy and conformance checks for ACP agents and clients.

``python -m acp_inspect proxy [--trace FILE] -- AGENT_CMD ...`` runs in place
of an agent, forwards every byte both ways and reports each rule of the spec
broken by either side; ``python -m acp_inspect check -- AGENT_CMD ...`` drives
an agent through a conformance suite; ``python -m acp_inspect check-client --
CLIENT_CMD ... {agent} ...`` is the scripted agent a client launches, and
drives the client through its suite; ``python -m acp_inspect view TRACE``
renders a recorded trace as an HTML timeline.

The rules and the inspector have no I/O: feed lines, get findings::

    >>> from acp_inspect import Inspector
    >>> inspector = Inspector()
    >>> [f.rule for f in inspector.feed("to_agent", 0.0, b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}')]
    ['before-initialize']
"""

from ._features import AgentFeatures, ClientFeatures
from ._inspector import DEFAULT_MAX_LINE, Finding, Inspector, LineSplitter
from ._message import Direction, Malformed, Message, parse_line
from ._spec import REFS, SpecRef
from ._state import ConnectionState, Pending, Turn
from .rules import DEFAULT_RULES, Rule

__all__ = [
    "DEFAULT_MAX_LINE",
    "DEFAULT_RULES",
    "REFS",
    "AgentFeatures",
    "ClientFeatures",
    "ConnectionState",
    "Direction",
    "Finding",
    "Inspector",
    "LineSplitter",
    "Malformed",
    "Message",
    "Pending",
    "Rule",
    "SpecRef",
    "Turn",
    "parse_line",
]
