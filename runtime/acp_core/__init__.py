"""acp_core: the Agent Client Protocol as state, without I/O.

Everything of ACP that is not reading, writing or waiting: the JSON-RPC
envelope and its framing, correlation, batches, ordering, the initialize and
version rules of both sides, capability and path rules, session-cancel
bookkeeping and the bounds of :class:`Limits`; and, re-exported from their
own namespace beside the engine (:mod:`acp_core.session`), the helpers that
need no connection (builders of session updates, :class:`SessionTranscript`,
:class:`ToolCallTracker`, :class:`PermissionBroker`).  It
needs ``msgspec`` and ``acp_schema`` only: no trio, no asyncio.  The runtimes
(``acp_trio``, ``acp_asyncio``) are thin adapters over it::

    import acp_core
    from acp_schema import v1

    update = acp_core.agent_text("Hello", message_id="m1")
    transcript = acp_core.SessionTranscript()
    transcript.apply(acp_core.notification("s1", update))

An adapter builds on :mod:`acp_core.adapter`; a tool that reads a connection
from outside (``acp_inspect``) takes the same rules by their public names:
the capability rules (:class:`AgentCallChecks`, :func:`check_client_call`,
:func:`agent_capabilities`, :func:`client_capabilities`,
:func:`is_absolute_anywhere`) and the schema modules (:func:`protocol_module`,
:func:`fitting_draft`).  Nothing outside ``acp_core`` imports a private
``acp_core._x`` module.
"""

from ._capabilities import (
    CLIENT_CHECKED,
    NONE_ADVERTISED,
    AgentCallChecks,
    agent_capabilities,
    check_client_call,
    client_capabilities,
    is_absolute_anywhere,
)
from ._engine import Engine
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
from ._flow import NOTIFICATIONS, WRITE_BUFFER
from ._framing import LineBuffer, Oversized, sniff_oversized
from ._initialize import InitializeOffer, merge_initialize
from ._jsonrpc import (
    BatchTooLong,
    Envelope,
    ErrorObject,
    Id,
    InvalidMessage,
    OversizedVerdict,
    Routing,
    TooDeep,
    decode_envelope,
    decode_routing,
    encode_error,
    encode_id,
    encode_notification,
    encode_request,
    encode_result,
    judge_oversized,
    nested_deeper,
    split_batch,
)
from ._limits import DEFAULT_MAX_MESSAGE_SIZE, DEFAULT_MAX_NESTING_DEPTH, Limits
from ._outgoing import OutgoingMessageError, set_check_outgoing_default
from ._proxy import Caller, PeerProxy
from ._records import (
    END_OF_INPUT,
    NEED_DATA,
    ORIGIN_NOTIFICATION,
    ORIGIN_REQUEST,
    ORIGIN_USER,
    PAUSED,
    Call,
    Cancellable,
    CloseConnection,
    IncomingRequest,
    QueuedNotification,
    Running,
    Settable,
    VersionChosen,
)
from ._rules import AgentRules, ClientRules
from ._schema import (
    MethodSpec,
    Schema,
    SchemaModule,
    fitting_draft,
    protocol_module,
    supported_versions,
)
from ._seam import DEFAULT_SEAM_CAPACITY, BytePipe, SeamEnd, seam_ends
from ._sides import AgentSide, AgentT, ClientSide, ClientT, Offer, normalize_offer
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
    "CLIENT_CHECKED",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_MAX_NESTING_DEPTH",
    "DEFAULT_SEAM_CAPACITY",
    "END_OF_INPUT",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "NEED_DATA",
    "NONE_ADVERTISED",
    "NOTIFICATIONS",
    "ORIGIN_NOTIFICATION",
    "ORIGIN_REQUEST",
    "ORIGIN_USER",
    "PARSE_ERROR",
    "PAUSED",
    "REQUEST_CANCELLED",
    "WRITE_BUFFER",
    "AgentCallChecks",
    "AgentRules",
    "AgentSide",
    "AgentT",
    "BatchTooLong",
    "BytePipe",
    "Call",
    "Caller",
    "Cancellable",
    "CapabilityError",
    "ClientRules",
    "ClientSide",
    "ClientT",
    "CloseConnection",
    "ConnectionClosed",
    "Engine",
    "Envelope",
    "ErrorObject",
    "Id",
    "IncomingRequest",
    "InitializeOffer",
    "InvalidMessage",
    "Limits",
    "LineBuffer",
    "MethodSpec",
    "Offer",
    "OutgoingMessageError",
    "Oversized",
    "OversizedVerdict",
    "PeerProxy",
    "Permission",
    "PermissionBroker",
    "PlanState",
    "ProtocolVersionError",
    "QueuedNotification",
    "RequestError",
    "Routing",
    "Running",
    "Schema",
    "SchemaModule",
    "SeamEnd",
    "SessionInfoState",
    "SessionTranscript",
    "Settable",
    "TooDeep",
    "ToolCallState",
    "ToolCallTracker",
    "TranscriptMessage",
    "VersionChosen",
    "VersionUnavailableError",
    "__version__",
    "agent_capabilities",
    "agent_message",
    "agent_text",
    "agent_thought",
    "check_client_call",
    "client_capabilities",
    "decode_envelope",
    "decode_routing",
    "default_permission_options",
    "diff",
    "embedded_blob_resource",
    "embedded_text_resource",
    "encode_error",
    "encode_id",
    "encode_notification",
    "encode_request",
    "encode_result",
    "fitting_draft",
    "is_absolute_anywhere",
    "judge_oversized",
    "merge_initialize",
    "nested_deeper",
    "normalize_offer",
    "notification",
    "plan",
    "plan_entry",
    "protocol_module",
    "resource_link",
    "seam_ends",
    "set_check_outgoing_default",
    "sniff_oversized",
    "split_batch",
    "supported_versions",
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
