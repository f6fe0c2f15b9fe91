"""An agent's tool calls: the updates to send, and their current state.

:class:`ToolCallTracker` is the agent-side chore of the official SDK's
``acp.contrib.ToolCallTracker``, typed, on msgspec: ``start`` and
``progress`` return the session update to send, keyed by your own id for
the call, and fold it into the call's current state
(:class:`~acp_core.ToolCallState`, by the same rules as
:class:`~acp_core.SessionTranscript`, which a client uses to fold what it
receives).  ``tool_call(key)`` gives that state as the ``ToolCallUpdate`` a
permission request carries (:class:`~acp_core.PermissionBroker`)::

    tracker = ToolCallTracker()
    update = tracker.start("read", "Read config.toml", kind="read")
    await conn.client.session_update(notification(session_id, update))
    done = tracker.progress("read", status="completed", content=["42 lines"])

Protocol version 1 by default: ``start`` gives a ``tool_call`` update,
``progress`` a ``tool_call_update``.  ``ToolCallTracker(version=acp_schema.v2)``
speaks the v2 draft: both give a ``tool_call_update`` (an upsert: the first
one creates the call), and v2's ``capabilities`` (what the client may do to
the call) are tracked too, as is ``name`` (the tool's programmatic name) in
both.  The tracker is typed by its version: each method returns that
version's class.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, overload

import msgspec
from msgspec import UNSET, UnsetType

from .._schema import schema_module_of
from ._blocks import tool_content
from ._builders import tool_call, tool_call_update
from ._states import ToolCallState, patch_tool_call_state, tool_call_state
from ._versions import V1Module, V2Module, vocab_of

if TYPE_CHECKING:  # acp_schema is imported with the first tracker, not acp_core
    from acp_schema import v1, v2
    from typing_extensions import TypeVar

    from .._vocabulary import Vocabulary

    #: the class ``start`` returns (v1 ``ToolCall``; v2 ``SessionUpdateToolCallUpdate``)
    StartT = TypeVar("StartT", default=v1.ToolCall)
    #: the class ``progress`` returns (``SessionUpdateToolCallUpdate``)
    UpdateT = TypeVar("UpdateT", default=v1.SessionUpdateToolCallUpdate)
    #: the class ``tool_call`` returns (``ToolCallUpdate``)
    CallT = TypeVar("CallT", default=v1.ToolCallUpdate)
else:
    from typing import TypeVar

    StartT = TypeVar("StartT")
    UpdateT = TypeVar("UpdateT")
    CallT = TypeVar("CallT")

__all__ = ["ToolCallTracker", "permission_tool_call_class"]

#: What ``content=`` takes: tool call content, or a string (one text block).
Content = Sequence["v1.ToolCallContent | v2.ToolCallContent | str"]
#: What ``locations=`` takes: locations, or plain paths.
Locations = Sequence["str | v1.ToolCallLocation | v2.ToolCallLocation"]


def permission_tool_call_class(vocab: Vocabulary) -> Any:
    """The ``ToolCallUpdate`` class a ``session/request_permission`` carries:
    its ``toolCall`` (v1), or its ``tool_call`` subject's (v2)."""
    request = vocab.params("session/request_permission")
    if "tool_call" in request.__struct_fields__:
        return vocab.member(request, "toolCall")
    subject = vocab.variant(
        vocab.field(request, "subject"), "tool_call", "permission subject"
    )
    return vocab.member(subject, "toolCall")


