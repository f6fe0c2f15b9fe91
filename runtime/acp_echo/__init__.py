"""An ACP agent that echoes its prompts: ``python -m acp_echo [--state-dir DIR] [--unstable]``.

A stdio agent any ACP client can launch (``acp-client``, the
official SDK's ``spawn_agent_process``, an editor).  It speaks protocol v1 and v2 and exercises most of
what a real agent sends:

* ``session/new``, ``session/load`` (replays the history: v2 as
  ``user_message`` / ``agent_message`` upserts with a ``messageId``, v1 as
  chunks), ``session/resume``, ``session/close``, ``additionalDirectories``,
  stdio and http MCP servers (recorded, echoed in the responses' ``_meta``
  and in the reply text; no server is started);
* a prompt streams a plan, ``agent_message_chunk``s with a ``messageId``, a
  tool call that asks ``session/request_permission``, its updates, a
  ``usage_update``, and ends with ``end_turn``;
* a prompt containing the word "wait" starts a tool call and runs until the
  client sends ``session/cancel``; the runtime then answers ``cancelled``;
* ``session/list`` (paged), ``session/delete``, config options ``mode`` and
  ``model`` (``session/set_config_option``; v1 also ``modes`` and
  ``session/set_mode``): :mod:`acp_echo.options`.

Sessions live in memory (load and resume work within the process) and, with
``--state-dir DIR``, in ``DIR/<sessionId>.jsonl`` so they survive a restart
(append-only: one line per setup change and per turn; see ``Store``).
With ``--unstable`` it speaks the schema's unstable surface (the same
classes, the ``*_UNSTABLE`` method tables) and also serves ``session/fork``
(a new session with a copy of the history).
Logs go to stderr; stdout carries the protocol only.

Written against the generated types (mypy --strict, pyright strict): one
class per protocol version serves it, ``EchoAgentV1(v1.Agent)`` and
``EchoAgentV2(v2.Agent)`` (subclassing the generated Protocol has the type
checker check each handler; a method left out is answered -32601; a
handler's name is the method's wire name with ``/`` as ``_``,
``session/new`` -> ``session_new``), over ``EchoCore``, which keeps the
sessions and the turn's script whatever the version.
"""

from acp_echo.agent import (
    AGENT_NAME,
    AGENT_VERSION,
    EchoAgentV1,
    EchoAgentV1Unstable,
    EchoCore,
)
from acp_echo.agent_v2 import EchoAgentV2, EchoAgentV2Unstable
from acp_echo.store import Session, Store

__all__ = [
    "AGENT_NAME",
    "AGENT_VERSION",
    "EchoAgentV1",
    "EchoAgentV1Unstable",
    "EchoAgentV2",
    "EchoAgentV2Unstable",
    "EchoCore",
    "Session",
    "Store",
]
