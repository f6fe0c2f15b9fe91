"""File paths in the protocol are absolute."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp_core import is_absolute_anywhere

from .._message import Message, sender_of
from .._spec import REFS, SpecRef
from .._state import ConnectionState
from ._base import Breach, Scope, scope

#: method -> the params holding a path (a list for arrays of paths)
PATH_FIELDS: dict[str, tuple[str, ...]] = {
    "session/new": ("cwd", "additionalDirectories[]"),
    "session/load": ("cwd", "additionalDirectories[]"),
    "session/resume": ("cwd", "additionalDirectories[]"),
    "session/fork": ("cwd", "additionalDirectories[]"),
    "session/list": ("cwd",),
    "fs/read_text_file": ("path",),
    "fs/write_text_file": ("path",),
    "terminal/create": ("cwd",),
}
#: Absolute on some platform (POSIX, a Windows drive, a UNC path) and no NUL:
#: acp_core's sender rule (the receiver decides for its own host; the wire
#: rule is that the path is not relative).
is_absolute = is_absolute_anywhere


#: The messages the rule looks at.
SCOPE: Scope = scope("both", "request")


@dataclass(frozen=True, slots=True)
class RelativePath:
    """A relative (or NUL-holding) ``cwd``, ``additionalDirectories`` entry,
    ``fs/*`` ``path`` or ``terminal/create`` ``cwd``."""

    key: str = "relative-path"
    spec: SpecRef = REFS["absolute-paths"]
    applies_to: Scope = SCOPE

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        if msg.kind != "request":
            return None
        for name in PATH_FIELDS.get(msg.method or "", ()):
            values: Any
            if name.endswith("[]"):
                name = name[:-2]
                values = msg.params.get(name) or []
            else:
                values = [msg.params[name]] if name in msg.params else []
            for value in values if isinstance(values, list) else []:  # pyright: ignore[reportUnknownVariableType]
                if isinstance(value, str) and not is_absolute(value):
                    return Breach(
                        f"{sender_of(msg.direction)} sent {msg.method} with relative "
                        f"{name} {value[:80]!r}"
                    )
        return None
