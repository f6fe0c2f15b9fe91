"""The live state of one session, rebuilt from its ``session/update`` stream.

A client feeds every update it receives, in order, to a
:class:`SessionTranscript`; the transcript holds the conversation as the
protocol defines it, for v1 and v2 alike::

    from acp_schema import v1
    import acp_core

    transcript = acp_core.SessionTranscript()
    transcript.apply(acp_core.agent_text("Hel", message_id="m1"))
    transcript.apply(acp_core.agent_text("lo", message_id="m1"))
    transcript.apply(acp_core.tool_call("c1", "Read file", kind="read"))
    transcript.mark_cancelled()          # after sending session/cancel
    transcript.messages[0].text          # 'Hello'
    transcript.tool_calls["c1"].status   # 'cancelled'

The rules, from the protocol text:

- Messages (``role`` user, agent or thought) are keyed by ``messageId``
  (per role). A chunk appends its block to the message with its
  ``messageId``; a chunk without one (v1 allows it) appends to the last
  message if that message has the same role, else starts a new message.
  The v2 ``user_message`` / ``agent_message`` / ``agent_thought`` updates
  are upserts: omitted fields stay unchanged, ``null`` clears, values
  replace; a ``content`` array replaces what was accumulated (from chunks
  or an earlier upsert) and later chunks append to it; an update without
  ``content`` changes only ``_meta``.
- Tool calls are keyed by ``toolCallId``: a v1 ``tool_call`` creates (or
  recreates) one, ``tool_call_update`` patches it (omitted unchanged,
  ``null`` clears back to the default; an unknown id is created), a v2
  ``tool_call_content_chunk`` appends one content item. After the client
  sends ``session/cancel``, :meth:`SessionTranscript.mark_cancelled` marks
  every tool call not ``completed`` or ``failed`` as ``cancelled``; later
  updates from the agent still apply. ``name`` and v2's ``capabilities``
  are patched like the rest; the tool call of a permission request is folded
  in by :meth:`SessionTranscript.apply_permission_request` (v2 asks for it
  before the prompt is shown).
- ``_meta`` of a message, a tool call or the session info: omitted keeps it,
  ``null`` clears it; an object replaces it in v1 (and the v2 alpha drafts)
  and patches it by top-level key in the v2 draft since its *metadata
  patches* (a key set to ``null`` is removed).
- A plan is replaced whole (v1 ``plan``; v2 ``plan_update``, one plan per
  plan id; the unstable ``plan_removed`` drops one); ``usage_update``, ``current_mode_update``,
  ``config_option_update`` and ``available_commands_update`` replace the
  previous value; ``session_info_update`` patches title, ``updatedAt`` and
  ``_meta``.
- Unknown and custom (``_``) updates are kept, in order, in
  ``other_updates`` (raw), as are the unstable updates this transcript does
  not model (``compaction_update``, ...: typed); every update applied is
  kept in ``events``.

Updates are told apart by their ``sessionUpdate`` tag, never by class
name, so a spec bump that renames classes changes nothing here; the
unstable surface (a connection with ``unstable=True``) uses the same
classes; v1's unstable ``plan_update`` is read like v2's.

By default adjacent plain text blocks of a message are joined into one
(``coalesce_text``), so a message streamed in pieces and the same message
sent whole give the same content; ``events`` keeps the updates as received.
"""

from __future__ import annotations

import types
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import msgspec
from msgspec import UnsetType

from .._schema import is_schema_module, schema_module_of
from .._vocabulary import NotInSchema, variant_tag, vocabulary
from ._states import (
    PlanState,
    SessionInfoState,
    ToolCallState,
    meta_or_none,
    patch_meta,
    patch_tool_call_state,
    patched,
    tool_call_state,
)