class ToolCallTracker(Generic[StartT, UpdateT, CallT]):
    """The tool calls of one agent (any number of sessions), by your keys.

    It holds the calls it tracks until :meth:`forget` (bounded by your keys).
    ``id_factory`` makes the protocol's ``toolCallId`` of each new call
    (default: ``call_1``, ``call_2``, ...; unique within the tracker).
    ``version`` is ``acp_schema.v1`` (the default) or ``acp_schema.v2``.
    """

    @overload
    def __init__(
        self: ToolCallTracker[
            v1.ToolCall, v1.SessionUpdateToolCallUpdate, v1.ToolCallUpdate
        ],
        *,
        id_factory: Callable[[], str] | None = None,
        version: V1Module = ...,
    ) -> None: ...
    @overload
    def __init__(
        self: ToolCallTracker[
            v2.SessionUpdateToolCallUpdate,
            v2.SessionUpdateToolCallUpdate,
            v2.ToolCallUpdate,
        ],
        *,
        id_factory: Callable[[], str] | None = None,
        version: V2Module,
    ) -> None: ...
    def __init__(
        self, *, id_factory: Callable[[], str] | None = None, version: object = None
    ) -> None:
        counter = itertools.count(1)

        def numbered() -> str:
            return f"call_{next(counter)}"

        self._vocab = vocab_of(version)
        #: the generated module spoken (``acp_schema.v1`` or ``v2``)
        self.version: types.ModuleType = self._vocab.module
        self._id_factory: Callable[[], str] = id_factory or numbered
        self._text: dict[str, str] = {}
        self._states: dict[str, ToolCallState] = {}  # by key: forget drops it

    def start(
        self,
        key: str,
        title: str,
        *,
        kind: v1.ToolKind | v2.ToolKind | UnsetType = UNSET,
        status: v1.ToolCallStatus | v2.ToolCallStatus = "in_progress",
        content: Content | UnsetType = UNSET,
        locations: Locations | UnsetType = UNSET,
        raw_input: Any = UNSET,
        name: str | UnsetType = UNSET,
    ) -> StartT:
        """A new tool call under ``key``: the update to send (v1 ``tool_call``,
        v2 a first ``tool_call_update``); ``name`` is the tool's programmatic
        name.

        Raises :class:`KeyError` if ``key`` is tracked already (``forget`` it
        first), :class:`ValueError` for a field the version lacks.
        """
        if key in self._states:
            raise KeyError(f"tool call {key!r} is tracked already")
        build: Any = tool_call  # either version's kinds and statuses, checked by type
        update: Any = build(
            self._id_factory(),
            title,
            kind=kind,
            status=status,
            content=self._content(content),
            locations=locations,
            raw_input=raw_input,
            version=self.version,
        )
        update = self._with(update, name=name)
        self._states[key] = tool_call_state(update)  # SessionTranscript's rules
        started: StartT = update
        return started

    def progress(
        self,
        key: str,
        *,
        status: v1.ToolCallStatus | v2.ToolCallStatus | UnsetType | None = UNSET,
        title: str | UnsetType | None = UNSET,
        kind: v1.ToolKind | v2.ToolKind | UnsetType | None = UNSET,
        content: Content | UnsetType | None = UNSET,
        locations: Locations | UnsetType | None = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
        name: str | UnsetType | None = UNSET,
        capabilities: v2.ToolCallCapabilities | UnsetType | None = UNSET,
    ) -> UpdateT:
        """The ``tool_call_update`` to send for ``key``: only the fields given
        (``None`` clears one), folded into the current state.
        ``capabilities`` is v2's (:class:`ValueError` in v1)."""
        state = self._state(key)
        build: Any = tool_call_update
        update: Any = build(
            state.tool_call_id,
            status=status,
            title=title,
            kind=kind,
            content=self._content(content),
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
            version=self.version,
        )
        update = self._with(update, name=name, capabilities=capabilities)
        patch_tool_call_state(state, update)
        progressed: UpdateT = update
        return progressed

    def append_text(
        self,
        key: str,
        text: str,
        *,
        status: v1.ToolCallStatus | v2.ToolCallStatus | UnsetType = UNSET,
    ) -> UpdateT:
        """Stream text into ``key``'s content: the update carries all the text
        so far as one block (``content`` replaces, by the protocol's rules)."""
        self._text[key] = so_far = self._text.get(key, "") + text
        return self.progress(key, status=status, content=[so_far])

    def state(self, key: str) -> ToolCallState:
        """A copy of ``key``'s current state (defaults filled in)."""
        return msgspec.structs.replace(self._state(key))

    def tool_call(self, key: str) -> CallT:
        """``key``'s current state as the ``ToolCallUpdate`` a
        ``session/request_permission`` carries (v1: its ``toolCall``; v2: its
        ``tool_call`` subject's)."""
        state = self._state(key)
        cls = permission_tool_call_class(self._vocab)
        fields: dict[str, Any] = {
            "tool_call_id": state.tool_call_id,
            "title": state.title,
            "kind": state.kind,
            "status": state.status,
            "content": list(state.content) or UNSET,
            "locations": list(state.locations) or UNSET,
            "raw_input": UNSET if state.raw_input is None else state.raw_input,
            "raw_output": UNSET if state.raw_output is None else state.raw_output,
            "name": UNSET if state.name is None else state.name,
            "capabilities": UNSET if state.capabilities is None else state.capabilities,
        }
        known = cls.__struct_fields__
        call: CallT = cls(**{k: v for k, v in fields.items() if k in known})
        return call

    def tool_call_id(self, key: str) -> str:
        """The protocol's ``toolCallId`` of ``key``."""
        return self._state(key).tool_call_id

    def forget(self, key: str) -> None:
        """Stop tracking ``key`` (its id is not reused)."""
        self._states.pop(key, None)
        self._text.pop(key, None)

    def __contains__(self, key: object) -> bool:
        return key in self._states

    def __len__(self) -> int:
        return len(self._states)

    def _state(self, key: str) -> ToolCallState:
        try:
            return self._states[key]
        except KeyError:
            raise KeyError(f"no tool call {key!r} is tracked") from None

    def _content(self, items: Content | UnsetType | None) -> Any:
        if items is None or isinstance(items, UnsetType):
            return items
        return [
            tool_content(i, version=self.version) if isinstance(i, str) else i
            for i in items
        ]

    def _with(self, update: Any, **fields: Any) -> Any:
        """``update`` with the v2 fields given (``UNSET``: left out)."""
        given = {k: v for k, v in fields.items() if not isinstance(v, UnsetType)}
        if not given:
            return update
        missing = [k for k in given if k not in update.__struct_fields__]
        if missing:
            module = schema_module_of(update)
            version = module.__name__ if module is not None else "this version"
            raise ValueError(f"{', '.join(missing)}: no such field in {version}")
        return msgspec.structs.replace(update, **given)
