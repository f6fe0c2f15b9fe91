"""One question per operation: what the user already allowed for a tool call.

An agent often asks ``session/request_permission`` for a tool call and then
carries the call out with ``fs/write_text_file`` or ``terminal/create``.  The
permission the user gave covers that request: it is not asked again.  The
request is matched to the tool call by what both name: the file's path (the
tool call's ``locations``, or a string of its ``rawInput``) or the command
line (a string of its ``rawInput``, or its title without backticks).  A grant
covers one operation; an operation no grant covers is asked once.

Pure rules over plain values: testable without an event loop.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import cast

#: Grants kept per client at most (the oldest go first).
MAX_GRANTS = 64
#: Strings of a tool call's ``rawInput`` looked at, at most.
MAX_STRINGS = 256


@dataclass
class Grant:
    """An allowed tool call, and the operations it names."""

    session_id: str
    tool_call_id: str
    paths: set[str] = field(default_factory=set[str])
    commands: set[str] = field(default_factory=set[str])


def strings_of(value: object, depth: int = 0) -> Iterator[str]:
    """The strings inside a JSON value (bounded depth)."""
    if isinstance(value, str):
        yield value
    elif depth < 4 and isinstance(value, dict):
        for item in cast("dict[object, object]", value).values():
            yield from strings_of(item, depth + 1)
    elif depth < 4 and isinstance(value, list | tuple):
        for item in cast("list[object]", value):
            yield from strings_of(item, depth + 1)


def grant_for(
    session_id: str,
    tool_call_id: str,
    title: str | None,
    locations: Iterable[str],
    raw_input: object,
) -> Grant:
    """What an allowed tool call names: paths (absolute) and command lines."""
    grant = Grant(session_id, tool_call_id)
    texts = list(islice(strings_of(raw_input), MAX_STRINGS))
    grant.paths = {
        os.path.normpath(p) for p in [*locations, *texts] if os.path.isabs(p)
    }
    grant.commands = {t.strip() for t in texts if t.strip()}
    if title and title.strip("` "):
        grant.commands.add(title.strip().strip("`").strip())
    return grant


class Grants:
    """The grants not used yet, oldest first."""

    def __init__(self) -> None:
        self.grants: list[Grant] = []

    def allow(self, grant: Grant) -> None:
        self.grants = [
            g
            for g in self.grants
            if (g.session_id, g.tool_call_id) != (grant.session_id, grant.tool_call_id)
        ]
        self.grants = [*self.grants, grant][-MAX_GRANTS:]

    def take(self, grant: Grant) -> str:
        self.grants.remove(grant)
        return grant.tool_call_id

    def write(self, session_id: str, path: str) -> str | None:
        """The tool call whose grant covers writing ``path`` (used up), if any."""
        wanted = os.path.normpath(path)
        for grant in self.grants:
            if grant.session_id == session_id and wanted in grant.paths:
                return self.take(grant)
        return None

    def command(self, session_id: str, lines: Iterable[str]) -> str | None:
        """The tool call whose grant covers running one of ``lines``, if any."""
        wanted = {line.strip() for line in lines}
        for grant in self.grants:
            if grant.session_id == session_id and wanted & grant.commands:
                return self.take(grant)
        return None
