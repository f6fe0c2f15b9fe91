"""Calls of ours waiting for the peer, and who waits for them.

:class:`PendingCalls` owns the ids of our requests, the calls not answered
yet by id, and how many callers inside a handler wait (the bounds those
handlers hold do not stop reading while they wait: ``ReadGate``).  Its
methods keep these in step: a call is counted from :meth:`register` until
its caller leaves (:meth:`left`), whether the answer came or not.
"""

from __future__ import annotations

from collections.abc import Iterator

from ._jsonrpc import Id
from ._records import Call

__all__ = ["PendingCalls"]


class PendingCalls:
    """Our calls by id until answered; the callers waiting in handlers."""

    __slots__ = ("by_id", "in_notifications", "in_requests", "next_id")

    def __init__(self) -> None:
        self.by_id: dict[Id, Call] = {}
        self.next_id = 0
        #: Callers waiting for an answer inside a request handler, and
        #: inside the notification handler.
        self.in_requests = 0
        self.in_notifications = 0

    def __len__(self) -> int:
        return len(self.by_id)

    def __contains__(self, ident: object) -> bool:
        return ident in self.by_id

    def __iter__(self) -> Iterator[Call]:
        return iter(self.by_id.values())

    def new_id(self) -> int:
        """The id of our next request."""
        ident = self.next_id
        self.next_id = ident + 1
        return ident

    def register(self, call: Call) -> None:
        """``call`` was sent: wait for its answer."""
        self.by_id[call.id] = call
        if call.exempt:
            self.in_notifications += 1
        elif call.in_request:
            self.in_requests += 1

    def answered(self, ident: Id) -> Call | None:
        """The call ``ident`` answers, no longer pending (``None``: unknown)."""
        return self.by_id.pop(ident, None)

    def left(self, call: Call) -> bool:
        """The caller of ``call`` resumed or left; whether its answer never came."""
        if call.exempt:
            self.in_notifications -= 1
        elif call.in_request:
            self.in_requests -= 1
        return self.by_id.pop(call.id, None) is not None

    def fail_all(self, error: BaseException) -> None:
        """Fail every call waiting for its answer."""
        pending, self.by_id = self.by_id, {}
        for call in pending.values():
            call.fail(error)
