"""acp_core.session: what a program does with a session's updates, no connection needed.

Beside the engine, not part of it: the builders of the ``session/update``
payloads an agent sends (:func:`agent_text`, :func:`tool_call`, :func:`plan`,
...), :class:`SessionTranscript` (a session's live state rebuilt from the
updates a client receives), :class:`ToolCallTracker` (an agent's tool calls,
the updates to send and their state) and :class:`PermissionBroker`
(``session/request_permission`` for a tool call, its answer read).  They
read the generated ``acp_schema`` modules and nothing of the engine; the
engine imports nothing from here.

The same names are :mod:`acp_core`'s and every adapter's
(``acp_trio.agent_text is acp_core.session.agent_text``)::

    from acp_core.session import SessionTranscript, agent_text, notification

    transcript = SessionTranscript()
    transcript.apply(notification("s1", agent_text("Hello", message_id="m1")))
"""

from ._blocks import (
    diff,
    embedded_blob_resource,
    embedded_text_resource,
    resource_link,
    terminal,
    text_block,
    tool_content,
)
from ._builders import (
    agent_message,
    agent_text,
    agent_thought,
    notification,
    plan,
    plan_entry,
    thought_text,
    tool_call,
    tool_call_update,
    usage_update,
    user_message,
    user_text,
)
from ._permissions import Permission, PermissionBroker, default_permission_options
from ._states import PlanState, SessionInfoState, ToolCallState
from ._tool_calls import ToolCallTracker
from ._transcript import SessionTranscript, TranscriptMessage

__all__ = [
    "Permission",
    "PermissionBroker",
    "PlanState",
    "SessionInfoState",
    "SessionTranscript",
    "ToolCallState",
    "ToolCallTracker",
    "TranscriptMessage",
    "agent_message",
    "agent_text",
    "agent_thought",
    "default_permission_options",
    "diff",
    "embedded_blob_resource",
    "embedded_text_resource",
    "notification",
    "plan",
    "plan_entry",
    "resource_link",
    "terminal",
    "text_block",
    "thought_text",
    "tool_call",
    "tool_call_update",
    "tool_content",
    "usage_update",
    "user_message",
    "user_text",
]
