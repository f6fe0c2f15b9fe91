"""What a rule is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .._message import Message
from .._spec import SpecRef
from .._state import ConnectionState

__all__ = ["Breach", "Rule"]


@dataclass(frozen=True, slots=True)
class Breach:
    """What a rule found: one line of text, and the spec line when it is not
    the rule's own (a rule covering several methods cites each one's)."""

    text: str
    spec: SpecRef | None = None


class Rule(Protocol):
    """One requirement: ``key`` names it in reports, ``spec`` is the line it checks."""

    @property
    def key(self) -> str: ...

    @property
    def spec(self) -> SpecRef: ...

    def check(self, state: ConnectionState, msg: Message) -> Breach | None:
        """Why ``msg`` breaks the requirement, or ``None``."""
        ...
