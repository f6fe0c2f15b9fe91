"""What a transcript holds of a tool call, a plan and the session info, and
how an update patches them (absent kept, ``null`` back to the default,
``_meta`` replaced or patched by key as the schema version says)."""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import msgspec
from msgspec import UNSET, UnsetType

from .._schema import schema_module_of

if TYPE_CHECKING:
    from acp_schema import v1, v2, v2_alpha0

    ToolCallContent: TypeAlias = (
        v1.ToolCallContent | v2.ToolCallContent | v2_alpha0.ToolCallContent
    )
    ToolCallLocation: TypeAlias = (
        v1.ToolCallLocation | v2.ToolCallLocation | v2_alpha0.ToolCallLocation
    )
    PlanEntry: TypeAlias = v1.PlanEntry | v2.PlanEntry | v2_alpha0.PlanEntry

__all__ = [
    "PlanState",
    "SessionInfoState",
    "ToolCallState",
    "meta_or_none",
    "patch_meta",
    "patch_tool_call_state",
    "patched",
    "tool_call_state",
]


class ToolCallState(msgspec.Struct, kw_only=True):
    """A tool call as reported so far, with the protocol's defaults filled in."""

    tool_call_id: str
    title: str | None = None
    kind: str = "other"
    status: str = "pending"
    """``pending``, ``in_progress``, ``completed``, ``failed``, ``cancelled`` (set
    by :meth:`SessionTranscript.mark_cancelled`) or a v2 custom status."""
    content: list[ToolCallContent] = []
    locations: list[ToolCallLocation] = []
    raw_input: Any = None
    raw_output: Any = None
    meta: dict[str, Any] | None = None
    name: str | None = None
    """The tool's programmatic name (None when not given)."""
    capabilities: v2.ToolCallCapabilities | None = None
    """What the client may do to the call, such as cancel it (v2)."""


class PlanState(msgspec.Struct, kw_only=True):
    """One plan: v1's only plan (``plan_id`` None) or a v2 plan by its id."""

    plan_id: str | None
    entries: list[PlanEntry] = []
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None
    """A v2 plan content type this library does not know, kept as received."""


class SessionInfoState(msgspec.Struct, kw_only=True):
    """Session metadata from ``session_info_update`` (None = not set or cleared)."""

    title: str | None = None
    updated_at: str | None = None
    meta: dict[str, Any] | None = None


def tool_call_state(call: Any) -> ToolCallState:
    """The state a ``tool_call`` update creates (the protocol's defaults filled in)."""
    state = ToolCallState(tool_call_id=call.tool_call_id, title=call.title)
    _patch_fields(state, call)
    return state


def patch_tool_call_state(state: ToolCallState, update: Any) -> None:
    """Fold a ``tool_call_update`` into ``state``: absent fields kept, ``null``
    ones back to their defaults."""
    state.title = patched(update.title, state.title, None)
    _patch_fields(state, update)


def _patch_fields(state: ToolCallState, update: Any) -> None:
    state.name = patched(getattr(update, "name", UNSET), state.name, None)
    capabilities = getattr(update, "capabilities", UNSET)
    state.capabilities = patched(capabilities, state.capabilities, None)
    state.kind = patched(update.kind, state.kind, "other")
    state.status = patched(update.status, state.status, "pending")
    content = patched(update.content, state.content, [])
    state.content = list(content)
    locations = patched(update.locations, state.locations, [])
    state.locations = list(locations)
    state.raw_input = patched(update.raw_input, state.raw_input, None)
    state.raw_output = patched(update.raw_output, state.raw_output, None)
    state.meta = patch_meta(update, state.meta)


def patched(value: Any, current: Any, cleared: Any) -> Any:
    """Patch semantics: UNSET keeps ``current``, None gives ``cleared``."""
    if isinstance(value, UnsetType):
        return current
    return cleared if value is None else value


def patch_meta(update: Any, current: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``_meta`` stored after ``update``: omitted keeps it, ``null``
    clears it; an object replaces it in v1 and, in v2 since its *metadata
    patches*, patches it by top-level key (a key set to ``null`` removed,
    any other value replacing that key's, nested objects not merged)."""
    value: Any = update.meta
    if isinstance(value, UnsetType):
        return current
    if value is None:
        return None
    if not _meta_patched_by_key(schema_module_of(update)):
        return cast("dict[str, Any]", value)
    patched = dict(current or {})
    for key, item in cast("dict[str, Any]", value).items():
        if item is None:
            patched.pop(key, None)
        else:
            patched[key] = item
    return patched


def _meta_patched_by_key(module: types.ModuleType | None) -> bool:
    """Whether ``module``'s schema patches ``_meta`` by key: protocol v2 since
    its metadata patches (the 2.x drafts past alpha; ``2.0.0-alpha.*``, and
    v1, replace it whole)."""
    if module is None or module.PROTOCOL_VERSION < 2:
        return False
    return "alpha" not in str(getattr(module, "SCHEMA_VERSION", ""))


def meta_or_none(value: dict[str, Any] | UnsetType | None) -> dict[str, Any] | None:
    return None if isinstance(value, UnsetType) else value
