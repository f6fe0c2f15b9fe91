"""The names of :mod:`acp_core` every adapter (``acp_trio``, ``acp_asyncio``)
re-exports as its own: the errors and their codes, :class:`~acp_core.Limits`,
the session-update builders, :class:`~acp_core.SessionTranscript` and its
records, :class:`~acp_core.UnknownVariant` (a peer on a newer spec), ``__version__``.  Part of the adapter contract (:mod:`acp_core.adapter`); an adapter does::

    from acp_core import reexports
    from acp_core.reexports import *
    __all__ += reexports.__all__
"""

from ._errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    CapabilityError,
    ConnectionClosed,
    ProtocolVersionError,
    RequestError,
    VersionUnavailableError,
)
from ._limits import DEFAULT_MAX_MESSAGE_SIZE, Limits
from ._newer import UnknownVariant, UnknownVariantError
from ._outgoing import OutgoingMessageError
from ._proxy import PeerProxy
from ._sides import Offer
from ._version import __version__
from .session import (
    Permission,
    PermissionBroker,
    PlanState,
    SessionInfoState,
    SessionTranscript,
    ToolCallState,
    ToolCallTracker,
    TranscriptMessage,
    agent_message,
    agent_text,
    agent_thought,
    default_permission_options,
    diff,
    embedded_blob_resource,
    embedded_text_resource,
    notification,
    plan,
    plan_entry,
    resource_link,
    terminal,
    text_block,
    thought_text,
    tool_call,
    tool_call_update,
    tool_content,
    usage_update,
    user_message,
    user_text,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "CapabilityError",
    "ConnectionClosed",
    "Limits",
    "Offer",
    "OutgoingMessageError",
    "PeerProxy",
    "Permission",
    "PermissionBroker",
    "PlanState",
    "ProtocolVersionError",
    "RequestError",
    "SessionInfoState",
    "SessionTranscript",
    "ToolCallState",
    "ToolCallTracker",
    "TranscriptMessage",
    "UnknownVariant",
    "UnknownVariantError",
    "VersionUnavailableError",
    "__version__",
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
