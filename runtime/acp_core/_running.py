"""Incoming requests accepted and not answered yet, by id.

:class:`RunningRequests` owns them: a request is added when it is accepted
(it may still wait in the ordered queue: ``OrderedQueue.waiting`` counts
those) and removed when it is done, only if the id is still its own (a
late answer to an id reused by the peer does not forget the new request).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._jsonrpc import Id
from ._records import Running

__all__ = ["RunningRequests"]


class RunningRequests:
    """The peer's requests this side accepted, by id."""

    __slots__ = ("by_id", "view")

    def __init__(self) -> None:
        self.by_id: dict[Id, Running] = {}
        #: The same, read-only (``Engine.running_requests``).
        self.view: Mapping[Id, Running] = MappingProxyType(self.by_id)

    def __len__(self) -> int:
        return len(self.by_id)

    def __contains__(self, ident: object) -> bool:
        return ident in self.by_id

    def get(self, ident: Id) -> Running | None:
        return self.by_id.get(ident)

    def add(self, ident: Id, running: Running) -> None:
        """``running`` was accepted under ``ident``."""
        self.by_id[ident] = running

    def remove(self, ident: Id, running: Running) -> None:
        """``running`` is done: forget it, if ``ident`` is still its."""
        if self.by_id.get(ident) is running:
            del self.by_id[ident]
