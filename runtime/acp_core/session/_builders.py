"""Short constructors for the session updates agents send most.

Each returns the generated ``acp_schema`` Struct itself (no second model
layer), for protocol v1 by default or for the module passed as ``version``
(``v1_unstable`` / ``v2_unstable`` too, for ``unstable=True`` connections)::

    from acp_schema import v2
    import acp_core

    acp_core.agent_text("Hello", message_id="m1")
    # v1.AgentMessageChunk(content=v1.TextContent(text="Hello"), message_id="m1")
    acp_core.tool_call("call_1", "Edit main.py", kind="edit", version=v2)
    # v2.SessionUpdateToolCallUpdate(tool_call_id="call_1", title=..., status="pending")
    acp_core.notification("s1", acp_core.plan(["Read", "Fix"]))
    # v1.SessionNotification(session_id="s1", update=v1.Plan(entries=[...]))

Optional arguments left out are left out on the wire (``UNSET``); ``None``
is sent as JSON ``null``, which in an update means "clear".

Typing: pass the module object itself (``version=v2``) and the result is
typed as that version's class. Version-generic code that holds the module
as a ``types.ModuleType`` gets ``Any`` under pyright (its last overload);
mypy takes such a value as v1 (it matches the first overload), so keep the
module literal where the precise type matters.

Where v1 and v2 differ the builders follow each version's shape: in v2 a
tool call is created by a ``tool_call_update`` (there is no ``tool_call``), a
plan is a ``plan_update`` with a plan id, chunks need a ``messageId``, and
``terminal`` content and ``current_mode_update`` do not exist; the v2
message upserts (``user_message``, ``agent_message``, ``agent_thought``)
exist only in v2.
"""

from __future__ import annotations

import base64
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, overload

from msgspec import UNSET, UnsetType

from .._schema import is_schema_module, protocol_module, schema_module_of
from .._vocabulary import Vocabulary, vocabulary

if TYPE_CHECKING:
    from acp_schema import v1, v2, v2_alpha0

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
    """Matches the module ``acp_schema.v1`` (by a concrete class of its own:
    pyright does not match a Protocol class against ``type[...]``)."""

    @property
    def InitializeRequest(self) -> type[v1.InitializeRequest]: ...


class _V2(Protocol):
    """Matches the module ``acp_schema.v2``."""

    @property
    def InitializeRequest(self) -> type[v2.InitializeRequest]: ...


def _vocab(version: object) -> Vocabulary:
    """The classes of ``version`` (a generated module; None: protocol v1),
    found through its method tables and tags (see `_vocabulary`)."""
    if version is None:
        version = protocol_module(1)
    if isinstance(version, types.ModuleType) and is_schema_module(version):
        return vocabulary(version)
    raise ValueError(f"version must be acp_schema.v1 or acp_schema.v2, not {version!r}")


def _v2() -> Vocabulary:
    return _vocab(protocol_module(2))


# --- content blocks ----------------------------------------------------------


