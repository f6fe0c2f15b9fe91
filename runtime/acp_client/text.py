"""Text from the agent made safe for a terminal, and small readers of the
generated types shared by the other modules."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import acp_trio
import msgspec
from acp_schema import v1
from acp_schema import v2_alpha0 as v2
from msgspec import UnsetType

if TYPE_CHECKING:  # types of the schema as generated now (v2 is a draft:
    # the code below reads what a later draft moves, so a bump leaves it running)
    Notification: TypeAlias = v1.SessionNotification | v2.SessionNotification
    Option: TypeAlias = v1.PermissionOption | v2.PermissionOption
    Init: TypeAlias = v1.InitializeResponse | v2.InitializeResponse
T = TypeVar("T")


class Failure(Exception):
    """An error shown as one line (plus ``details``), exit status ``status``."""

    def __init__(self, message: str, details: Sequence[str] = (), status: int = 1):
        super().__init__(message)
        self.details = list(details)
        self.status = status


# -- text from the agent, made safe for a terminal ----------------------------------

# Control characters but newline and tab (C0, DEL, C1: ESC starts clear-screen,
# OSC title/clipboard and hidden-text sequences, 0x9b/0x9d are their 8-bit
# forms), the bidi overrides that reorder what a line shows, and lone
# surrogates (undecodable JSON escapes, which no terminal encoding takes).
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)


def visible(text: str) -> str:
    """``text`` safe for a terminal: control and escape sequences shown, not run.

    Each unsafe character is written as its escape (``\\x1b``, ``\\u202e``);
    newlines and tabs stay, a CR of a CRLF pair is dropped.
    """
    text = text.replace("\r\n", "\n")
    return UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def tag_of(value: object) -> str:
    """The wire tag of a union variant (``sessionUpdate``, ``type``...)."""
    tag: object = getattr(value, "tag", None)  # a variant kept raw
    if not isinstance(tag, str):
        config: object = getattr(type(value), "__struct_config__", None)
        tag = getattr(config, "tag", None)
    return tag if isinstance(tag, str) else type(value).__name__


def text_of(block: object) -> str:
    """A content block or tool call content as display text."""
    if isinstance(block, v1.TextContent | v2.TextContent):
        return block.text
    if isinstance(block, v1.Content | v2.Content):
        return text_of(block.content)
    if isinstance(block, v1.ResourceLink | v2.ResourceLink):
        return f"[link {block.name}: {block.uri}]"
    if isinstance(block, v1.EmbeddedResource | v2.EmbeddedResource):
        return f"[resource {block.resource.uri}]"
    if isinstance(block, v1.Diff | v2.Diff):
        return f"[diff {block.path}]"
    if isinstance(block, v1.Terminal):
        return f"[terminal {block.terminal_id}]"
    if isinstance(block, v1.ImageContent | v2.ImageContent):
        return "[image]"
    if isinstance(block, v1.AudioContent | v2.AudioContent):
        return "[audio]"
    return f"[{tag_of(block)}]"  # a variant this client does not show


def present(value: object) -> bool:
    return value is not None and not isinstance(value, UnsetType)


def optional(value: T | UnsetType | None) -> T | None:
    """An optional field's value, ``None`` when absent or null."""
    return None if isinstance(value, UnsetType) else value


#: Characters of an error's ``data`` shown at most.
MAX_ERROR_DATA = 300


def error_text(exc: acp_trio.RequestError) -> str:
    """``message (code): data``, the data as compact JSON (bounded)."""
    text = f"{exc.message} ({exc.code})"
    if isinstance(exc.data, UnsetType):
        return text
    try:
        data = msgspec.json.encode(exc.data).decode()
    except (TypeError, msgspec.EncodeError):
        data = repr(exc.data)
    if len(data) > MAX_ERROR_DATA:
        data = data[:MAX_ERROR_DATA] + "..."
    return f"{text}: {data}"