if TYPE_CHECKING:
    from acp_schema import v1, v2, v2_alpha0

    ContentBlock: TypeAlias = v1.ContentBlock | v2.ContentBlock | v2_alpha0.ContentBlock
    ToolCallContent: TypeAlias = (
        v1.ToolCallContent | v2.ToolCallContent | v2_alpha0.ToolCallContent
    )
    ToolCallLocation: TypeAlias = (
        v1.ToolCallLocation | v2.ToolCallLocation | v2_alpha0.ToolCallLocation
    )
    PlanEntry: TypeAlias = v1.PlanEntry | v2.PlanEntry | v2_alpha0.PlanEntry
    ConfigOption: TypeAlias = (
        v1.SessionConfigOption | v2.SessionConfigOption | v2_alpha0.SessionConfigOption
    )
    AvailableCommand: TypeAlias = (
        v1.AvailableCommand | v2.AvailableCommand | v2_alpha0.AvailableCommand
    )
    UsageUpdate: TypeAlias = v1.UsageUpdate | v2.UsageUpdate | v2_alpha0.UsageUpdate
    PermissionRequest: TypeAlias = (
        v1.RequestPermissionRequest
        | v2.RequestPermissionRequest
        | v2_alpha0.RequestPermissionRequest
    )
    SessionUpdate: TypeAlias = (
        v1.SessionUpdate | v2.SessionUpdate | v2_alpha0.SessionUpdate
    )
    SessionNotification: TypeAlias = (
        v1.SessionNotification
        | v2.UpdateSessionNotification
        | v2_alpha0.SessionNotification
    )

__all__ = ["SessionTranscript", "TranscriptMessage"]

Role: TypeAlias = Literal["user", "agent", "thought"]

_TERMINAL_STATUSES = frozenset({"completed", "failed"})
#: The role of each message update (``sessionUpdate`` tag): chunks append...
_CHUNK_ROLES: dict[str, Role] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
#: ... and the v2 upserts replace.
_UPSERT_ROLES: dict[str, Role] = {
    "user_message": "user",
    "agent_message": "agent",
    "agent_thought": "thought",
}


def _is_text(block: object) -> bool:
    """A ``text`` content block (of any generated module)."""
    return variant_tag(block) == "text" and hasattr(block, "text")


class TranscriptMessage(msgspec.Struct, kw_only=True, dict=True):
    """One user, agent or thought message; ``message_id`` is None if never sent.

    Text streamed in chunks is kept as pieces and joined once, when
    ``content`` (or ``text``) is next read, so a message of n chunks costs
    O(n) however it is read (not one copy of the text per chunk).
    """

    role: Role
    message_id: str | None
    content: list[ContentBlock] = []
    meta: dict[str, Any] | None = None
    """The message's ``_meta`` (from v2 upserts; chunk ``_meta`` stays in events)."""

    @property
    def text(self) -> str:
        """The message's text blocks, joined."""
        return "".join(
            block.text  # type: ignore[union-attr]
            for block in self.content
            if _is_text(block)
        )

    def __repr__(self) -> str:
        _flush(self)
        return msgspec.Struct.__repr__(self)

    def __eq__(self, other: object) -> bool:
        _flush(self)
        if isinstance(other, TranscriptMessage):
            _flush(other)
        return msgspec.Struct.__eq__(self, other)


#: ``content`` as stored: the transcript appends through it without joining.
_CONTENT: Any = TranscriptMessage.__dict__["content"]
#: Where a message keeps the text pieces still to append to its last block
#: (in the instance ``__dict__``: not a field, so not compared or encoded).
_PENDING = "_pending_text"


def _stored(message: TranscriptMessage) -> list[ContentBlock]:
    content: list[ContentBlock] = _CONTENT.__get__(message, TranscriptMessage)
    return content


def _join(parts: list[str]) -> str:
    return "".join(parts)


def _flush(message: TranscriptMessage) -> None:
    """Join the pending text pieces into the message's last block (once)."""
    parts: list[str] | None = vars(message).pop(_PENDING, None)
    if parts:
        content = _stored(message)
        last: Any = content[-1]
        content[-1] = type(last)(text=_join([last.text, *parts]))


def _get_content(message: TranscriptMessage) -> list[ContentBlock]:
    _flush(message)
    return _stored(message)


def _set_content(message: TranscriptMessage, value: list[ContentBlock]) -> None:
    vars(message).pop(_PENDING, None)
    _CONTENT.__set__(message, value)


# Reading ``content`` joins the pending pieces first; msgspec itself (init,
# encode, copy) uses the stored list directly.
TranscriptMessage.content = property(_get_content, _set_content)  # type: ignore[assignment]