@overload
def text_block(
    text: str, *, meta: Meta = UNSET, version: _V1 = ...
) -> v1.TextContent: ...
@overload
def text_block(text: str, *, meta: Meta = UNSET, version: _V2) -> v2.TextContent: ...
@overload
def text_block(text: str, *, meta: Meta = UNSET, version: types.ModuleType) -> Any: ...
def text_block(text: str, *, meta: Meta = UNSET, version: object = None) -> Any:
    """A text content block: ``text_block("hi")`` -> ``TextContent(text="hi")``."""
    return _vocab(version).content("text")(text=text, meta=meta)


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
    version: types.ModuleType,
) -> Any: ...
def resource_link(
    uri: str,
    name: str | None = None,
    *,
    title: str | UnsetType | None = UNSET,
    description: str | UnsetType | None = UNSET,
    mime_type: str | UnsetType | None = UNSET,
    size: int | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """A link to a resource; ``name`` defaults to the last segment of ``uri``.

    >>> resource_link("file:///src/main.py").name
    'main.py'
    """
    if name is None:
        name = uri.rstrip("/").rsplit("/", 1)[-1] or uri
    return _vocab(version).content("resource_link")(
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
@overload
def embedded_text_resource(
    uri: str,
    text: str,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: types.ModuleType,
) -> Any: ...
def embedded_text_resource(
    uri: str,
    text: str,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """A resource embedded with its text.

    >>> embedded_text_resource("file:///a.py", "x = 1", mime_type="text/x-python").resource.text
    'x = 1'
    """
    embedded, contents = _embedded(_vocab(version), "text")
    return embedded(
        resource=contents(uri=uri, text=text, mime_type=mime_type), meta=meta
    )


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
@overload
def embedded_blob_resource(
    uri: str,
    data: bytes,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: types.ModuleType,
) -> Any: ...
def embedded_blob_resource(
    uri: str,
    data: bytes,
    *,
    mime_type: str | UnsetType | None = UNSET,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """A binary resource embedded as base64.

    >>> embedded_blob_resource("file:///a.bin", b"\\x00\\x01").resource.blob
    'AAE='
    """
    embedded, contents = _embedded(_vocab(version), "blob")
    blob = base64.b64encode(data).decode("ascii")
    return embedded(
        resource=contents(uri=uri, blob=blob, mime_type=mime_type), meta=meta
    )


def _embedded(vocab: Vocabulary, body: str) -> tuple[Any, Any]:
    """The embedded resource block and its contents class holding ``body``."""
    embedded = vocab.content("resource")
    contents = vocab.with_field(
        vocab.field(embedded, "resource"), body, "embedded resource contents"
    )
    return embedded, contents


# --- message chunks and upserts ----------------------------------------------


def _chunk(
    tag: str, text: str, message_id: str | None, meta: Meta, vocab: Vocabulary
) -> Any:
    cls = vocab.update(tag)
    mid: str | UnsetType = UNSET if message_id is None else message_id
    if message_id is None and vocab.requires(cls, "messageId"):
        raise ValueError(f"v{vocab.version} message chunks need a message_id")
    return cls(content=vocab.content("text")(text=text), message_id=mid, meta=meta)


@overload
def agent_text(
    text: str, *, message_id: str | None = None, meta: Meta = UNSET, version: _V1 = ...
) -> v1.AgentMessageChunk: ...
@overload
def agent_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: _V2
) -> v2.AgentMessageChunk: ...
@overload
def agent_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: types.ModuleType
) -> Any: ...
def agent_text(
    text: str,
    *,
    message_id: str | None = None,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """An ``agent_message_chunk`` carrying text (v2 requires ``message_id``).

    >>> agent_text("Hello", message_id="m1").content.text
    'Hello'
    """
    return _chunk("agent_message_chunk", text, message_id, meta, _vocab(version))


@overload
def user_text(
    text: str, *, message_id: str | None = None, meta: Meta = UNSET, version: _V1 = ...
) -> v1.UserMessageChunk: ...
@overload
def user_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: _V2
) -> v2.UserMessageChunk: ...
@overload
def user_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: types.ModuleType
) -> Any: ...
def user_text(
    text: str,
    *,
    message_id: str | None = None,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """A ``user_message_chunk`` carrying text (e.g. when replaying a session)."""
    return _chunk("user_message_chunk", text, message_id, meta, _vocab(version))


@overload
def thought_text(
    text: str, *, message_id: str | None = None, meta: Meta = UNSET, version: _V1 = ...
) -> v1.AgentThoughtChunk: ...
@overload
def thought_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: _V2
) -> v2.AgentThoughtChunk: ...
@overload
def thought_text(
    text: str, *, message_id: str, meta: Meta = UNSET, version: types.ModuleType
) -> Any: ...
def thought_text(
    text: str,
    *,
    message_id: str | None = None,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """An ``agent_thought_chunk`` carrying text."""
    return _chunk("agent_thought_chunk", text, message_id, meta, _vocab(version))


MessageContent: TypeAlias = "str | Sequence[v2.ContentBlock] | UnsetType | None"


def _blocks(content: MessageContent) -> list[v2.ContentBlock] | UnsetType | None:
    if isinstance(content, str):
        return [_v2().content("text")(text=content)]
    if content is None or isinstance(content, UnsetType):
        return content
    return list(content)


def _message_vocab(content: MessageContent) -> Vocabulary:
    """The v2 draft of a message's blocks (``acp_schema.v2_alpha0`` blocks make
    a ``v2_alpha0`` message), else ``acp_schema.v2``."""
    if not isinstance(content, str | UnsetType) and content:
        module = schema_module_of(content[0])
        if module is not None:
            return vocabulary(module)
    return _v2()


def user_message(
    message_id: str, content: MessageContent = UNSET, *, meta: Meta = UNSET
) -> v2.UserMessage:
    """A v2 ``user_message`` upsert; a string becomes one text block.

    Leaving ``content`` out keeps the message's content (e.g. to change only
    ``_meta``); ``None`` or ``[]`` clears it.

    >>> user_message("u1", "What's the capital of France?").content[0].text
    "What's the capital of France?"
    """
    cls = _message_vocab(content).update("user_message")
    return cls(message_id=message_id, content=_blocks(content), meta=meta)  # type: ignore[no-any-return]


def agent_message(
    message_id: str, content: MessageContent = UNSET, *, meta: Meta = UNSET
) -> v2.AgentMessage:
    """A v2 ``agent_message`` upsert (whole content replaces what was streamed)."""
    cls = _message_vocab(content).update("agent_message")
    return cls(message_id=message_id, content=_blocks(content), meta=meta)  # type: ignore[no-any-return]


def agent_thought(
    message_id: str, content: MessageContent = UNSET, *, meta: Meta = UNSET
) -> v2.AgentThought:
    """A v2 ``agent_thought`` upsert."""
    cls = _message_vocab(content).update("agent_thought")
    return cls(message_id=message_id, content=_blocks(content), meta=meta)  # type: ignore[no-any-return]


# --- tool calls --------------------------------------------------------------


@overload
def tool_content(
    content: str | v1.ContentBlock, *, version: _V1 = ...
) -> v1.Content: ...
@overload
def tool_content(content: str | v2.ContentBlock, *, version: _V2) -> v2.Content: ...
@overload
def tool_content(
    content: str | v2.ContentBlock, *, version: types.ModuleType
) -> Any: ...
def tool_content(content: Any, *, version: object = None) -> Any:
    """Tool call content wrapping a content block (a string becomes text).

    >>> tool_content("3 files found").content.text
    '3 files found'
    """
    vocab = _vocab(version)
    block = vocab.content("text")(text=content) if isinstance(content, str) else content
    return vocab.tool_content("content")(content=block)


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
@overload
def diff(
    path: str,
    old_text: str | None,
    new_text: str,
    *,
    meta: Meta = UNSET,
    version: types.ModuleType,
) -> Any: ...
def diff(
    path: str,
    old_text: str | None,
    new_text: str,
    *,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """Diff content for a tool call; ``old_text=None`` for a new file.

    >>> diff("/src/config.json", '{"debug": false}', '{"debug": true}').path
    '/src/config.json'
    """
    return _vocab(version).tool_content("diff")(
        path=path, old_text=old_text, new_text=new_text, meta=meta
    )


def terminal(terminal_id: str, *, meta: Meta = UNSET) -> v1.Terminal:
    """v1 tool call content embedding a terminal made with ``terminal/create``.

    (v2 has no terminal content.)

    >>> terminal("term_1").terminal_id
    'term_1'
    """
    cls = _vocab(None).tool_content("terminal")
    return cls(terminal_id=terminal_id, meta=meta)  # type: ignore[no-any-return]


def _locations(vocab: Vocabulary, locations: Any) -> Any:
    if locations is None or isinstance(locations, UnsetType):
        return locations
    location = vocab.member(vocab.update("tool_call_update"), "locations")
    return [location(path=loc) if isinstance(loc, str) else loc for loc in locations]


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
    version: types.ModuleType,
) -> Any: ...
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
    version: object = None,
) -> Any:
    """Report a new tool call: v1 ``tool_call``, v2 a first ``tool_call_update``.

    ``locations`` may be plain paths.

    >>> call = tool_call("call_1", "Read config", kind="read", locations=["/etc/app.toml"])
    >>> call.status, call.locations[0].path
    ('pending', '/etc/app.toml')
    """
    vocab = _vocab(version)
    # Where there is no ``tool_call`` update (v2), a first ``tool_call_update``
    # creates the tool call.
    tag = "tool_call" if vocab.has_update("tool_call") else "tool_call_update"
    return vocab.update(tag)(
        tool_call_id=tool_call_id,
        title=title,
        kind=kind,
        status=status,
        content=_seq(content),
        locations=_locations(vocab, locations),
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
    version: types.ModuleType,
) -> Any: ...
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
    version: object = None,
) -> Any:
    """A ``tool_call_update`` patch: fields left out stay unchanged, ``None`` clears.

    >>> update = tool_call_update("call_1", status="completed", content=[tool_content("ok")])
    >>> update.status, update.title
    ('completed', UNSET)
    """
    vocab = _vocab(version)
    return vocab.update("tool_call_update")(
        tool_call_id=tool_call_id,
        status=status,
        title=title,
        kind=kind,
        content=_seq(content),
        locations=_locations(vocab, locations),
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
@overload
def plan_entry(
    content: str,
    *,
    priority: v2.PlanEntryPriority = "medium",
    status: v2.PlanEntryStatus = "pending",
    meta: Meta = UNSET,
    version: types.ModuleType,
) -> Any: ...
def plan_entry(
    content: str,
    *,
    priority: str = "medium",
    status: str = "pending",
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """One plan entry (priority ``medium`` and status ``pending`` by default).

    >>> plan_entry("Write tests", priority="high").priority
    'high'
    """
    return _plan_entry(_vocab(version))(
        content=content, priority=priority, status=status, meta=meta
    )


def _plan_items(vocab: Vocabulary) -> Any:
    """v2's plan content with entries (``plan_update`` with ``type: items``)."""
    content = vocab.field(vocab.update("plan_update"), "plan")
    return vocab.variant(content, "items", "plan content")


def _plan_entry(vocab: Vocabulary) -> Any:
    if vocab.has_update("plan"):  # v1: one plan, replaced whole
        return vocab.member(vocab.update("plan"), "entries")
    return vocab.member(_plan_items(vocab), "entries")


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
@overload
def plan(
    entries: Sequence[v2.PlanEntry | str],
    *,
    plan_id: str,
    meta: Meta = UNSET,
    version: types.ModuleType,
) -> Any: ...
def plan(
    entries: Sequence[Any],
    *,
    plan_id: str | None = None,
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """The whole plan: v1 ``plan``; v2 ``plan_update`` with ``items`` and ``plan_id``.

    Strings become pending, medium-priority entries.

    >>> [e.content for e in plan(["Read", plan_entry("Fix", status="in_progress")]).entries]
    ['Read', 'Fix']
    """
    vocab = _vocab(version)
    entry = _plan_entry(vocab)
    items = [
        entry(content=e, priority="medium", status="pending")
        if isinstance(e, str)
        else e
        for e in entries
    ]
    if vocab.has_update("plan"):
        return vocab.update("plan")(entries=items, meta=meta)
    if plan_id is None:
        raise ValueError(f"a v{vocab.version} plan needs a plan_id")
    cls = _plan_items(vocab)
    # the plan id is ``id`` in v2's first drafts, ``planId`` in later ones and v1
    key = "plan_id" if "plan_id" in cls.__struct_fields__ else "id"
    plan_items = cls(**{key: plan_id}, entries=items)
    return vocab.update("plan_update")(plan=plan_items, meta=meta)


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
@overload
def usage_update(
    used: int,
    size: int,
    *,
    cost: float | None = None,
    currency: str = "USD",
    meta: Meta = UNSET,
    version: types.ModuleType,
) -> Any: ...
def usage_update(
    used: int,
    size: int,
    *,
    cost: float | None = None,
    currency: str = "USD",
    meta: Meta = UNSET,
    version: object = None,
) -> Any:
    """Context window use in tokens, and optionally the session's cumulative cost.

    >>> usage_update(53000, 200000, cost=0.045).cost.currency
    'USD'
    """
    vocab = _vocab(version)
    usage = vocab.update("usage_update")
    cost_class = vocab.member(usage, "cost")
    cost_value = UNSET if cost is None else cost_class(amount=cost, currency=currency)
    return usage(used=used, size=size, cost=cost_value, meta=meta)


# --- the notification --------------------------------------------------------


@overload
def notification(
    session_id: str, update: v1.SessionUpdate, *, meta: Meta = UNSET
) -> v1.SessionNotification: ...
@overload
def notification(
    session_id: str, update: v2.SessionUpdate, *, meta: Meta = UNSET
) -> v2.UpdateSessionNotification: ...
@overload
def notification(
    session_id: str, update: v2_alpha0.SessionUpdate, *, meta: Meta = UNSET
) -> v2_alpha0.SessionNotification: ...
def notification(session_id: str, update: Any, *, meta: Meta = UNSET) -> Any:
    """Wrap an update in the ``session/update`` params of its own version.

    >>> notification("s1", agent_text("hi")).session_id
    's1'
    """
    module = schema_module_of(update)
    if module is None:
        raise TypeError(f"not an acp_schema session update: {update!r}")
    cls = vocabulary(module).notification
    return cls(session_id=session_id, update=update, meta=meta)
