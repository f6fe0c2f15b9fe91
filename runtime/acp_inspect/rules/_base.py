"""What a rule is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .._message import AGENT, CLIENT, Direction, Kind, Message
from .._spec import Level, SpecRef
from .._state import ConnectionState

__all__ = ["ALL_MESSAGES", "Breach", "Rule", "Scope", "scope"]

#: Which messages a rule looks at: (direction, kind) pairs.
Scope = frozenset[tuple[Direction, Kind]]


def scope(directions: str, *kinds: Kind) -> Scope:
    """``scope("agent", "request")``: ``directions`` is ``"client"`` (lines
    to the agent), ``"agent"`` (lines from it) or ``"both"``."""
    ds: tuple[Direction, ...]
    if directions == "client":
        ds = (CLIENT,)
    elif directions == "agent":
        ds = (AGENT,)
    else:
        ds = (CLIENT, AGENT)
    return frozenset((d, k) for d in ds for k in kinds)


#: Every message.
ALL_MESSAGES: Scope = scope("both", "request", "notification", "response")


@dataclass(frozen=True, slots=True)
class Breach:
    """What a rule found: one line of text, the spec line when it is not
    the rule's own (a rule covering several methods cites each one's), and
    the level when the cited line supports less than its own keyword (a
    reading of the line, not what it says)."""

    text: str
    spec: SpecRef | None = None
    level: Level | None = None


class Rule(Protocol):
    """One requirement: ``key`` names it in reports, ``spec`` is the line it checks."""

    @property
    def key(self) -> str: ...

    @property
    def spec(self) -> SpecRef: ...

    @property
    def applies_to(self) -> Scope:
        """The messages :meth:`check` can find fault with; the inspector
        skips the rule for the others (``check`` itself still guards)."""
        ...

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        """Why ``msg`` breaks the requirement, or ``None``."""
        ...