class SessionTranscript:
    """Everything one session's ``session/update`` notifications said, in order.

    ``version`` is ``acp_schema.v1`` or ``v2`` (or an unstable module); left
    out, it is taken from the first update. ``session_id`` likewise; notifications for another session
    are refused. The views (``messages``, ``tool_calls``, ...) are live and
    belong to the transcript: read them, do not change them.

    >>> from acp_schema import v1
    >>> t = SessionTranscript()
    >>> _ = t.apply(v1.AgentMessageChunk(content=v1.TextContent(text="Hi")))
    >>> [(m.role, m.text) for m in t.messages]
    [('agent', 'Hi')]
    """

    def __init__(
        self,
        session_id: str | None = None,
        *,
        version: types.ModuleType | None = None,
        coalesce_text: bool = True,
    ) -> None:
        if version is not None and not is_schema_module(version):
            raise ValueError(f"version must be acp_schema.v1 or v2, not {version!r}")
        self.session_id = session_id
        self._version = version
        self._coalesce = coalesce_text
        self._messages: list[TranscriptMessage] = []
        self._by_id: dict[tuple[Role, str], TranscriptMessage] = {}
        self._last: TranscriptMessage | None = None
        self._open: list[TranscriptMessage] = []  # messages with pending text
        self._tool_calls: dict[str, ToolCallState] = {}
        self._plans: dict[str | None, PlanState] = {}
        self._plan_key: str | None = None
        self._usage: UsageUpdate | None = None
        self._current_mode_id: str | None = None
        self._config_options: list[ConfigOption] = []
        self._commands: list[AvailableCommand] = []
        self._info = SessionInfoState()
        self._other: list[SessionUpdate | Mapping[str, Any]] = []
        self._events: list[SessionUpdate | Mapping[str, Any]] = []

    # --- views ----------------------------------------------------------------

    @property
    def version(self) -> types.ModuleType | None:
        """``acp_schema.v1`` or ``v2``, once known."""
        return self._version

    @property
    def messages(self) -> Sequence[TranscriptMessage]:
        """User, agent and thought messages, in order of first appearance."""
        for message in self._open:  # so that msgspec sees their whole text too
            _flush(message)
        self._open.clear()
        return self._messages

    @property
    def tool_calls(self) -> Mapping[str, ToolCallState]:
        """Tool calls by ``toolCallId``, in order of first appearance."""
        return types.MappingProxyType(self._tool_calls)

    @property
    def plan(self) -> Sequence[PlanEntry]:
        """The entries of the plan updated last (v1: the plan); empty if none."""
        current = self._plans.get(self._plan_key)
        return current.entries if current is not None else []

    @property
    def plans(self) -> Mapping[str | None, PlanState]:
        """Every plan by plan id (v2), or the one v1 plan under ``None``."""
        return types.MappingProxyType(self._plans)

    @property
    def usage(self) -> UsageUpdate | None:
        """The last ``usage_update`` (``used``, ``size``, optional ``cost``)."""
        return self._usage

    @property
    def current_mode_id(self) -> str | None:
        """The mode from the last v1 ``current_mode_update``."""
        return self._current_mode_id

    @property
    def config_options(
        self,
    ) -> Sequence[ConfigOption]:
        """The options from the last ``config_option_update``."""
        return self._config_options

    @property
    def available_commands(self) -> Sequence[AvailableCommand]:
        """The commands from the last ``available_commands_update``."""
        return self._commands

    @property
    def session_info(self) -> SessionInfoState:
        """Title, ``updated_at`` and ``_meta`` from ``session_info_update``."""
        return self._info

    @property
    def other_updates(self) -> Sequence[SessionUpdate | Mapping[str, Any]]:
        """Unknown and custom (``_``) updates, raw, in the order received, and
        the unstable ones the transcript does not model (typed)."""
        return self._other

    @property
    def events(self) -> Sequence[SessionUpdate | Mapping[str, Any]]:
        """Every update applied, as received (raw mappings converted if known)."""
        return self._events

    # --- input ----------------------------------------------------------------

    def apply(
        self, update: SessionUpdate | SessionNotification | Mapping[str, Any]
    ) -> TranscriptMessage | ToolCallState | None:
        """Apply one update: a SessionUpdate variant, its SessionNotification,
        or the raw JSON object of an update (e.g. one v1 cannot decode).

        Returns the message or tool call the update touched, if any.
        """
        if _is_notification(update):
            note: Any = update
            self._check_session(note.session_id)
            self._check_version(note)
            return self._apply(note.update)
        return self._apply(update)  # type: ignore[arg-type]

    def apply_permission_request(
        self, request: PermissionRequest
    ) -> ToolCallState | None:
        """Fold the tool call a ``session/request_permission`` carries into
        :attr:`tool_calls`, as a ``tool_call_update`` is (patch rules; a new
        ``toolCallId`` creates the call).  The v2 draft requires it of a
        client, in the order received, before it shows the prompt; v1's
        ``toolCall`` is read the same way.  Returns the tool call's state, or
        None when the request is about no tool call (a v2 ``command`` or
        unknown subject).
        """
        self._check_session(request.session_id)
        self._adopt(request)
        call: Any = getattr(request, "tool_call", None)  # v1
        if call is None:
            subject: Any = getattr(request, "subject", None)
            if variant_tag(subject) != "tool_call" or schema_module_of(subject) is None:
                return None
            call = subject.tool_call
        return self._patch_tool_call(call)

    def mark_cancelled(self) -> list[str]:
        """Mark every tool call not ``completed`` or ``failed`` as ``cancelled``.

        Call it right after sending ``session/cancel``. Returns the ids marked.
        """
        marked: list[str] = []
        for state in self._tool_calls.values():
            if state.status not in _TERMINAL_STATUSES and state.status != "cancelled":
                state.status = "cancelled"
                marked.append(state.tool_call_id)
        return marked

    # --- dispatch -------------------------------------------------------------

    def _check_session(self, session_id: str) -> None:
        if self.session_id is None:
            self.session_id = session_id
        elif session_id != self.session_id:
            raise ValueError(
                f"update for session {session_id!r}, transcript is {self.session_id!r}"
            )

    def _check_version(self, obj: object) -> None:
        if schema_module_of(obj) is None or not (
            _is_notification(obj) or _is_update(obj)
        ):
            raise TypeError(f"not an acp_schema session update: {obj!r}")
        self._adopt(obj)

    def _adopt(self, obj: object) -> None:
        """Speak the version ``obj`` is of (the first one seen), or refuse it."""
        module = schema_module_of(obj)
        if module is None:
            raise TypeError(f"not an acp_schema object: {obj!r}")
        if self._version is None:
            self._version = module
        elif module.PROTOCOL_VERSION != self._version.PROTOCOL_VERSION:
            raise ValueError(
                f"a {module.__name__} update in a {self._version.__name__} transcript"
            )

    def _convert(self, raw: Mapping[str, Any]) -> SessionUpdate | Mapping[str, Any]:
        if self._version is None:
            raise ValueError("pass version= to apply raw updates before typed ones")
        try:
            converted: SessionUpdate = self._version.convert(
                dict(raw), vocabulary(self._version).update_type
            )
        except (msgspec.ValidationError, NotInSchema):
            return dict(raw)
        return converted

    def _apply(
        self, raw: SessionUpdate | Mapping[str, Any]
    ) -> TranscriptMessage | ToolCallState | None:
        update: Any  # told apart by its tag, not narrowed by type
        if isinstance(raw, Mapping) and schema_module_of(raw) is None:
            update = self._convert(raw)  # a plain dict: typed if this version can
        else:
            self._check_version(raw)
            update = raw
        self._events.append(update)
        kind = variant_tag(update) if schema_module_of(update) else None
        if kind in _CHUNK_ROLES:
            message_id = update.message_id
            if isinstance(message_id, UnsetType):
                message_id = None
            return self._chunk(_CHUNK_ROLES[kind], message_id, update.content)
        if kind in _UPSERT_ROLES:
            return self._upsert(_UPSERT_ROLES[kind], update)
        if kind == "tool_call":  # v1: creates the tool call
            return self._create_tool_call(update)
        if kind == "tool_call_update":
            return self._patch_tool_call(update)
        if kind == "tool_call_content_chunk":
            state = self._tool_call(update.tool_call_id)
            state.content.append(update.content)
            return state
        if kind == "plan":  # v1: the one plan
            entries: list[PlanEntry] = list(update.entries)
            self._set_plan(
                PlanState(plan_id=None, entries=entries, meta=meta_or_none(update.meta))
            )
        elif kind == "plan_update":
            self._plan_update(update.plan)
        elif kind == "plan_removed":  # the unstable surfaces
            removed = _plan_id(update)
            self._plans.pop(removed, None)
            if self._plan_key == removed:
                self._plan_key = None
        elif kind == "usage_update":
            self._usage = update
        elif kind == "current_mode_update":
            self._current_mode_id = update.current_mode_id
        elif kind == "config_option_update":
            self._config_options = list(update.config_options)
        elif kind == "available_commands_update":
            self._commands = list(update.available_commands)
        elif kind == "session_info_update":
            info = self._info
            info.title = patched(update.title, info.title, None)
            info.updated_at = patched(update.updated_at, info.updated_at, None)
            info.meta = patch_meta(update, info.meta)
        else:
            self._other.append(update)
        return None

    # --- messages -------------------------------------------------------------

    def _message(self, role: Role, message_id: str | None) -> TranscriptMessage:
        if message_id is not None:
            found = self._by_id.get((role, message_id))
            if found is not None:
                return found
        message = TranscriptMessage(role=role, message_id=message_id)
        self._messages.append(message)
        if message_id is not None:
            self._by_id[(role, message_id)] = message
        return message

    def _chunk(
        self, role: Role, message_id: str | None, block: ContentBlock
    ) -> TranscriptMessage:
        if message_id is None and self._last is not None and self._last.role == role:
            message = self._last
        else:
            message = self._message(role, message_id)
        self._append(message, block)
        self._last = message
        return message

    def _upsert(self, role: Role, update: Any) -> TranscriptMessage:
        message = self._message(role, update.message_id)
        if not isinstance(update.content, UnsetType):
            message.content = []
            for block in update.content or ():
                self._append(message, block)
        message.meta = patch_meta(update, message.meta)
        self._last = message
        return message

    def _append(self, message: TranscriptMessage, block: ContentBlock) -> None:
        content = _stored(message)
        if self._coalesce and content and _joinable(content[-1], block):
            # joined when the content is next read (see TranscriptMessage)
            text: str = cast(Any, block).text  # a text block (_joinable)
            attrs = vars(message)
            pending: list[str] | None = attrs.get(_PENDING)
            if pending is None:
                pending = []
                attrs[_PENDING] = pending
                self._open.append(message)
            pending.append(text)
            return
        _flush(message)
        content.append(block)

    # --- tool calls -----------------------------------------------------------

    def _tool_call(self, tool_call_id: str) -> ToolCallState:
        state = self._tool_calls.get(tool_call_id)
        if state is None:
            state = self._tool_calls[tool_call_id] = ToolCallState(
                tool_call_id=tool_call_id
            )
        return state

    def _create_tool_call(self, call: Any) -> ToolCallState:
        state = self._tool_calls[call.tool_call_id] = tool_call_state(call)
        return state

    def _patch_tool_call(self, update: Any) -> ToolCallState:
        state = self._tool_call(update.tool_call_id)
        patch_tool_call_state(state, update)
        return state

    # --- plans ----------------------------------------------------------------

    def _set_plan(self, plan: PlanState) -> None:
        self._plans[plan.plan_id] = plan
        self._plan_key = plan.plan_id

    def _plan_update(self, content: Any) -> None:
        if variant_tag(content) == "items" and schema_module_of(content):
            self._set_plan(
                PlanState(
                    plan_id=_plan_id(content),
                    entries=list(content.entries),
                    meta=meta_or_none(content.meta),
                )
            )
        else:
            plan_id = content.get("id", content.get("planId"))
            self._set_plan(
                PlanState(
                    plan_id=plan_id if isinstance(plan_id, str) else None,
                    raw=dict(content),
                )
            )


def _plan_id(obj: Any) -> str:
    """A plan's id: ``id`` in v2, ``planId`` in v1's unstable surface."""
    plan_id: str = obj.plan_id if "plan_id" in obj.__struct_fields__ else obj.id
    return plan_id


def _is_notification(obj: object) -> bool:
    """A ``session/update`` params object (of the module that defines it)."""
    module = schema_module_of(obj)
    if module is None:
        return False
    try:
        return type(obj) is vocabulary(module).notification
    except NotInSchema:
        return False


def _is_update(obj: object) -> bool:
    """A ``session/update`` variant (typed, or kept raw), by its tag field."""
    config = getattr(type(obj), "__struct_config__", None)
    tag_field = getattr(config or type(obj), "tag_field", None)
    return tag_field == "sessionUpdate"


def _joinable(a: ContentBlock, b: ContentBlock) -> bool:
    """Whether two adjacent blocks are plain text blocks (no annotations, no
    ``_meta``) of one module, to be joined into one."""
    return type(a) is type(b) and _is_text(a) and _plain(a) and _plain(b)


def _plain(block: Any) -> bool:
    return isinstance(block.annotations, UnsetType) and isinstance(
        block.meta, UnsetType
    )
