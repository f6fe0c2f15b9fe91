"""Short constructors for the session updates agents send most.

Each returns the generated ``acp_schema`` Struct itself (no second model
layer), for protocol v1 by default or for the module passed as ``version``
(``v1_unstable`` / ``v2_unstable`` too, for ``unstable=True`` connections)::

    from acp_schema import v2
    import acp_trio

    acp_trio.agent_text("Hello", message_id="m1")
    # v1.AgentMessageChunk(content=v1.TextContent(text="Hello"), message_id="m1")
    acp_trio.tool_call("call_1", "Edit main.py", kind="edit", version=v2)
    # v2.SessionUpdateToolCallUpdate(tool_call_id="call_1", title=..., status="pending")
    acp_trio.notification("s1", acp_trio.plan(["Read", "Fix"]))
    # v1.SessionNotification(session_id="s1", update=v1.Plan(entries=[...]))

Optional arguments left out are left out on the wire (``UNSET``); ``None``
is sent as JSON ``null``, which in an update means "clear".

Typing: pass the module object itself (``version=v2``) and the result is
typed as that version's class. A value typed only as ``types.ModuleType``
is checked as v1 (it matches the first overload), so keep the module literal
where the precise type matters.

Where v1 and v2 differ the builders follow each version's shape: in v2 a
tool call is created by a ``tool_call_update`` (there is no ``tool_call``), a
plan is a ``plan_update`` with a plan id, chunks need a ``messageId``, and
``terminal`` content and ``current_mode_update`` do not exist; the v2
message upserts (``user_message``, ``agent_message``, ``agent_thought``)
exist only in v2.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias, overload

from acp_schema import v1, v2
from msgspec import UNSET, UnsetType

from ._schema import SCHEMA_MODULES, schema_module_of

__all__ = [
    "agent_message",
    "agent_text",
    "agent_thought",
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

Meta: TypeAlias = dict[str, Any] | UnsetType | None


class _V1(Protocol):
    """Matches the module ``acp_schema.v1`` (by its ``Agent`` protocol)."""

    @property
    def Agent(self) -> type[v1.Agent]: ...


class _V2(Protocol):
    """Matches the module ``acp_schema.v2``."""

    @property
    def Agent(self) -> type[v2.Agent]: ...


def _module(version: object) -> Any:
    if getattr(version, "__name__", None) in SCHEMA_MODULES:
        return version
    raise ValueError(f"version must be acp_schema.v1 or acp_schema.v2, not {version!r}")


# --- content blocks ----------------------------------------------------------


@overload
def text_block(
    text: str, *, meta: Meta = UNSET, version: _V1 = ...
) -> v1.TextContent: ...
@overload
def text_block(text: str, *, meta: Meta = UNSET, version: _V2) -> v2.TextContent: ...
def text_block(text: str, *, meta: Meta = UNSET, version: object = v1) -> Any:
    """A text content block: ``text_block("hi")`` -> ``TextContent(text="hi")``."""
    return _module(version).TextContent(text=text, meta=meta)


@overload
def resource_link(
    uri: str,
    name: str | None = None,
    *,
    title: str | UnsetType | None = UNSET,
    description: str | UnsetType | None = UNSET,
    mime_type: str | UnsetType | None = UNSET,
    size: int | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.ResourceLink: ...
@overload
def resource_link(
    uri: str,
    name: str | None = None,
    *,
    title: str | UnsetType | None = UNSET,
    description: str | UnsetType | None = UNSET,
    mime_type: str | UnsetType | None = UNSET,
    size: int | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: _V2,
) -> v2.ResourceLink: ...
def resource_link(
    uri: str,
    name: str | None = None,
    *,
    title: str | UnsetType | None = UNSET,
    description: str | UnsetType | None = UNSET,
    mime_type: str | UnsetType | None = UNSET,
    size: int | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """A link to a resource; ``name`` defaults to the last segment of ``uri``.

    >>> resource_link("file:///src/main.py").name
    'main.py'
    """
    if name is None:
        name = uri.rstrip("/").rsplit("/", 1)[-1] or uri
    return _module(version).ResourceLink(
        uri=uri,
        name=name,
        title=title,
        description=description,
        mime_type=mime_type,
        size=size,
        meta=meta,
    )


@overload
def embedded_text_resource(
    uri: str,
    text: str,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.EmbeddedResource: ...
@overload
def embedded_text_resource(
    uri: str,
    text: str,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: _V2,
) -> v2.EmbeddedResource: ...
def embedded_text_resource(
    uri: str,
    text: str,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """A resource embedded with its text.

    >>> embedded_text_resource("file:///a.py", "x = 1", mime_type="text/x-python").resource.text
    'x = 1'
    """
    vn = _module(version)
    contents = vn.TextResourceContents(uri=uri, text=text, mime_type=mime_type)
    return vn.EmbeddedResource(resource=contents, meta=meta)


@overload
def embedded_blob_resource(
    uri: str,
    data: bytes,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.EmbeddedResource: ...
@overload
def embedded_blob_resource(
    uri: str,
    data: bytes,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: _V2,
) -> v2.EmbeddedResource: ...
def embedded_blob_resource(
    uri: str,
    data: bytes,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """A binary resource embedded as base64.

    >>> embedded_blob_resource("file:///a.bin", b"\\x00\\x01").resource.blob
    'AAE='
    """
    vn = _module(version)
    blob = base64.b64encode(data).decode("ascii")
    contents = vn.BlobResourceContents(uri=uri, blob=blob, mime_type=mime_type)
    return vn.EmbeddedResource(resource=contents, meta=meta)


# --- message chunks and upserts ----------------------------------------------


def _chunk(
    cls_name: str, text: str, message_id: str | None, meta: Meta, vn: Any
) -> Any:
    if message_id is None:
        if vn.PROTOCOL_VERSION == 2:
            raise ValueError("v2 message chunks need a message_id")
        mid: str | UnsetType = UNSET
    else:
        mid = message_id
    return getattr(vn, cls_name)(
        content=vn.TextContent(text=text), message_id=mid, meta=meta
    )


@overload
def agent_text(
    text: str, *, message_id: str | None = None, meta: Meta = UNSET, version: _V1 = ...
) -> v1.AgentMessageChunk: ...
@overload
def agent_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: _V2
) -> v2.AgentMessageChunk: ...
def agent_text(
    text: str,
    *,
    message_id: str | None = None,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """An ``agent_message_chunk`` carrying text (v2 requires ``message_id``).

    >>> agent_text("Hello", message_id="m1").content.text
    'Hello'
    """
    return _chunk("AgentMessageChunk", text, message_id, meta, _module(version))


@overload
def user_text(
    text: str, *, message_id: str | None = None, meta: Meta = UNSET, version: _V1 = ...
) -> v1.UserMessageChunk: ...
@overload
def user_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: _V2
) -> v2.UserMessageChunk: ...
def user_text(
    text: str,
    *,
    message_id: str | None = None,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """A ``user_message_chunk`` carrying text (e.g. when replaying a session)."""
    return _chunk("UserMessageChunk", text, message_id, meta, _module(version))


@overload
def thought_text(
    text: str, *, message_id: str | None = None, meta: Meta = UNSET, version: _V1 = ...
) -> v1.AgentThoughtChunk: ...
@overload
def thought_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: _V2
) -> v2.AgentThoughtChunk: ...
def thought_text(
    text: str,
    *,
    message_id: str | None = None,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """An ``agent_thought_chunk`` carrying text."""
    return _chunk("AgentThoughtChunk", text, message_id, meta, _module(version))


MessageContent: TypeAlias = str | Sequence[v2.ContentBlock] | UnsetType | None


def _blocks(content: MessageContent) -> list[v2.ContentBlock] | UnsetType | None:
    if isinstance(content, str):
        return [v2.TextContent(text=content)]
    if content is None or isinstance(content, UnsetType):
        return content
    return list(content)


def user_message(
    message_id: str, content: MessageContent = UNSET, *, meta: Meta = UNSET
) -> v2.UserMessage:
    """A v2 ``user_message`` upsert; a string becomes one text block.

    Leaving ``content`` out keeps the message's content (e.g. to change only
    ``_meta``); ``None`` or ``[]`` clears it.

    >>> user_message("u1", "What's the capital of France?").content[0].text
    "What's the capital of France?"
    """
    return v2.UserMessage(message_id=message_id, content=_blocks(content), meta=meta)


def agent_message(
    message_id: str, content: MessageContent = UNSET, *, meta: Meta = UNSET
) -> v2.AgentMessage:
    """A v2 ``agent_message`` upsert (whole content replaces what was streamed)."""
    return v2.AgentMessage(message_id=message_id, content=_blocks(content), meta=meta)


def agent_thought(
    message_id: str, content: MessageContent = UNSET, *, meta: Meta = UNSET
) -> v2.AgentThought:
    """A v2 ``agent_thought`` upsert."""
    return v2.AgentThought(message_id=message_id, content=_blocks(content), meta=meta)


# --- tool calls --------------------------------------------------------------


@overload
def tool_content(
    content: str | v1.ContentBlock, *, version: _V1 = ...
) -> v1.Content: ...
@overload
def tool_content(content: str | v2.ContentBlock, *, version: _V2) -> v2.Content: ...
def tool_content(content: Any, *, version: object = v1) -> Any:
    """Tool call content wrapping a content block (a string becomes text).

    >>> tool_content("3 files found").content.text
    '3 files found'
    """
    vn = _module(version)
    block = vn.TextContent(text=content) if isinstance(content, str) else content
    return vn.Content(content=block)


@overload
def diff(
    path: str,
    old_text: str | None,
    new_text: str,
    *,
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.Diff: ...
@overload
def diff(
    path: str, old_text: str | None, new_text: str, *, meta: Meta = UNSET, version: _V2
) -> v2.Diff: ...
def diff(
    path: str,
    old_text: str | None,
    new_text: str,
    *,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """Diff content for a tool call; ``old_text=None`` for a new file.

    >>> diff("/src/config.json", '{"debug": false}', '{"debug": true}').path
    '/src/config.json'
    """
    return _module(version).Diff(
        path=path, old_text=old_text, new_text=new_text, meta=meta
    )


def terminal(terminal_id: str, *, meta: Meta = UNSET) -> v1.Terminal:
    """v1 tool call content embedding a terminal made with ``terminal/create``.

    (v2 has no terminal content.)

    >>> terminal("term_1").terminal_id
    'term_1'
    """
    return v1.Terminal(terminal_id=terminal_id, meta=meta)


def _locations(vn: Any, locations: Any) -> Any:
    if locations is None or isinstance(locations, UnsetType):
        return locations
    return [
        vn.ToolCallLocation(path=loc) if isinstance(loc, str) else loc
        for loc in locations
    ]


def _seq(items: Any) -> Any:
    if items is None or isinstance(items, UnsetType):
        return items
    return list(items)


@overload
def tool_call(
    tool_call_id: str,
    title: str,
    *,
    kind: v1.ToolKind | UnsetType = UNSET,
    status: v1.ToolCallStatus | UnsetType = "pending",
    content: Sequence[v1.ToolCallContent] | UnsetType = UNSET,
    locations: Sequence[str | v1.ToolCallLocation] | UnsetType = UNSET,
    raw_input: Any = UNSET,
    raw_output: Any = UNSET,
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.ToolCall: ...
@overload
def tool_call(
    tool_call_id: str,
    title: str,
    *,
    kind: v2.ToolKind | UnsetType = UNSET,
    status: v2.ToolCallStatus | UnsetType = "pending",
    content: Sequence[v2.ToolCallContent] | UnsetType = UNSET,
    locations: Sequence[str | v2.ToolCallLocation] | UnsetType = UNSET,
    raw_input: Any = UNSET,
    raw_output: Any = UNSET,
    meta: Meta = UNSET,
    version: _V2,
) -> v2.SessionUpdateToolCallUpdate: ...
def tool_call(
    tool_call_id: str,
    title: str,
    *,
    kind: Any = UNSET,
    status: Any = "pending",
    content: Any = UNSET,
    locations: Any = UNSET,
    raw_input: Any = UNSET,
    raw_output: Any = UNSET,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """Report a new tool call: v1 ``tool_call``, v2 a first ``tool_call_update``.

    ``locations`` may be plain paths.

    >>> call = tool_call("call_1", "Read config", kind="read", locations=["/etc/app.toml"])
    >>> call.status, call.locations[0].path
    ('pending', '/etc/app.toml')
    """
    vn = _module(version)
    cls = vn.ToolCall if vn.PROTOCOL_VERSION == 1 else vn.SessionUpdateToolCallUpdate
    return cls(
        tool_call_id=tool_call_id,
        title=title,
        kind=kind,
        status=status,
        content=_seq(content),
        locations=_locations(vn, locations),
        raw_input=raw_input,
        raw_output=raw_output,
        meta=meta,
    )


@overload
def tool_call_update(
    tool_call_id: str,
    *,
    status: v1.ToolCallStatus | UnsetType | None = UNSET,
    title: str | UnsetType | None = UNSET,
    kind: v1.ToolKind | UnsetType | None = UNSET,
    content: Sequence[v1.ToolCallContent] | UnsetType | None = UNSET,
    locations: Sequence[str | v1.ToolCallLocation] | UnsetType | None = UNSET,
    raw_input: Any = UNSET,
    raw_output: Any = UNSET,
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.SessionUpdateToolCallUpdate: ...
@overload
def tool_call_update(
    tool_call_id: str,
    *,
    status: v2.ToolCallStatus | UnsetType | None = UNSET,
    title: str | UnsetType | None = UNSET,
    kind: v2.ToolKind | UnsetType | None = UNSET,
    content: Sequence[v2.ToolCallContent] | UnsetType | None = UNSET,
    locations: Sequence[str | v2.ToolCallLocation] | UnsetType | None = UNSET,
    raw_input: Any = UNSET,
    raw_output: Any = UNSET,
    meta: Meta = UNSET,
    version: _V2,
) -> v2.SessionUpdateToolCallUpdate: ...
def tool_call_update(
    tool_call_id: str,
    *,
    status: Any = UNSET,
    title: Any = UNSET,
    kind: Any = UNSET,
    content: Any = UNSET,
    locations: Any = UNSET,
    raw_input: Any = UNSET,
    raw_output: Any = UNSET,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """A ``tool_call_update`` patch: fields left out stay unchanged, ``None`` clears.

    >>> update = tool_call_update("call_1", status="completed", content=[tool_content("ok")])
    >>> update.status, update.title
    ('completed', UNSET)
    """
    vn = _module(version)
    return vn.SessionUpdateToolCallUpdate(
        tool_call_id=tool_call_id,
        status=status,
        title=title,
        kind=kind,
        content=_seq(content),
        locations=_locations(vn, locations),
        raw_input=raw_input,
        raw_output=raw_output,
        meta=meta,
    )


# --- plan and usage ----------------------------------------------------------


@overload
def plan_entry(
    content: str,
    *,
    priority: v1.PlanEntryPriority = "medium",
    status: v1.PlanEntryStatus = "pending",
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.PlanEntry: ...
@overload
def plan_entry(
    content: str,
    *,
    priority: v2.PlanEntryPriority = "medium",
    status: v2.PlanEntryStatus = "pending",
    meta: Meta = UNSET,
    version: _V2,
) -> v2.PlanEntry: ...
def plan_entry(
    content: str,
    *,
    priority: str = "medium",
    status: str = "pending",
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """One plan entry (priority ``medium`` and status ``pending`` by default).

    >>> plan_entry("Write tests", priority="high").priority
    'high'
    """
    return _module(version).PlanEntry(
        content=content, priority=priority, status=status, meta=meta
    )


@overload
def plan(
    entries: Sequence[v1.PlanEntry | str],
    *,
    plan_id: str | None = None,
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.Plan: ...
@overload
def plan(
    entries: Sequence[v2.PlanEntry | str],
    *,
    plan_id: str,
    meta: Meta = UNSET,
    version: _V2,
) -> v2.PlanUpdate: ...
def plan(
    entries: Sequence[Any],
    *,
    plan_id: str | None = None,
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """The whole plan: v1 ``plan``; v2 ``plan_update`` with ``items`` and ``plan_id``.

    Strings become pending, medium-priority entries.

    >>> [e.content for e in plan(["Read", plan_entry("Fix", status="in_progress")]).entries]
    ['Read', 'Fix']
    """
    vn = _module(version)
    items = [
        vn.PlanEntry(content=e, priority="medium", status="pending")
        if isinstance(e, str)
        else e
        for e in entries
    ]
    if vn.PROTOCOL_VERSION == 1:
        return vn.Plan(entries=items, meta=meta)
    if plan_id is None:
        raise ValueError("a v2 plan needs a plan_id")
    return vn.PlanUpdate(plan=vn.PlanItems(id=plan_id, entries=items), meta=meta)


@overload
def usage_update(
    used: int,
    size: int,
    *,
    cost: float | None = None,
    currency: str = "USD",
    meta: Meta = UNSET,
    version: _V1 = ...,
) -> v1.UsageUpdate: ...
@overload
def usage_update(
    used: int,
    size: int,
    *,
    cost: float | None = None,
    currency: str = "USD",
    meta: Meta = UNSET,
    version: _V2,
) -> v2.UsageUpdate: ...
def usage_update(
    used: int,
    size: int,
    *,
    cost: float | None = None,
    currency: str = "USD",
    meta: Meta = UNSET,
    version: object = v1,
) -> Any:
    """Context window use in tokens, and optionally the session's cumulative cost.

    >>> usage_update(53000, 200000, cost=0.045).cost.currency
    'USD'
    """
    vn = _module(version)
    cost_value = UNSET if cost is None else vn.Cost(amount=cost, currency=currency)
    return vn.UsageUpdate(used=used, size=size, cost=cost_value, meta=meta)


# --- the notification --------------------------------------------------------


@overload
def notification(
    session_id: str, update: v1.SessionUpdate, *, meta: Meta = UNSET
) -> v1.SessionNotification: ...
@overload
def notification(
    session_id: str, update: v2.SessionUpdate, *, meta: Meta = UNSET
) -> v2.SessionNotification: ...
def notification(session_id: str, update: Any, *, meta: Meta = UNSET) -> Any:
    """Wrap an update in the ``session/update`` params of its own version.

    >>> notification("s1", agent_text("hi")).session_id
    's1'
    """
    vn = schema_module_of(update)
    if vn is None:
        raise TypeError(f"not an acp_schema session update: {update!r}")
    return vn.SessionNotification(session_id=session_id, update=update, meta=meta)
