"""An agent's tool calls: the updates to send, and their current state.

:class:`ToolCallTracker` is the agent-side chore of the official SDK's
``acp.contrib.ToolCallTracker``, typed, on msgspec: ``start`` and
``progress`` return the ``tool_call`` / ``tool_call_update`` session update
to send, keyed by your own id for the call, and fold it into the call's
current state (:class:`~acp_core.ToolCallState`, by the same rules as
:class:`~acp_core.SessionTranscript`, which a client uses to fold what it
receives).  ``tool_call(key)`` gives that state as the ``ToolCallUpdate`` a
permission request carries (:class:`~acp_core.PermissionBroker`)::

    tracker = ToolCallTracker()
    update = tracker.start("read", "Read config.toml", kind="read")
    await conn.client.session_update(notification(session_id, update))
    done = tracker.progress("read", status="completed", content=["42 lines"])

Protocol version 1 (the stable surface).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET, UnsetType

from .._schema import protocol_module
from ._blocks import tool_content
from ._builders import tool_call, tool_call_update
from ._transcript import ToolCallState, patch_tool_call_state, tool_call_state

if TYPE_CHECKING:  # acp_schema.v1 is imported with the first tracker, not acp_core
    from acp_schema import v1

__all__ = ["ToolCallTracker"]

#: What ``content=`` takes: tool call content, or a string (one text block).
Content = Sequence["v1.ToolCallContent | str"]


def _content(items: Content | UnsetType | None) -> Any:
    if items is None or isinstance(items, UnsetType):
        return items
    return [tool_content(i) if isinstance(i, str) else i for i in items]


class ToolCallTracker:
    """The tool calls of one agent (any number of sessions), by your keys.

    It holds the calls it tracks until :meth:`forget` (bounded by your keys).
    ``id_factory`` makes the protocol's ``toolCallId`` of each new call
    (default: ``call_1``, ``call_2``, ...; unique within the tracker).
    """

    def __init__(self, *, id_factory: Callable[[], str] | None = None) -> None:
        counter = itertools.count(1)

        def numbered() -> str:
            return f"call_{next(counter)}"

        self._id_factory: Callable[[], str] = id_factory or numbered
        self._text: dict[str, str] = {}
        self._states: dict[str, ToolCallState] = {}  # by key: forget drops it

    def start(
        self,
        key: str,
        title: str,
        *,
        kind: v1.ToolKind | UnsetType = UNSET,
        status: v1.ToolCallStatus = "in_progress",
        content: Content | UnsetType = UNSET,
        locations: Sequence[str | v1.ToolCallLocation] | UnsetType = UNSET,
        raw_input: Any = UNSET,
    ) -> v1.ToolCall:
        """A new tool call under ``key``: the ``tool_call`` update to send.

        Raises :class:`KeyError` if ``key`` is tracked already (``forget`` it
        first).
        """
        if key in self._states:
            raise KeyError(f"tool call {key!r} is tracked already")
        call_id = self._id_factory()
        update = tool_call(
            call_id,
            title,
            kind=kind,
            status=status,
            content=_content(content),
            locations=locations,
            raw_input=raw_input,
        )
        self._states[key] = tool_call_state(update)  # SessionTranscript's rules
        return update

    def progress(
        self,
        key: str,
        *,
        status: v1.ToolCallStatus | UnsetType | None = UNSET,
        title: str | UnsetType | None = UNSET,
        kind: v1.ToolKind | UnsetType | None = UNSET,
        content: Content | UnsetType | None = UNSET,
        locations: Sequence[str | v1.ToolCallLocation] | UnsetType | None = UNSET,
        raw_input: Any = UNSET,
        raw_output: Any = UNSET,
    ) -> v1.SessionUpdateToolCallUpdate:
        """The ``tool_call_update`` to send for ``key``: only the fields given
        (``None`` clears one), folded into the current state."""
        state = self._state(key)
        update = tool_call_update(
            state.tool_call_id,
            status=status,
            title=title,
            kind=kind,
            content=_content(content),
            locations=locations,
            raw_input=raw_input,
            raw_output=raw_output,
        )
        patch_tool_call_state(state, update)
        return update

    def append_text(
        self,
        key: str,
        text: str,
        *,
        status: v1.ToolCallStatus | UnsetType = UNSET,
    ) -> v1.SessionUpdateToolCallUpdate:
        """Stream text into ``key``'s content: the update carries all the text
        so far as one block (``content`` replaces, by the protocol's rules)."""
        self._text[key] = so_far = self._text.get(key, "") + text
        return self.progress(key, status=status, content=[so_far])

    def state(self, key: str) -> ToolCallState:
        """A copy of ``key``'s current state (defaults filled in)."""
        return msgspec.structs.replace(self._state(key))

    def tool_call(self, key: str) -> v1.ToolCallUpdate:
        """``key``'s current state as the ``ToolCallUpdate`` a
        ``session/request_permission`` carries."""
        state = self._state(key)
        schema = protocol_module(1)
        update: v1.ToolCallUpdate = schema.ToolCallUpdate(
            tool_call_id=state.tool_call_id,
            title=state.title,
            kind=msgspec.convert(state.kind, schema.ToolKind),
            status=msgspec.convert(state.status, schema.ToolCallStatus),
            content=list(state.content) or UNSET,
            locations=list(state.locations) or UNSET,
            raw_input=UNSET if state.raw_input is None else state.raw_input,
            raw_output=UNSET if state.raw_output is None else state.raw_output,
        )
        return update

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
