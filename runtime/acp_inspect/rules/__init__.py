"""The proxy's rules: one requirement of the spec each, as objects without I/O.

A rule looks at one :class:`~acp_inspect.Message` and the
:class:`~acp_inspect.ConnectionState` *before* that message is recorded, and
returns a one-line explanation when the message breaks its requirement
(``None`` otherwise).  :data:`DEFAULT_RULES` is what the inspector runs.
"""

from __future__ import annotations

from ._base import ALL_MESSAGES, Breach, Rule, Scope, scope
from .before_initialize import BeforeInitialize
from .cancelled_stop_reason import CancelledStopReason
from .permission_not_cancelled import PermissionNotCancelled
from .relative_path import RelativePath
from .replay_on_resume import ReplayOnResume
from .terminal_auth import TerminalAuthNotAdvertised
from .tool_after_cancel import ToolAfterCancel
from .unadvertised_agent_method import UnadvertisedAgentMethod
from .unadvertised_client_method import UnadvertisedClientMethod
from .unadvertised_session_feature import UnadvertisedSessionFeature
from .unknown_response import UnknownResponseId
from .unknown_session import UnknownSession
from .update_after_turn import UpdateAfterTurn

__all__ = [
    "ALL_MESSAGES",
    "DEFAULT_RULES",
    "BeforeInitialize",
    "Breach",
    "CancelledStopReason",
    "PermissionNotCancelled",
    "RelativePath",
    "ReplayOnResume",
    "Rule",
    "Scope",
    "TerminalAuthNotAdvertised",
    "ToolAfterCancel",
    "UnadvertisedAgentMethod",
    "UnadvertisedClientMethod",
    "UnadvertisedSessionFeature",
    "UnknownResponseId",
    "UnknownSession",
    "UpdateAfterTurn",
    "scope",
]

#: The rules :class:`~acp_inspect.Inspector` runs by default, in this order.
DEFAULT_RULES: tuple[Rule, ...] = (
    BeforeInitialize(),
    UnknownResponseId(),
    UnknownSession(),
    UnadvertisedAgentMethod(),
    UnadvertisedClientMethod(),
    UnadvertisedSessionFeature(),
    TerminalAuthNotAdvertised(),
    RelativePath(),
    CancelledStopReason(),
    PermissionNotCancelled(),
    ToolAfterCancel(),
    UpdateAfterTurn(),
    ReplayOnResume(),
)
